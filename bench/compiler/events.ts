// Deterministic benchmark events: a seeded generator, so every run and every
// engine sees the same inputs. Shapes vary the way real traffic does (logins
// without payment, missing signals, a few trusted and blocked users).

import type { RulesetInput } from '../../compiler/index.js';

/** mulberry32: small, fast, seeded. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const kNow = Date.parse('2026-11-20T12:00:00Z');

export function benchEvents(count: number, seed = 42): RulesetInput[] {
  const rnd = prng(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  const maybe = <T>(p: number, v: T): T | undefined => (rnd() < p ? v : undefined);
  const out: RulesetInput[] = [];
  for (let i = 0; i < count; i++) {
    const type = pick(['payment', 'payment', 'payment', 'login', 'payout', 'deposit', 'registration', 'withdrawal'] as const);
    const money = type !== 'login' && type !== 'registration';
    const event: Record<string, unknown> = {
      event_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      event_type: type,
      external_account_id: `acct_${int(500)}`,
      context: {
        ip: `10.0.${int(256)}.${int(256)}`,
        country: pick(['US', 'US', 'DE', 'FR', 'GB', 'NG']),
        user_agent: pick([
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
          'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
          'python-requests/2.31.0',
          'Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36',
        ]),
        fp_id: `fp_${int(300)}`,
        session_anon: rnd() < 0.05,
      },
      user: {
        email: `user${int(1000)}@example.com`,
        phone: '+14155550100',
        country: pick(['US', 'us', 'DE', 'FR', 'GB']),
        registered_at: new Date(kNow - int(400) * 3_600_000).toISOString(),
        trusted: rnd() < 0.02,
        vip: maybe(0.3, rnd() < 0.02),
        is_known_fraud: rnd() < 0.01,
        chargeback_flag: maybe(0.5, false),
        name_blocked: false,
        sanctions_match: maybe(0.5, rnd() < 0.005),
      },
    };
    if (money) {
      event.payment = {
        amount_cents: pick([500, 2500, 9900, 49_999, 50_000, 120_000, 250_000, 750_000]),
        currency: 'USD',
        method: 'card',
        bin: '411111',
        last4: '1111',
        billing_country: maybe(0.8, pick(['US', 'DE', 'fr', 'GB'])),
        card_token: `tok_${int(400)}`,
      };
    }
    const signals: Record<string, unknown> = {
      velocity: {
        card_1h: int(7), card_24h: int(14), ip_1h: int(15), ip_24h: int(70), account_1h: int(7),
        account_24h: int(25), email_1h: int(7), email_24h: int(25), fp_1h: int(7), fp_24h: int(25),
        account_amount_24h: int(2_000_000), card_amount_24h: int(1_500_000),
      },
      links: { email: int(2), phone: int(2), fp: int(5), ip_24h: int(4), card: int(3), total: int(8), fraud: rnd() < 0.1 ? 1 + int(3) : 0 },
      account: {
        known: rnd() < 0.9, age_days: rnd() * 400, events: int(60), blocks: rnd() < 0.1 ? 1 : 0,
        reviews: int(3), fraud_confirmed: rnd() < 0.01,
      },
      phone: { present: true, valid: rnd() < 0.9, parseable: rnd() < 0.95, country: pick(['US', 'DE']), type: pick(['mobile', 'fixed_line', 'voip']) },
      email: { present: true, valid: rnd() < 0.95, disposable: rnd() < 0.05, free_provider: rnd() < 0.5, domain: 'example.com' },
    };
    // Some events arrive before the signals were computed.
    if (rnd() < 0.1) delete signals.links;
    if (rnd() < 0.1) delete signals.phone;
    out.push({ event, signals, now: kNow });
  }
  return out;
}
