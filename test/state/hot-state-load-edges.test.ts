// Loading the hot state from rows, at its edges: each error of loadAccount, loadHolder and
// loadLink (and that a failed call changes nothing), addProject, recordEvent given a public id,
// findByPublicId; holders loaded in any order and at the same millisecond, their last seen to the
// millisecond, the mask a value shows after a load, which value a loaded link shows, and links
// that keep their own mask.
import test, { type ExecutionContext } from 'ava';
import { EventSignals, HotState, SignalType, type HotStateStats } from '../../src/state/hot-state.js';
import { idMaker, kHasher, shuffled } from './_harness.js';

const kT0 = Date.UTC(2026, 10, 23, 8);
const kHour = 3_600_000;
const kDay = 86_400_000;
const ids = idMaker(424242);
const [idA, idB, idC] = [ids(), ids(), ids()] as [string, string, string];

function stateOf(limit?: number): HotState {
  return new HotState({ hasher: kHasher, newPublicId: idMaker(7), ...(limit === undefined ? {} : { limit }) });
}

/** One value as EventSignals keys it (what loadHolder takes). */
function valueOf(space: number, type: SignalType, value: string, mask = `${value.slice(0, 2)}***`): EventSignals {
  const signals = new EventSignals();
  signals.addValue(kHasher, space, type, value, mask);
  return signals;
}

/** Loads an account (space 0 unless given) with a fresh public id; its number. */
function account(t: ExecutionContext, hot: HotState, externalId: string, space = 0, publicId = ids()): number {
  const loaded = hot.loadAccount(space, externalId, publicId, kT0 - kDay, kT0, 3, 1, 0, false);
  if (typeof loaded !== 'number') throw new Error(`loadAccount ${externalId}: ${loaded.code}`);
  hot.addProject(loaded, 0);
  t.is(hot.publicId(loaded), publicId);
  return loaded;
}

function holder(hot: HotState, account: number, type: SignalType, value: string, lastSeen: number, mask?: string, space = 0): void {
  const signals = valueOf(space, type, value, mask);
  const error = hot.loadHolder(space, account, type, signals.keys, 0, signals.masks[0]!, lastSeen - kHour, lastSeen);
  if (error !== null) throw new Error(`loadHolder ${value}: ${error.code}`);
}

interface Link {
  signal_type: string;
  external_account_id: string;
  masked_signal: string;
  first_seen: string;
  last_seen: string;
}

function routeOf(hot: HotState, account: number): Link[] {
  return (JSON.parse(hot.linksJson(account, 0) ?? 'null') as { links: Link[] }).links;
}

const counts = (stats: HotStateStats): Record<string, number> => ({ accounts: stats.accounts, values: stats.values, holders: stats.holders, links: stats.links });

test('recordEvent given a public id: a new account gets it, an existing one ignores it, a taken or malformed one is refused', (t) => {
  const hot = stateOf();
  const signals = valueOf(0, SignalType.Email, 'a@example.com');
  const created = hot.recordEvent(0, 0, 'a', 'allow', kT0, signals, idA);
  t.like(created, { ok: true, created: true });
  const a = created.ok ? created.account : -1;
  t.is(hot.publicId(a), idA);
  t.is(hot.findByPublicId(idA), a);
  t.is(hot.resolve(0, 0, idA), a);
  // An existing account keeps its id, whatever is given (even a malformed one).
  for (const given of [idB, 'acc_short']) {
    t.like(hot.recordEvent(0, 0, 'a', 'allow', kT0 + 1, signals, given), { ok: true, account: a, created: false });
    t.is(hot.publicId(a), idA);
  }
  t.is(hot.findByPublicId(idB), -1);
  t.like(hot.accountSignals(a, kT0), { events: 3 });
  // A new account may not take an id a live account has (in any space), nor a malformed one.
  const before = counts(hot.stats);
  for (const [space, given] of [[0, idA], [1, idA], [0, 'acc_short'], [0, `usr_${idB.slice(4)}`], [0, `${idB.slice(0, 23)}-`], [0, `${idB}0`]] as const) {
    t.like(hot.recordEvent(space, 0, 'b', 'allow', kT0, signals, given), { ok: false, error: { code: 'INVALID_PUBLIC_ID' } }, given);
    t.is(hot.findAccount(space, 'b'), -1);
  }
  t.deepEqual(counts(hot.stats), before);
  // Without an id, the function's; an erased account's id is free again.
  const fromFunction = hot.recordEvent(0, 0, 'b', 'allow', kT0, signals);
  t.true(fromFunction.ok && hot.publicId(fromFunction.account) === idMaker(7)());
  hot.erase(a);
  t.is(hot.findByPublicId(idA), -1);
  const again = hot.recordEvent(0, 0, 'c', 'allow', kT0, signals, idA);
  t.true(again.ok && again.created && hot.publicId(again.account) === idA && hot.findByPublicId(idA) === again.account);
});

