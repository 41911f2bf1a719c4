// The hot state at its edges, each case also checked against the reference model where it applies:
// hub values (more than 100 and more than 1000 holders), the 24-hour IP window and the 1-hour
// refresh to the millisecond, a clock that steps back, erasure, isolation of spaces, errors as
// values, string arenas compacting after erasures, and the event index.
import test from 'ava';
import { EventIndex } from '../../src/state/event-index.js';
import { EventSignals, HotState, RecordedChanges, SignalType } from '../../src/state/hot-state.js';
import { KeyDomain, type KeyHasher } from '../../src/state/keys.js';
import type { ModelSignal } from './_model.js';
import { idMaker, kHasher, Pair } from './_harness.js';

const kT0 = Date.UTC(2026, 10, 23, 8);
const kHour = 3_600_000;
const kDay = 86_400_000;
const card: ModelSignal = { type: 'card', value: '411111:0000', masked: '411111******0000' };
const email: ModelSignal = { type: 'email', value: 'hub@example.com', masked: 'h***@e***.com' };
const ip: ModelSignal = { type: 'ip', value: '203.0.113.7', masked: '203.0.113.*' };

function check(t: import('ava').ExecutionContext, failure: string | null): void {
  if (failure !== null) t.fail(failure);
}

interface RouteEntry {
  signal_type: string;
  external_account_id: string;
  last_seen: string;
}

/** The links route of an account of space 0 for project 0, parsed. */
function routeOf(pair: Pair, externalId: string): RouteEntry[] {
  return (JSON.parse(pair.hot.linksJson(pair.hot.findAccount(0, externalId), 0) ?? 'null') as { links: RouteEntry[] }).links;
}

test('a value with more than 100 holders links a newcomer with the 100 most recent only', (t) => {
  const pair = new Pair(3);
  for (let i = 0; i < 150; i++) check(t, pair.record(0, 0, `user-${i}`, 'allow', kT0 + i * 1000, [card]));
  check(t, pair.record(0, 0, 'newcomer', 'allow', kT0 + 200_000, [card]));
  const linked = routeOf(pair, 'newcomer').map((link) => Number(link.external_account_id.slice(5))).sort((a, b) => a - b);
  t.deepEqual(linked, Array.from({ length: 100 }, (_, i) => 50 + i));
  for (const externalId of ['newcomer', 'user-0', 'user-49', 'user-50', 'user-149']) check(t, pair.compareAccount(0, [0], externalId, [card], kT0 + 300_000));
  check(t, pair.compareCounts());
});

test('the links signal examines the 1000 most recent holders of a value, and adds stored links', (t) => {
  const pair = new Pair(4);
  for (let i = 0; i < 1200; i++) check(t, pair.record(0, 0, `user-${i}`, i % 10 === 0 ? 'block' : 'allow', kT0 + i * 1000, [email]));
  const now = kT0 + 2_000_000;
  const anonymous = pair.hot.linkSignals(0, -1, pair.signalsOf(0, [email]), now);
  t.is(anonymous.email, 1000);
  t.is(anonymous.total, 1000);
  t.is(anonymous.fraud, 100);
  for (const externalId of ['user-5', 'user-1199', 'nobody']) check(t, pair.compareAccount(0, [0], externalId, [email], now));
  // user-5 is among the oldest: its stored links (its 5 elders, and the 100 that came after it and
  // linked with it) count besides the 1000 most recent holders (users 200..1199).
  const holder = pair.hot.linkSignals(0, pair.hot.findAccount(0, 'user-5'), pair.signalsOf(0, [email]), now);
  t.is(holder.email, 1000 + 5 + 100);
});

