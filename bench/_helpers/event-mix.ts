// Realistic events for load: a mix of types, ~40% with an account (and its email and phone), IPs,
// devices and cards drawn from bounded pools so that velocity and links see repeats, as real
// traffic does. Deterministic for a seed. `harsh`: every event with an account brings a new device
// and a new card, as http/events.lua does with FS_HARSH=1.
import { randomUUID } from 'node:crypto';

const kTypes = ['payment', 'payment', 'payment', 'login', 'login', 'registration', 'deposit', 'withdrawal', 'payout'];
const kCountries = ['DE', 'FR', 'GB', 'US', 'NL', 'ES', 'IT', 'PL'];
const kBins = ['411111', '555555', '378282', '601111', '424242'];
/** Active accounts: an account returns every few dozen events, as on a live site. */
const kAccounts = 20_000;

/** xorshift32: cheap and deterministic. */
export function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

export function eventMix(seed = 42, options: { async?: boolean; harsh?: boolean } = {}): () => string {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  // New in every run, as the Lua script's: values a database kept from an earlier run are not new.
  const run = randomUUID().slice(0, 8);
  let fresh = 0;
  return () => {
    const type = pick(kTypes);
    const event: Record<string, unknown> = { event_id: randomUUID(), event_type: type };
    if (options.async) event.async = true;
    // Anonymous traffic comes from a pool of 200k addresses; an account mostly from its own few.
    const hasAccount = next() < 0.4;
    const account = Math.floor(next() * kAccounts);
    const ipIndex = hasAccount && next() < 0.9 ? account * 3 + Math.floor(next() * 3) : 150_000 + Math.floor(next() * 200_000);
    const ip = `10.${(ipIndex >> 16) & 255}.${(ipIndex >> 8) & 255}.${ipIndex & 255}`;
    event.context = { ip, user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36', session_id: `s${Math.floor(next() * 1e9)}` };
    // A device and a card belong to one account (now and then shared); anonymous traffic draws from pools.
    if (options.harsh && hasAccount) (event.context as Record<string, unknown>).fp_id = `fp_h${run}_${++fresh}`;
    else if (next() < 0.6) (event.context as Record<string, unknown>).fp_id = hasAccount && next() < 0.95 ? `fp_a${account}` : `fp_${Math.floor(next() * 80_000)}`;
    if (hasAccount) {
      const country = kCountries[account % kCountries.length]!;
      event.external_account_id = `user-${account}`;
      event.user = {
        email: `user${account}@example${account % 7}.com`,
        phone: `+4915${String(10_000_000 + account * 37).padStart(9, '0')}`,
        country,
        registered_at: new Date(Date.UTC(2024, account % 12, 1 + (account % 28))).toISOString(),
      };
    }
    if (options.harsh && hasAccount) {
      event.payment = {
        amount_cents: 100 + Math.floor(next() * 200_000),
        currency: 'EUR',
        method: 'card',
        bin: String(40_000_000 + Math.floor(next() * 20_000_000)),
        last4: String(Math.floor(next() * 10_000)).padStart(4, '0'),
        billing_country: pick(kCountries),
        card_token: `tok_h${run}_${fresh}`,
      };
    } else if (type === 'payment' || type === 'deposit' || type === 'withdrawal' || type === 'payout') {
      const card = hasAccount && next() < 0.95 ? 100_000 + account : Math.floor(next() * 30_000);
      event.payment = {
        amount_cents: 100 + Math.floor(next() * 200_000),
        currency: 'EUR',
        method: 'card',
        bin: kBins[card % kBins.length],
        last4: String(1000 + (card % 9000)),
        billing_country: pick(kCountries),
        card_token: `tok_${card}`,
      };
    }
    return JSON.stringify(event);
  };
}