test('findByPublicId: -1 for a malformed, unknown or erased id', (t) => {
  const hot = stateOf();
  const a = account(t, hot, 'a', 0, idA);
  t.is(hot.findByPublicId(idA), a);
  for (const id of ['', 'acc_', 'acc_short', idA.toLowerCase() === idA ? idA.toUpperCase() : idA.toLowerCase(), idB]) t.is(hot.findByPublicId(id), -1, id);
  hot.erase(a);
  t.is(hot.findByPublicId(idA), -1);
});

test('loadAccount holds the fields of the row; the account is used by no project until addProject', (t) => {
  const hot = stateOf();
  const a = hot.loadAccount(2, 'ü "a"', idA, kT0 - 3 * kDay, kT0 - kDay, 40, 3, 5, true);
  if (typeof a !== 'number') return t.fail(a.code);
  t.deepEqual(hot.accountSignals(a, kT0), { known: true, age_days: 3, events: 40, blocks: 3, reviews: 5, fraud_confirmed: true });
  t.is(hot.findAccount(2, 'ü "a"'), a);
  t.is(hot.findAccount(0, 'ü "a"'), -1);
  t.is(hot.findByPublicId(idA), a);
  t.is(hot.externalId(a), 'ü "a"');
  t.deepEqual(hot.projectsOf(a), []);
  t.is(hot.resolve(2, 4, idA), -1);
  t.is(hot.linksJson(a, 4), `{"account_public_id":"${idA}","external_account_id":"ü \\"a\\"","links":[]}`);
  // The same external id in another space is another account.
  t.not(hot.loadAccount(3, 'ü "a"', idB, kT0, kT0, 1, 0, 0, false), a);
  // A loaded account records as a recorded one: counts go on, last seen only forward.
  t.like(hot.recordEvent(2, 4, 'ü "a"', 'block', kT0, new EventSignals()), { ok: true, account: a, created: false });
  t.like(hot.accountSignals(a, kT0), { events: 41, blocks: 4, reviews: 5, fraud_confirmed: true });
  t.deepEqual(hot.projectsOf(a), [4]);
});

const loadAccountFails = test.macro({
  exec(t, code: string, limit: number | undefined, call: (hot: HotState) => unknown) {
    const hot = stateOf(limit);
    const a = account(t, hot, 'a', 0, idA);
    const before = counts(hot.stats);
    t.like(call(hot), { code });
    t.deepEqual(counts(hot.stats), before);
    t.is(hot.findAccount(0, 'b'), -1);
    t.is(hot.findByPublicId(idA), a);
    t.is(hot.findByPublicId(idB), -1);
  },
  title: (name = '') => `loadAccount refuses ${name}, changing nothing`,
});