test('an IP links accounts seen within 24 hours of each other, to the millisecond', (t) => {
  const pair = new Pair(5);
  check(t, pair.record(0, 0, 'a', 'allow', kT0, [ip]));
  check(t, pair.record(0, 0, 'b', 'allow', kT0 + kDay, [ip]));
  check(t, pair.record(0, 0, 'c', 'allow', kT0 + kDay + 1, [ip]));
  const linksOf = (externalId: string): string[] => routeOf(pair, externalId).map((link) => `${link.signal_type}:${link.external_account_id}`);
  t.deepEqual(linksOf('a'), ['ip_24h:b']);
  t.deepEqual(linksOf('c'), ['ip_24h:b']);
  const count = (now: number): number => pair.hot.linkSignals(0, -1, pair.signalsOf(0, [ip]), now).ip_24h;
  t.is(count(kT0 + kDay), 3);
  t.is(count(kT0 + kDay + 1), 2);
  t.is(count(kT0 + 2 * kDay), 2);
  t.is(count(kT0 + 2 * kDay + 1), 1);
  t.is(count(kT0 + 2 * kDay + 2), 0);
  for (const externalId of ['a', 'b', 'c']) check(t, pair.compareAccount(0, [0], externalId, [ip], kT0 + 2 * kDay));
});

test('a value is refreshed exactly one hour after it was last written, not a millisecond sooner', (t) => {
  const pair = new Pair(6);
  check(t, pair.record(0, 0, 'a', 'allow', kT0, [card]));
  check(t, pair.record(0, 0, 'b', 'allow', kT0 + 600_000, [card]));
  check(t, pair.record(0, 0, 'a', 'allow', kT0 + kHour - 1, [card]));
  t.is(routeOf(pair, 'a')[0]!.last_seen, new Date(kT0 + 600_000).toISOString());
  check(t, pair.record(0, 0, 'a', 'allow', kT0 + kHour, [card]));
  t.is(routeOf(pair, 'a')[0]!.last_seen, new Date(kT0 + kHour).toISOString());
  t.is(routeOf(pair, 'b')[0]!.last_seen, new Date(kT0 + kHour).toISOString());
  // The refresh put a back at the head: it is now the most recent holder.
  for (const externalId of ['a', 'b']) check(t, pair.compareAccount(0, [0], externalId, [card], kT0 + kHour));
});

test('a clock that steps back keeps holders ordered by last seen', (t) => {
  const pair = new Pair(7);
  check(t, pair.record(0, 0, 'later', 'allow', kT0 + 2 * kHour, [ip]));
  check(t, pair.record(0, 0, 'earlier', 'allow', kT0, [ip]));
  // At this time only `later` is within 24 hours; a list in arrival order would stop at `earlier`.
  const now = kT0 + 2 * kHour + kDay;
  t.is(pair.hot.linkSignals(0, -1, pair.signalsOf(0, [ip]), now).ip_24h, 1);
  check(t, pair.compareAccount(0, [0], 'later', [ip], now));
});

