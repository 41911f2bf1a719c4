// The in-memory velocity windows as a pure structure: sliding windows, amounts, late events,
// sweeping and slot reuse, growth.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { VelocityHashes, VelocityWindows, type VelocityKeys } from '../../src/signals/velocity.js';
import { KeyHasher } from '../../src/state/keys.js';
import { partBuffers } from '../../src/state/slots.js';

const kMinute = 60_000;
const kHour = 60 * kMinute;
const start = Date.UTC(2026, 10, 20, 10, 0, 0);
const keys = (card: string | null, extra: Partial<VelocityKeys> = {}): VelocityKeys => ({ cardToken: card, ip: null, accountId: null, email: null, fp: null, ...extra });

test('events count in the hour and the day; amounts in the day', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  windows.record('p', keys('tok', { accountId: 'acc' }), 100, start);
  windows.record('p', keys('tok', { accountId: 'acc' }), 250, start + kMinute);
  const now = windows.read('p', keys('tok', { accountId: 'acc', ip: '1.2.3.4' }), start + 2 * kMinute);
  t.deepEqual(now, { card_1h: 2, card_24h: 2, card_amount_24h: 350, ip_1h: 0, ip_24h: 0, account_1h: 2, account_24h: 2, account_amount_24h: 350 });
  const later = windows.read('p', keys('tok'), start + 70 * kMinute);
  t.is(later.card_1h, 0, 'out of the hour after 60 minutes (5-minute steps)');
  t.is(later.card_24h, 2);
  const nextDay = windows.read('p', keys('tok'), start + 25 * kHour);
  t.deepEqual([nextDay.card_1h, nextDay.card_24h, nextDay.card_amount_24h], [0, 0, 0]);
});

test('amounts leave the day in 1-hour steps; a late amount counts only where its hour is still in the day', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  windows.record('p', keys('tok', { accountId: 'acc' }), 100, start);
  windows.record('p', keys('tok', { accountId: 'acc' }), 50, start + 30 * kMinute);
  const lastMinute = windows.read('p', keys('tok', { accountId: 'acc' }), start + 24 * kHour - kMinute);
  t.deepEqual([lastMinute.card_amount_24h, lastMinute.account_amount_24h, lastMinute.card_1h], [150, 150, 0]);
  const dayLater = windows.read('p', keys('tok', { accountId: 'acc' }), start + 24 * kHour);
  t.deepEqual([dayLater.card_24h, dayLater.card_amount_24h, dayLater.account_amount_24h], [0, 0, 0]);
  windows.record('p', keys('tok'), 7, start + 2 * kHour);
  windows.record('p', keys('tok'), 9, start + 30 * kMinute);
  const late = windows.read('p', keys('tok'), start + 24 * kHour);
  t.deepEqual([late.card_24h, late.card_amount_24h], [1, 7]);
});

test('absent keys give no field; keys of other projects and kinds do not mix', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  windows.record('p', keys('same', { email: 'same' }), 1, start);
  t.deepEqual(windows.read('q', keys('same'), start), { card_1h: 0, card_24h: 0, card_amount_24h: 0 });
  t.deepEqual(windows.read('p', keys(null, { fp: 'same' }), start), { fp_1h: 0, fp_24h: 0 });
  t.deepEqual(windows.read('p', keys(null), start), {});
});

test('a late event counts where its bucket is still in the window', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  windows.record('p', keys('tok'), 0, start + 3 * kHour);
  windows.record('p', keys('tok'), 0, start + 2 * kHour);
  windows.record('p', keys('tok'), 0, start - 30 * kHour);
  const read = windows.read('p', keys('tok'), start + 3 * kHour);
  t.is(read.card_1h, 1);
  t.is(read.card_24h, 2);
});

test('sweeping drops keys idle for a day; a reused slot starts empty', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  for (let i = 0; i < 5000; i++) windows.record('p', keys(`tok${i}`, { accountId: `acc${i}` }), i, start);
  windows.record('p', keys('fresh'), 7, start + 23 * kHour);
  t.is(windows.size, 10_001);
  t.is(windows.sweep(start + 25 * kHour), 10_000);
  t.is(windows.size, 1);
  windows.record('p', keys('new'), 5, start + 25 * kHour);
  t.deepEqual(windows.read('p', keys('new'), start + 25 * kHour), { card_1h: 1, card_24h: 1, card_amount_24h: 5 });
  t.is(windows.read('p', keys('tok42'), start + 25 * kHour).card_24h, 0);
});