test('(space, external id) held', loadAccountFails, 'DUPLICATE_ROW', undefined, (hot: HotState) => hot.loadAccount(0, 'a', idB, kT0, kT0, 1, 0, 0, false));
test('a public id held (in any space)', loadAccountFails, 'INVALID_PUBLIC_ID', undefined, (hot: HotState) => hot.loadAccount(1, 'b', idA, kT0, kT0, 1, 0, 0, false));
test('a malformed public id', loadAccountFails, 'INVALID_PUBLIC_ID', undefined, (hot: HotState) => hot.loadAccount(0, 'b', `acc_${'é'.repeat(20)}`, kT0, kT0, 1, 0, 0, false));
test('a public id of another kind', loadAccountFails, 'INVALID_PUBLIC_ID', undefined, (hot: HotState) => hot.loadAccount(0, 'b', `usr_${idB.slice(4)}`, kT0, kT0, 1, 0, 0, false));
test('an external id too long to keep', loadAccountFails, 'STRING_TOO_LONG', undefined, (hot: HotState) => hot.loadAccount(0, 'b'.repeat(2_100_000), idB, kT0, kT0, 1, 0, 0, false));
test('an account past the limit', loadAccountFails, 'STATE_FULL', 1, (hot: HotState) => hot.loadAccount(0, 'b', idB, kT0, kT0, 1, 0, 0, false));

test('addProject: the account is used by the project (latest first); a repeat, a dead account or a bad project changes nothing', (t) => {
  const hot = stateOf();
  const a = account(t, hot, 'a', 0, idA);
  hot.addProject(a, 3);
  hot.addProject(a, 0);
  hot.addProject(a, 7);
  t.deepEqual(hot.projectsOf(a), [7, 3, 0]);
  t.is(hot.resolve(0, 7, 'a'), a);
  t.is(hot.resolve(0, 7, idA), a);
  t.is(hot.resolve(0, 8, idA), -1);
  for (const project of [-1, 1.5, 0x7fffffff, Number.NaN]) hot.addProject(a, project);
  t.deepEqual(hot.projectsOf(a), [7, 3, 0]);
  const erased = account(t, hot, 'b');
  hot.erase(erased);
  hot.addProject(erased, 1);
  hot.addProject(-1, 1);
  hot.addProject(1_000_000, 1);
  t.is(hot.stats.accounts, 1);
  t.deepEqual(hot.projectsOf(a), [7, 3, 0]);
});

const loadHolderFails = test.macro({
  exec(t, code: string, limit: number | undefined, call: (hot: HotState, a: number, extra: number) => unknown, prepare?: (hot: HotState) => number) {
    const hot = stateOf(limit);
    const a = account(t, hot, 'a');
    const b = account(t, hot, 'b');
    holder(hot, a, SignalType.Ip, '203.0.113.7', kT0);
    holder(hot, b, SignalType.Ip, '203.0.113.7', kT0 + 1000);
    const extra = prepare?.(hot) ?? -1;
    const before = counts(hot.stats);
    t.like(call(hot, a, extra), { code });
    t.deepEqual(counts(hot.stats), before);
    // The value's holders and their times are as they were: a is last seen at kT0, b a second later.
    const ip = valueOf(0, SignalType.Ip, '203.0.113.7');
    t.is(hot.linkSignals(0, -1, ip, kT0 + kDay).ip_24h, 2);
    t.is(hot.linkSignals(0, -1, ip, kT0 + kDay + 1).ip_24h, 1);
    t.is(hot.linkSignals(0, b, ip, kT0 + kDay).ip_24h, 1);
  },
  title: (name = '') => `loadHolder refuses ${name}, changing nothing`,
});