test('erasure removes the account, its values no one else holds, and its links in both directions', (t) => {
  const pair = new Pair(8);
  const own = (name: string): ModelSignal => ({ type: 'email', value: `${name}@example.com`, masked: `${name[0]}***@e***.com` });
  check(t, pair.record(0, 0, 'a', 'allow', kT0, [own('a'), card, ip]));
  check(t, pair.record(0, 0, 'b', 'allow', kT0 + 1000, [own('b'), card]));
  const a = pair.hot.findAccount(0, 'a');
  const publicId = pair.hot.publicId(a);
  const erased = pair.hot.erase(a)!;
  t.like(erased, { publicId, externalId: 'a', space: 0, projects: [0], events: 1, signals: 3, links: 1, droppedSignals: 2 });
  const expected = new EventSignals();
  expected.addValue(kHasher, 0, SignalType.Email, 'a@example.com', '');
  expected.addValue(kHasher, 0, SignalType.Card, card.value, '');
  expected.addValue(kHasher, 0, SignalType.Ip, ip.value, '');
  const held = (types: Uint8Array, keys: Uint32Array): string[] => [...types].map((type, i) => `${type}:${keys.subarray(i * 4, i * 4 + 4).join(',')}`).sort();
  t.deepEqual(held(erased.signalTypes, erased.signalKeys), held(expected.types.subarray(0, 3), expected.keys.subarray(0, 12)));
  t.is(pair.hot.findAccount(0, 'a'), -1);
  t.is(pair.hot.resolve(0, 0, publicId), -1);
  t.is(pair.hot.erase(a), null);
  t.deepEqual(routeOf(pair, 'b'), []);
  // A slot number kept past the erasure names no account.
  t.is(pair.hot.linksJson(a, 0), null);
  t.deepEqual(pair.hot.linkSignals(0, a, pair.signalsOf(0, [card]), kT0), pair.hot.linkSignals(0, -1, pair.signalsOf(0, [card]), kT0));
  t.deepEqual(pair.hot.accountSignals(a, kT0), { known: false });
  t.deepEqual(pair.hot.stats.values, 2);
  // The same external id afterwards is a new account.
  const again = pair.hot.recordEvent(0, 0, 'a', 'allow', kT0 + 2000, pair.signalsOf(0, [card]));
  t.true(again.ok && again.created && pair.hot.publicId(again.account) !== publicId);
  t.like(pair.hot.accountSignals(pair.hot.findAccount(0, 'a'), kT0 + 2000), { known: true, events: 1, blocks: 0, fraud_confirmed: false });
});

test('two spaces never share a value, even when the caller hashed both with the same scope', (t) => {
  const hot = new HotState({ hasher: kHasher, newPublicId: idMaker(9) });
  const signals = new EventSignals();
  signals.addValue(kHasher, 0, SignalType.Email, 'shared@example.com', 's***@e***.com');
  t.true(hot.recordEvent(0, 0, 'a', 'block', kT0, signals).ok);
  t.true(hot.recordEvent(1, 5, 'b', 'allow', kT0, signals).ok);
  t.like(hot.linkSignals(1, hot.findAccount(1, 'b'), signals, kT0), { email: 0, total: 0, fraud: 0 });
  t.like(hot.linkSignals(0, -1, signals, kT0), { email: 1, total: 1, fraud: 1 });
  t.is(hot.stats.links, 0);
});

test('errors are values, and a failed call changes nothing', (t) => {
  const signals = new EventSignals();
  signals.addValue(kHasher, 0, SignalType.Email, 'x@example.com', 'x***@e***.com');
  const badIds = new HotState({ hasher: kHasher, newPublicId: () => 'acc_short' });
  const refused = badIds.recordEvent(0, 0, 'a', 'allow', kT0, signals);
  t.like(refused, { ok: false, error: { code: 'INVALID_PUBLIC_ID' } });
  t.like(badIds.stats, { accounts: 0, values: 0, holders: 0 });
  const sameId = new HotState({ hasher: kHasher, newPublicId: () => 'acc_AAAAAAAAAAAAAAAAAAAA' });
  t.true(sameId.recordEvent(0, 0, 'a', 'allow', kT0, signals).ok);
  t.like(sameId.recordEvent(0, 0, 'b', 'allow', kT0, signals), { ok: false, error: { code: 'INVALID_PUBLIC_ID' } });
  t.like(sameId.stats, { accounts: 1, values: 1, holders: 1 });
  t.like(sameId.recordEvent(0, -1, 'a', 'allow', kT0, signals), { ok: false, error: { code: 'INVALID_PROJECT' } });
  t.like(sameId.accountSignals(sameId.findAccount(0, 'a'), kT0), { events: 1 });
});

test('accounts used by several projects: each project sees them, the list says which', (t) => {
  const pair = new Pair(10);
  check(t, pair.record(0, 0, 'a', 'allow', kT0, [card]));
  check(t, pair.record(0, 1, 'b', 'allow', kT0, [card]));
  check(t, pair.record(0, 1, 'a', 'allow', kT0, []));
  check(t, pair.record(0, 7, 'a', 'allow', kT0, []));
  t.deepEqual(pair.hot.projectsOf(pair.hot.findAccount(0, 'a')).sort(), [0, 1, 7]);
  for (const externalId of ['a', 'b']) check(t, pair.compareAccount(0, [0, 1, 7], externalId, [card], kT0));
});