test('sweepNext sweeps a part of the keys per call, and sweepSteps calls sweep them all', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  for (let i = 0; i < 5000; i++) windows.record('p', keys(`tok${i}`, { accountId: `acc${i}` }), i, start);
  windows.record('p', keys('fresh'), 7, start + 23 * kHour);
  const dropped: number[] = [];
  for (let step = 0; step < VelocityWindows.sweepSteps; step++) dropped.push(windows.sweepNext(start + 25 * kHour));
  t.is(dropped.reduce((sum, n) => sum + n, 0), 10_000);
  t.true(Math.max(...dropped) < 200, `at most ${Math.max(...dropped)} in one call`);
  t.is(windows.size, 1);
  t.is(windows.read('p', keys('fresh'), start + 25 * kHour).card_24h, 1);
  t.is(windows.read('p', keys('tok42'), start + 25 * kHour).card_24h, 0);
  // The turn goes on where it stopped: the next round finds nothing more to drop.
  t.is(windows.sweepNext(start + 25 * kHour), 0);
});

test('thousands of keys beyond the first arena stay apart', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  for (let i = 0; i < 3000; i++) for (let n = 0; n <= i % 7; n++) windows.record('p', keys(`tok${i}`), 10, start + n);
  for (const i of [0, 1, 1023, 1024, 2047, 2999]) {
    const read = windows.read('p', keys(`tok${i}`), start + kMinute);
    t.is(read.card_24h, (i % 7) + 1);
    t.is(read.card_amount_24h, ((i % 7) + 1) * 10);
  }
});

test('the arena grows in place: its columns keep their buffers past several doublings', (t) => {
  const hasher = new KeyHasher(randomBytes(32));
  const before = new VelocityWindows(hasher);
  before.record('p', keys('tok0', { accountId: 'acc0' }), 1, start);
  const parts = before.parts();
  const windows = VelocityWindows.fromParts(hasher, parts);
  for (let i = 1; i < 5000; i++) windows.record('p', keys(`tok${i}`, { accountId: `acc${i}` }), 1, start);
  const after = windows.parts();
  for (const column of ['counts', 'heads', 'lastAt', 'amountSlot', 'amounts'] as const) {
    t.is(after.arena[column].buffer, parts.arena[column].buffer, column);
  }
  t.is(after.arena.slots, 10_000);
  t.is(VelocityWindows.fromParts(hasher, after).read('p', keys('tok4999'), start).card_amount_24h, 1);
});

test('forgetEvent drops the keys of an erased account that nobody else used', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  windows.record('p', keys('tok', { email: 'e', accountId: 'acc_gone' }), 10, start);
  windows.record('p', keys('tok', { email: 'e', accountId: 'acc_gone' }), 5, start + 90 * 60_000);
  windows.forgetEvent('p', keys('tok', { email: 'e', accountId: 'acc_gone' }), 10, start);
  windows.forgetEvent('p', keys('tok', { email: 'e', accountId: 'acc_gone' }), 5, start + 90 * 60_000);
  t.is(windows.size, 0, 'no key left: not the card, the email or the account');
  t.deepEqual(windows.read('p', keys('tok'), start + 91 * 60_000), { card_1h: 0, card_24h: 0, card_amount_24h: 0 });
});