const load = (hot: HotState, space: number, account: number, type: number, value: string, mask = 'x***', lastSeen = kT0): unknown => {
  const signals = valueOf(space, type, value);
  return hot.loadHolder(space, account, type, signals.keys, 0, mask, lastSeen, lastSeen);
};
const loadErased = (hot: HotState): number => {
  const gone = hot.loadAccount(0, 'gone', idC, kT0, kT0, 1, 0, 0, false) as number;
  hot.erase(gone);
  return gone;
};
test('a pair already held (other times)', loadHolderFails, 'DUPLICATE_ROW', undefined, (hot: HotState, a: number) => load(hot, 0, a, SignalType.Ip, '203.0.113.7', 'x***', kT0 + 2 * kDay));
test('an account that is not live (-1)', loadHolderFails, 'INVALID_ROW', undefined, (hot: HotState) => load(hot, 0, -1, SignalType.Card, '4111'));
test('an account that is not live (never used)', loadHolderFails, 'INVALID_ROW', undefined, (hot: HotState) => load(hot, 0, 5000, SignalType.Card, '4111'));
test('an account that is not live (erased)', loadHolderFails, 'INVALID_ROW', undefined, (hot: HotState, _a: number, gone: number) => load(hot, 0, gone, SignalType.Card, '4111'), loadErased);
test('an account of another space', loadHolderFails, 'INVALID_ROW', undefined, (hot: HotState, a: number) => load(hot, 1, a, SignalType.Card, '4111'));
test('a type outside SignalType', loadHolderFails, 'INVALID_ROW', undefined, (hot: HotState, a: number) => load(hot, 0, a, 5, '4111'));
test('a fractional type', loadHolderFails, 'INVALID_ROW', undefined, (hot: HotState, a: number) => load(hot, 0, a, 1.5, '4111'));
test('a mask too long to keep', loadHolderFails, 'STRING_TOO_LONG', undefined, (hot: HotState, a: number) => load(hot, 0, a, SignalType.Card, '4111', 'x'.repeat(800_000)));
// Limit 2: accounts a and b, one value, two holders; a third holder has no room.
test('a holder past the limit', loadHolderFails, 'STATE_FULL', 2, (hot: HotState, a: number) => load(hot, 0, a, SignalType.Card, '4111'));


test('holders loaded in any order: most recent first; at the same millisecond, the later loaded first', (t) => {
  const card = valueOf(0, SignalType.Card, '411111:0000', '411111******0000');
  const linkedOf = (order: number[]): number[] => {
    const hot = stateOf();
    const accounts = Array.from({ length: 150 }, (_, i) => account(t, hot, `user-${i}`));
    for (const i of order) holder(hot, accounts[i]!, SignalType.Card, '411111:0000', kT0 + i * 1000, '411111******0000');
    const newcomer = hot.recordEvent(0, 0, 'newcomer', 'allow', kT0 + 200_000, card);
    if (!newcomer.ok) throw new Error(newcomer.error.code);
    return routeOf(hot, newcomer.account).map((link) => Number(link.external_account_id.slice(5))).sort((a, b) => a - b);
  };
  const ascending = Array.from({ length: 150 }, (_, i) => i);
  const mostRecent = Array.from({ length: 100 }, (_, i) => 50 + i);
  t.deepEqual(linkedOf(ascending), mostRecent);
  t.deepEqual(linkedOf([...ascending].reverse()), mostRecent);
  t.deepEqual(linkedOf(shuffled(ascending, 5)), mostRecent);

  // Shuffled, three holders per millisecond: the 100 most recent, ties by the later load.
  const order = shuffled(ascending, 11);
  const hotTies = stateOf();
  const tieAccounts = Array.from({ length: 150 }, (_, i) => account(t, hotTies, `user-${i}`));
  for (const i of order) holder(hotTies, tieAccounts[i]!, SignalType.Card, '411111:0000', kT0 + Math.floor(i / 3) * 1000, '411111******0000');
  const tieNewcomer = hotTies.recordEvent(0, 0, 'newcomer', 'allow', kT0 + 200_000, card);
  if (!tieNewcomer.ok) throw new Error(tieNewcomer.error.code);
  const loadedAt = new Map(order.map((i, position) => [i, position]));
  const expected = [...ascending].sort((a, b) => Math.floor(b / 3) - Math.floor(a / 3) || loadedAt.get(b)! - loadedAt.get(a)!).slice(0, 100).sort((a, b) => a - b);
  t.deepEqual(routeOf(hotTies, tieNewcomer.account).map((link) => Number(link.external_account_id.slice(5))).sort((a, b) => a - b), expected);

  // 101 holders seen at the same millisecond: the first loaded counts as the least recent.
  const hot = stateOf();
  const accounts = Array.from({ length: 101 }, (_, i) => account(t, hot, `user-${i}`));
  for (const a of accounts) holder(hot, a, SignalType.Card, '411111:0000', kT0, '411111******0000');
  const newcomer = hot.recordEvent(0, 0, 'newcomer', 'allow', kT0 + 1000, card);
  t.true(newcomer.ok);
  const linked = routeOf(hot, hot.findAccount(0, 'newcomer')).map((link) => link.external_account_id);
  t.is(linked.length, 100);
  t.false(linked.includes('user-0'));
});

