// The velocity windows (src/signals/velocity.ts) holding a day of keys, in memory only: bytes per
// key (held, with the columns' room to grow, and used), the share of keys that sum amounts (card
// and account keys), µs per event read and recorded, and the sweep of a day's keys gone idle at
// once. The accounts are those of state/hot-state.bench.ts: each has its own email, card and
// account key, shares a device with 3 others and an IP with 7, and makes two events spread over
// the day.
//
//   node dist/bench/state/velocity-memory.bench.js        (after npm run build; ~10 s)
//   BENCH_ACCOUNTS=1000000 node dist/bench/state/velocity-memory.bench.js
import { randomBytes } from 'node:crypto';
import { VelocityHashes, VelocityWindows, type VelocityKeys } from '../../src/signals/velocity.js';
import { KeyHasher } from '../../src/state/keys.js';

const kAccounts = Number(process.env.BENCH_ACCOUNTS ?? 200_000);
const kEventsPerAccount = 2;
const kT0 = Date.UTC(2026, 10, 23, 0);
const kDayMs = 24 * 60 * 60_000;

const count = (n: number): string => n.toLocaleString('en-US');

function keysOf(account: number): VelocityKeys {
  return {
    cardToken: `card-${account}`, ip: `ip-${account >> 3}`,
    accountId: `acc-${account}`, email: `user${account}@example.com`, fp: `fp-${account >> 2}`,
  };
}

function main(): void {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  const events = kAccounts * kEventsPerAccount;
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  for (let n = 0; n < events; n++) {
    const account = n % kAccounts;
    const at = kT0 + Math.floor((n / events) * kDayMs);
    const keys = keysOf(account);
    const hashes = new VelocityHashes();
    windows.read('project', keys, at, hashes);
    windows.record('project', keys, 1_000 + (n % 9_000), at, hashes);
  }
  const ms = performance.now() - started;
  const keys = windows.size;
  // Card and account keys sum amounts: one of each per account.
  const withAmounts = 2 * kAccounts;
  const { held, used } = windows.bytes;
  console.log(`${count(events)} events of ${count(kAccounts)} accounts over a day: ${count(keys)} keys, ${count(withAmounts)} of them with amounts (${((withAmounts / keys) * 100).toFixed(0)} %)`);
  console.log(`held: ${(held / 1048576).toFixed(1)} MiB, ${(held / keys).toFixed(1)} B per key (the columns' room to grow included; they double)`);
  console.log(`used: ${(used / 1048576).toFixed(1)} MiB, ${(used / keys).toFixed(1)} B per key (slots handed out, and the index's tables)`);
  console.log(`RSS grew by ${((process.memoryUsage().rss - rssBefore) / 1048576).toFixed(0)} MiB (room not yet written is not resident; strings made on the way not yet collected are)`);
  console.log(`read + record: ${((ms * 1000) / events).toFixed(2)} µs per event (5 keys, the read's hashes reused)`);
  // A day later every key is idle at once; the server sweeps them a part at a time (sweepNext).
  let swept = 0;
  let longest = 0;
  const sweepStarted = performance.now();
  for (let step = 0; step < VelocityWindows.sweepSteps; step++) {
    const stepStarted = performance.now();
    swept += windows.sweepNext(kT0 + 2 * kDayMs + 1);
    longest = Math.max(longest, performance.now() - stepStarted);
  }
  const sweepMs = performance.now() - sweepStarted;
  console.log(`a day later: ${count(swept)} idle keys dropped in ${VelocityWindows.sweepSteps} calls of sweepNext, ${sweepMs.toFixed(0)} ms in all, the longest ${longest.toFixed(1)} ms`);
}

main();