test('erasing most accounts compacts the external ids and masks; the rest read back intact', (t) => {
  const pair = new Pair(11);
  const long = (i: number): string => `${'x'.repeat(50)}-${i}`;
  const own = (i: number): ModelSignal => ({ type: 'card', value: `card-${i}`, masked: `4111******${String(i).padStart(4, '0')}${'*'.repeat(40)}` });
  for (let i = 0; i < 6000; i++) check(t, pair.record(0, 0, long(i), 'allow', kT0 + i, [own(i), { type: 'fp', value: `fp-${i >> 1}`, masked: 'fp_***' }]));
  const before = pair.hot.stats.bytes;
  for (let i = 0; i < 6000; i++) if (i % 8 !== 0) check(t, pair.erase(0, long(i)));
  const after = pair.hot.stats.bytes;
  t.true(after.accounts.held < before.accounts.held - 256 * 1024, `accounts: ${before.accounts.held} → ${after.accounts.held} bytes`);
  t.true(after.values.held < before.values.held - 256 * 1024, `values: ${before.values.held} → ${after.values.held} bytes`);
  check(t, pair.compareCounts());
  for (let i = 0; i < 6000; i += 8) check(t, pair.compareAccount(0, [0], long(i), [own(i)], kT0 + 6000));
});

test('event index: find, findNext over a shared key, delete by seq, sequence numbers past 2^32', (t) => {
  const index = new EventIndex(kHasher);
  for (let i = 0; i < 50_000; i++) t.is(index.add(i % 3, `evt-${i}`, 2 ** 33 + i), null);
  let wrong = 0;
  for (let i = 0; i < 50_000; i++) if (index.find(i % 3, `evt-${i}`) !== 2 ** 33 + i || index.findNext() !== -1) wrong++;
  t.is(wrong, 0);
  t.is(index.find(1, 'evt-0'), -1);
  t.true(index.delete(0, 'evt-0', 2 ** 33));
  t.false(index.delete(0, 'evt-0', 2 ** 33));
  t.is(index.find(0, 'evt-0'), -1);
  t.is(index.size, 49_999);
  // Every id under one key (a collision of the 64-bit keys, forced): all are found, one by one.
  const colliding = { key64: (_domain: KeyDomain, _scope: number, _value: string, out: Uint32Array, at: number) => out.set([7, 7], at) } as unknown as KeyHasher;
  const shared = new EventIndex(colliding);
  for (const seq of [10, 11, 12]) shared.add(0, `evt-${seq}`, seq);
  const found = [shared.find(0, 'evt-11')];
  for (let seq = shared.findNext(); seq >= 0; seq = shared.findNext()) found.push(seq);
  t.deepEqual(found.sort(), [10, 11, 12]);
  t.true(shared.delete(0, 'evt-11', 11));
  t.is(shared.size, 2);
});