test('loaded holders keep their last seen to the millisecond: the 1-hour refresh and the 24-hour IP window', (t) => {
  const hot = stateOf();
  const a = account(t, hot, 'a');
  const b = account(t, hot, 'b');
  holder(hot, a, SignalType.Card, '4111', kT0);
  holder(hot, b, SignalType.Card, '4111', kT0 + 600_000);
  const card = valueOf(0, SignalType.Card, '4111');
  // Loading made no link; a's use within the hour writes nothing, an hour after links it with b.
  t.like(hot.recordEvent(0, 0, 'a', 'allow', kT0 + kHour - 1, card), { ok: true });
  t.deepEqual(routeOf(hot, a), []);
  t.like(hot.recordEvent(0, 0, 'a', 'allow', kT0 + kHour, card), { ok: true });
  t.deepEqual(routeOf(hot, a).map((link) => [link.external_account_id, link.first_seen]), [['b', new Date(kT0 + kHour).toISOString()]]);

  holder(hot, a, SignalType.Ip, '203.0.113.7', kT0);
  const ip = valueOf(0, SignalType.Ip, '203.0.113.7');
  t.is(hot.linkSignals(0, -1, ip, kT0 + kDay).ip_24h, 1);
  t.is(hot.linkSignals(0, -1, ip, kT0 + kDay + 1).ip_24h, 0);
});

test('after a load a value shows the mask of its most recent holder row, whatever the order', (t) => {
  for (const order of [[0, 1, 2], [2, 1, 0], [1, 2, 0]]) {
    const hot = stateOf();
    const holders = [account(t, hot, 'a'), account(t, hot, 'b'), account(t, hot, 'c')];
    for (const i of order) holder(hot, holders[i]!, SignalType.Email, 'x@example.com', kT0 + i * 1000, `mask-${i}`);
    // A link loaded between a and b shows the value's mask (the row's own is another).
    t.is(hot.loadLink(holders[0]!, holders[1]!, SignalType.Email, 'mask-0', kT0, kT0), null);
    t.deepEqual(routeOf(hot, holders[0]!).map((link) => link.masked_signal), ['mask-2'], `order ${order.join(',')}`);
  }
});

const loadLinkFails = test.macro({
  exec(
    t, code: string, limit: number | undefined, call: (hot: HotState, a: number, b: number, c: number, extra: number) => unknown,
    prepare?: (hot: HotState, a: number, b: number, c: number) => number,
  ) {
    const hot = stateOf(limit);
    const [a, b, c] = [account(t, hot, 'a'), account(t, hot, 'b'), account(t, hot, 'c')];
    t.is(hot.loadLink(a, b, SignalType.Email, 'e***', kT0, kT0 + 1000), null);
    const extra = prepare?.(hot, a, b, c) ?? -1;
    const before = { counts: counts(hot.stats), bytes: hot.stats.bytes.links, routes: [a, b, c].map((end) => hot.linksJson(end, 0)) };
    t.like(call(hot, a, b, c, extra), { code });
    t.deepEqual({ counts: counts(hot.stats), bytes: hot.stats.bytes.links, routes: [a, b, c].map((end) => hot.linksJson(end, 0)) }, before);
    t.deepEqual(routeOf(hot, a).find((link) => link.external_account_id === 'b'), {
      signal_type: 'email', account_public_id: hot.publicId(b), external_account_id: 'b', masked_signal: 'e***',
      first_seen: new Date(kT0).toISOString(), last_seen: new Date(kT0 + 1000).toISOString(),
    });
  },
  title: (name = '') => `loadLink refuses ${name}, changing nothing`,
});