test('forgetEvent takes only the erased account\'s events out of a shared card, IP or device: the others still count', (t) => {
  const windows = new VelocityWindows(new KeyHasher(randomBytes(32)));
  const shared = { ip: '203.0.113.7', fp: 'fp_shared' };
  windows.record('p', keys('tok', { ...shared, accountId: 'acc_stays' }), 100, start);
  windows.record('p', keys('tok', { ...shared, accountId: 'acc_gone' }), 40, start + 60_000);
  windows.record('p', keys('tok', { ...shared, accountId: 'acc_stays' }), 7, start + 2 * 60_000);
  windows.forgetEvent('p', keys('tok', { ...shared, accountId: 'acc_gone' }), 40, start + 60_000);
  const now = start + 3 * 60_000;
  t.like(windows.read('p', keys('tok', { ...shared, accountId: 'acc_stays' }), now), {
    card_1h: 2, card_24h: 2, card_amount_24h: 107, ip_1h: 2, ip_24h: 2, fp_1h: 2, fp_24h: 2, account_1h: 2, account_24h: 2, account_amount_24h: 107,
  });
  t.like(windows.read('p', keys(null, { accountId: 'acc_gone' }), now), { account_1h: 0, account_24h: 0, account_amount_24h: 0 });
  // An event already out of the ring is not taken from the buckets that replaced it.
  const later = start + 25 * 3_600_000;
  windows.record('p', keys('tok', { ...shared, accountId: 'acc_stays' }), 1, later);
  windows.forgetEvent('p', keys('tok', { ...shared, accountId: 'acc_gone' }), 40, start + 60_000);
  t.like(windows.read('p', keys('tok', shared), later + 1), { card_1h: 1, card_24h: 1, card_amount_24h: 1, ip_24h: 1 });
});

/** Seeded draws (a linear congruential generator): `next(n)` in 0..n-1, `value` a key of `kind` among n, or null one time in four. */
function randomKeys(seed: number): { next: (n: number) => number; value: (kind: string, n: number) => string | null } {
  const next = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  return { next, value: (kind, n) => (next(4) === 0 ? null : `${kind}-${next(n)}`) };
}

test('a record given the hashes its read made counts exactly as one that hashes again, across projects and sweeps', (t) => {
  const secret = randomBytes(32);
  const reused = new VelocityWindows(new KeyHasher(secret));
  const fresh = new VelocityWindows(new KeyHasher(secret));
  const { next, value } = randomKeys(7);
  for (let i = 0; i < 3_000; i++) {
    const at = start + i * 60_000;
    const project = `p${next(3)}`;
    const eventKeys: VelocityKeys = { cardToken: value('card', 30), ip: value('ip', 2_000), accountId: value('acc', 20), email: value('mail', 20), fp: value('fp', 40) };
    const hashes = new VelocityHashes();
    const read = reused.read(project, eventKeys, at, hashes);
    t.deepEqual(read, fresh.read(project, eventKeys, at), `event ${i}`);
    reused.record(project, eventKeys, i, at, hashes);
    fresh.record(project, eventKeys, i, at);
    if (i % 500 === 499) t.is(reused.sweep(at), fresh.sweep(at), 'the same keys idle for a day');
  }
  t.is(reused.size, fresh.size);
});

test('windows moved to another thread as parts count on exactly as the ones that stayed', (t) => {
  const secret = randomBytes(32);
  const hasher = new KeyHasher(secret);
  const moving = new VelocityWindows(hasher);
  const staying = new VelocityWindows(new KeyHasher(secret));
  const { next, value } = randomKeys(11);
  const eventAt = (i: number): [string, VelocityKeys, number] => [
    `p${next(3)}`, { cardToken: value('card', 300), ip: value('ip', 3_000), accountId: value('acc', 200), email: value('mail', 200), fp: value('fp', 400) }, start + i * 30_000,
  ];
  for (let i = 0; i < 4_000; i++) {
    const [project, eventKeys, at] = eventAt(i);
    moving.record(project, eventKeys, i, at);
    staying.record(project, eventKeys, i, at);
  }
  // Sweeping first leaves free slots and amount slots to move too.
  const swept = moving.sweep(start + 4_000 * 30_000);
  t.true(swept > 0);
  t.is(swept, staying.sweep(start + 4_000 * 30_000));
  const parts = moving.parts();
  const buffers = partBuffers(parts);
  const moved = VelocityWindows.fromParts(hasher, structuredClone(parts, { transfer: buffers }));
  t.true(buffers.every((buffer) => buffer.byteLength === 0), 'transferred, not copied');
  t.is(moved.size, staying.size);
  // Go on past the moved arrays' sizes (they grow), reading before each record.
  for (let i = 4_000; i < 12_000; i++) {
    const [project, eventKeys, at] = eventAt(i);
    t.deepEqual(moved.read(project, eventKeys, at), staying.read(project, eventKeys, at), `event ${i}`);
    moved.record(project, eventKeys, i, at);
    staying.record(project, eventKeys, i, at);
  }
  t.is(moved.size, staying.size);
});