test('recordEvent reports what it changed: values new to the account or an hour old (with when the account first held each), the links it made, a first use of a project', (t) => {
  const hot = new HotState({ hasher: kHasher, newPublicId: idMaker(21) });
  const signals = new EventSignals();
  const changes = new RecordedChanges();
  const record = (externalId: string, project: number, now: number, values: ReadonlyArray<[SignalType, ModelSignal]>): number => {
    signals.clear();
    for (const [type, value] of values) signals.addValue(kHasher, 0, type, value.value, value.masked);
    const outcome = hot.recordEvent(0, project, externalId, 'allow', now, signals, undefined, changes);
    if (!outcome.ok) throw new Error(outcome.error.message);
    return outcome.account;
  };
  const reported = (): unknown => ({
    newProject: changes.newProject, values: [...changes.values], valuesFirstSeen: [...changes.valuesFirstSeen], linkValues: [...changes.linkValues], linkOthers: [...changes.linkOthers],
  });
  const second = kT0 / 1000;
  const ann = record('ann', 0, kT0 + 999, [[SignalType.Email, email], [SignalType.Card, card]]);
  t.deepEqual(reported(), { newProject: true, values: [0, 1], valuesFirstSeen: [second, second], linkValues: [], linkOthers: [] }, 'a new account: both values, no one to link');
  record('bob', 0, kT0 + 1000, [[SignalType.Card, card], [SignalType.Email, email]]);
  t.deepEqual(reported(), { newProject: true, values: [0, 1], valuesFirstSeen: [second + 1, second + 1], linkValues: [0, 1], linkOthers: [ann, ann] }, 'bob shares both values with ann');
  record('ann', 0, kT0 + 999 + kHour - 1, [[SignalType.Email, email], [SignalType.Card, card]]);
  t.deepEqual(reported(), { newProject: false, values: [], valuesFirstSeen: [], linkValues: [], linkOthers: [] }, 'used 1 ms short of an hour ago: nothing to write');
  record('ann', 1, kT0 + 999 + kHour, [[SignalType.Email, email], [SignalType.Phone, { type: 'phone', value: '+447700900123', masked: '+44******123' }]]);
  t.deepEqual(
    reported(), { newProject: true, values: [0, 1], valuesFirstSeen: [second, second + 3600], linkValues: [0], linkOthers: [hot.findAccount(0, 'bob')] },
    'an hour later from another project: refreshed (its row is where its first use put it) and linked again; a new value',
  );
  t.deepEqual(hot.signalFirstSeens(ann).sort(), [second, second + 3600], 'where its rows are: the distinct seconds');
  t.deepEqual(hot.signalFirstSeens(hot.findAccount(0, 'bob')), [second + 1]);
  t.deepEqual(hot.accountCounts(ann), { lastSeenAt: kT0 + 999 + kHour, events: 3, blocks: 0, reviews: 0 });
  t.deepEqual(hot.linkedAccounts(ann).map(({ type }) => type).sort(), [SignalType.Email, SignalType.Card].sort());
});

test('an event with more values than EventSignals first has room for keeps every type, key and mask as it grows', (t) => {
  const signals = new EventSignals();
  const types = [SignalType.Email, SignalType.Phone, SignalType.Fp, SignalType.Ip, SignalType.Card, SignalType.Fp, SignalType.Ip, SignalType.Card, SignalType.Email];
  const expectedKeys = new Uint32Array(4 * types.length);
  types.forEach((type, i) => {
    signals.addValue(kHasher, 3, type, `value-${i}`, `mask-${i}`);
    kHasher.key128((KeyDomain.Email + type) as KeyDomain, 3, `value-${i}`, expectedKeys, i * 4);
  });
  t.is(signals.count, types.length);
  t.deepEqual([...signals.types.subarray(0, types.length)], types);
  t.deepEqual([...signals.keys.subarray(0, 4 * types.length)], [...expectedKeys]);
  t.deepEqual(signals.masks, types.map((_, i) => `mask-${i}`));
  signals.clear();
  signals.addValue(kHasher, 3, SignalType.Card, 'value-0', 'again');
  t.is(signals.count, 1);
  t.deepEqual(signals.masks, ['again']);
  // Sized for the event's count, as hot-accounts.ts does: 5 values fit without growing, and none still grows.
  const sized = new EventSignals(5);
  const keys = sized.keys;
  for (let i = 0; i < 5; i++) sized.addValue(kHasher, 3, types[i]!, `value-${i}`, '');
  t.is(sized.keys, keys);
  t.deepEqual([...sized.keys], [...expectedKeys.subarray(0, 20)]);
  const empty = new EventSignals(0);
  empty.addValue(kHasher, 3, SignalType.Ip, 'value-3', 'ip');
  t.deepEqual([...empty.keys.subarray(0, 4)], [...expectedKeys.subarray(12, 16)]);
});