test('a link already held', loadLinkFails, 'DUPLICATE_ROW', undefined, (hot: HotState, a: number, b: number) => hot.loadLink(a, b, SignalType.Email, 'f***', kT0, kT0 + kDay));
test('a link already held, given from the other end', loadLinkFails, 'DUPLICATE_ROW', undefined, (hot: HotState, a: number, b: number) => hot.loadLink(b, a, SignalType.Email, 'f***', kT0, kT0 + kDay));
test('an account linked with itself', loadLinkFails, 'INVALID_ROW', undefined, (hot: HotState, _a: number, _b: number, c: number) => hot.loadLink(c, c, SignalType.Card, 'c***', kT0, kT0));
test('an end that is not live (never used)', loadLinkFails, 'INVALID_ROW', undefined, (hot: HotState, _a: number, _b: number, c: number) => hot.loadLink(c, 5000, SignalType.Card, 'c***', kT0, kT0));
test('an end that is not live (-1, first)', loadLinkFails, 'INVALID_ROW', undefined, (hot: HotState, _a: number, _b: number, c: number) => hot.loadLink(-1, c, SignalType.Card, 'c***', kT0, kT0));
test('an erased end', loadLinkFails, 'INVALID_ROW', undefined, (hot: HotState, _a: number, _b: number, c: number, gone: number) => hot.loadLink(c, gone, SignalType.Card, 'c***', kT0, kT0), loadErased);
test('ends of two spaces', loadLinkFails, 'INVALID_ROW', undefined, (hot: HotState, _a: number, _b: number, c: number, other: number) => hot.loadLink(c, other, SignalType.Card, 'c***', kT0, kT0),
  (hot: HotState) => hot.loadAccount(1, 'c', idC, kT0, kT0, 1, 0, 0, false) as number);
test('a type outside SignalType', loadLinkFails, 'INVALID_ROW', undefined, (hot: HotState, a: number, _b: number, c: number) => hot.loadLink(a, c, 7 as SignalType, 'c***', kT0, kT0));
test('a mask too long to keep, when the ends share no value', loadLinkFails, 'STRING_TOO_LONG', undefined, (hot: HotState, a: number, _b: number, c: number) => hot.loadLink(a, c, SignalType.Card, 'x'.repeat(2_100_000), kT0, kT0));
// Limit 3: three accounts and three links (a–b by the macro, a–c and b–c here); a fourth has no room.
test('a link past the limit', loadLinkFails, 'STATE_FULL', 3, (hot: HotState, a: number, b: number) => hot.loadLink(a, b, SignalType.Card, 'c***', kT0, kT0),
  (hot: HotState, a: number, b: number, c: number) => {
    if (hot.loadLink(a, c, SignalType.Email, 'e***', kT0, kT0) !== null || hot.loadLink(b, c, SignalType.Email, 'e***', kT0, kT0) !== null) throw new Error('no room for the links before the limit');
    return -1;
  });

test('loadLink: the same ends by another type is another link; a long mask is no error when the ends share a value', (t) => {
  const hot = stateOf();
  const [a, b] = [account(t, hot, 'a'), account(t, hot, 'b')];
  holder(hot, a, SignalType.Card, '4111', kT0, '4111***');
  holder(hot, b, SignalType.Card, '4111', kT0, '4111***');
  t.is(hot.loadLink(a, b, SignalType.Email, 'e***', kT0, kT0), null);
  t.is(hot.loadLink(b, a, SignalType.Card, 'x'.repeat(2_100_000), kT0, kT0), null);
  t.deepEqual(routeOf(hot, b).map((link) => `${link.signal_type}:${link.masked_signal}`), ['card:4111***', 'email:e***']);
  t.is(hot.stats.links, 2);
});

test('a loaded link shows a value both ends hold: the one with the row\'s mask among several', (t) => {
  const hot = stateOf();
  const pairs = Array.from({ length: 3 }, (_, p) => [account(t, hot, `a${p}`), account(t, hot, `b${p}`)] as const);
  for (const [a, b] of pairs) {
    // Each end also holds values of its own and of other types, so that the walk has to skip them.
    holder(hot, a, SignalType.Email, `own-${a}@example.com`, kT0, 'own***');
    for (const end of [a, b]) {
      holder(hot, end, SignalType.Email, 'one@example.com', kT0, 'one***');
      holder(hot, end, SignalType.Card, '4111', kT0, 'card***');
      holder(hot, end, SignalType.Email, 'two@example.com', kT0, 'two***');
    }
    holder(hot, b, SignalType.Email, `own-${b}@example.com`, kT0, 'own***');
  }
  const masks = ['one***', 'two***', 'neither***'];
  for (const [p, [a, b]] of pairs.entries()) t.is(hot.loadLink(a, b, SignalType.Email, masks[p]!, kT0, kT0), null);
  const shown = pairs.map(([a]) => routeOf(hot, a).map((link) => link.masked_signal));
  t.deepEqual(shown[0], ['one***']);
  t.deepEqual(shown[1], ['two***']);
  t.true(['one***', 'two***'].includes(shown[2]![0]!), shown[2]![0]);
});

test('a loaded link whose ends share no value keeps its own mask, until an event writes it from a value', (t) => {
  const hot = stateOf();
  const [a, b] = [account(t, hot, 'a'), account(t, hot, 'b')];
  holder(hot, a, SignalType.Card, '4111', kT0, 'card-a***');
  t.is(hot.loadLink(a, b, SignalType.Card, 'ü"row***', kT0 - kDay, kT0), null);
  t.deepEqual(routeOf(hot, b).map((link) => link.masked_signal), ['ü"row***']);
  t.like(hot.linkSignals(0, b, new EventSignals(), kT0), { card: 1, total: 1 });
  // b uses a's card: the upsert writes the link from that value.
  t.like(hot.recordEvent(0, 0, 'b', 'allow', kT0 + kHour, valueOf(0, SignalType.Card, '4111', 'card-b***')), { ok: true });
  t.deepEqual(routeOf(hot, a).map((link) => [link.masked_signal, link.first_seen, link.last_seen]), [
    ['card-b***', new Date(kT0 - kDay).toISOString(), new Date(kT0 + kHour).toISOString()],
  ]);
  t.is(hot.stats.links, 1);
});

test('links that keep their own mask: erasing their accounts frees the masks, the others read back intact', (t) => {
  const hot = stateOf();
  const mask = (i: number): string => `${String(i).padStart(6, '0')}${'*'.repeat(100)}`;
  const hub = account(t, hot, 'hub');
  const others = Array.from({ length: 4000 }, (_, i) => account(t, hot, `user-${i}`));
  for (const [i, other] of others.entries()) t.is(hot.loadLink(hub, other, SignalType.Phone, mask(i), kT0, kT0 + i), null);
  const before = hot.stats.bytes.links;
  for (const [i, other] of others.entries()) if (i % 8 !== 0) hot.erase(other);
  const after = hot.stats.bytes.links;
  // 432 kB of masks, 7/8 released: the arena is copied once garbage is half of it (string-arena.ts
  // `wasteful`), ~200 kB fewer; the columns keep their high-water mark.
  t.true(after.used < before.used - 150_000, `links: ${before.used} → ${after.used} bytes used`);
  const route = routeOf(hot, hub);
  t.is(route.length, 500);
  for (const link of route) {
    const i = Number(link.external_account_id.slice(5));
    t.is(link.masked_signal, mask(i));
    t.is(link.last_seen, new Date(kT0 + i).toISOString());
  }
});
