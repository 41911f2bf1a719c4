// The rows that follow from scored events, gathered between two bulk writes (src/accounts/
// derived-rows.ts): one row per table key with its latest values, the stamp's order, and what an
// erasure holds back, drops or releases.
import test from 'ava';
import { BatchParts, DerivedRows, kSortChunkRows, mergeBatches, rowCount } from '../../src/accounts/derived-rows.js';

test('nothing recorded since the stamp: nothing to take', (t) => {
  const rows = new DerivedRows(7);
  t.is(rows.take(), null);
  rows.advance(7);
  t.is(rows.take(), null);
});

test('a row changed twice is taken once, with its latest values and its first and last seen', (t) => {
  const rows = new DerivedRows(0);
  rows.account('acc_a', 100, 1, 0, 0, 7);
  rows.account('acc_a', 200, 2, 1, 0, 7);
  rows.signal('ten', 'live', 'email', 'h1', 'acc_a', 'a***@e***.com', 0, 100);
  rows.signal('ten', 'live', 'email', 'h1', 'acc_a', 'a***@e***.com', 0, 200);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',prj_1,', 'a***@e***.com', 100);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',prj_1,prj_2,', 'a***@e***.com', 200);
  rows.advance(2);
  t.is(rows.size, 3);
  t.deepEqual(rows.take(), {
    order: 2,
    accounts: [['acc_a', 200, 2, 1, 0, 7, []]],
    signals: [['ten', 'live', 'email', 'h1', 'acc_a', 'a***@e***.com', 0, 200]],
    links: [['acc_a', 'email', 'acc_b', 'b', ',prj_1,prj_2,', 'a***@e***.com', 100, 200]],
    linkProjects: [],
  });
  t.is(rows.size, 0);
  t.is(rows.take(), null, 'taken once');
});

test('a project change of a link waiting to be written goes into the link row; otherwise a row of its own', (t) => {
  const rows = new DerivedRows(0);
  rows.link('acc_b', 'fp', 'acc_a', 'a', ',prj_1,', 'fp_1***', 100);
  rows.linkProjects('acc_b', 'fp', 'acc_a', ',prj_1,prj_2,');
  rows.linkProjects('acc_c', 'fp', 'acc_a', ',prj_1,prj_2,');
  rows.advance(1);
  const batch = rows.take()!;
  t.deepEqual(batch.links, [['acc_b', 'fp', 'acc_a', 'a', ',prj_1,prj_2,', 'fp_1***', 100, 100]]);
  t.deepEqual(batch.linkProjects, [['acc_c', 'fp', 'acc_a', ',prj_1,prj_2,']]);
});

test('an account being erased: its rows and links to it wait, and the stamp does not pass them', (t) => {
  const rows = new DerivedRows(3);
  rows.account('acc_a', 100, 1, 0, 0, 7);
  rows.account('acc_b', 100, 1, 0, 0, 7);
  rows.link('acc_b', 'email', 'acc_a', 'a', ',p,', 'm', 100);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',p,', 'm', 100);
  rows.signal('ten', 'live', 'email', 'h', 'acc_a', 'm', 0, 100);
  rows.advance(5);
  rows.hold('acc_a');
  const first = rows.take()!;
  t.is(first.order, 3, 'the last stamp: the held rows belong to events up to 5');
  t.deepEqual(first.accounts, [['acc_b', 100, 1, 0, 0, 7, []]]);
  t.deepEqual(first.links, []);
  t.deepEqual(first.signals, []);
  t.is(rows.size, 4);
  // The erasure committed: what named the account goes.
  rows.drop('acc_a');
  t.is(rows.size, 0);
  t.deepEqual(rows.take(), { order: 5, accounts: [], signals: [], links: [], linkProjects: [] });
});

test('an erasure that failed releases the rows it held', (t) => {
  const rows = new DerivedRows(0);
  rows.account('acc_a', 100, 1, 0, 0, 7);
  rows.advance(1);
  rows.hold('acc_a');
  t.is(rows.take(), null, 'only its rows wait');
  rows.release('acc_a');
  t.deepEqual(rows.take(), { order: 1, accounts: [['acc_a', 100, 1, 0, 0, 7, []]], signals: [], links: [], linkProjects: [] });
});

test('a batch that could not be written goes back, behind newer rows, and the stamp is not passed', (t) => {
  const rows = new DerivedRows(2);
  rows.account('acc_a', 100, 1, 0, 0, 7);
  rows.signal('ten', 'live', 'ip', 'h', 'acc_a', 'm', 0, 100);
  rows.advance(4);
  const failed = rows.take()!;
  t.is(failed.order, 4);
  rows.account('acc_a', 300, 2, 0, 0, 7);
  rows.advance(6);
  rows.restore(failed);
  const again = rows.take()!;
  t.is(again.order, 6);
  t.deepEqual(again.accounts, [['acc_a', 300, 2, 0, 0, 7, []]], 'the newer counts');
  t.deepEqual(again.signals, [['ten', 'live', 'ip', 'h', 'acc_a', 'm', 0, 100]]);
  // A failed batch with nothing newer: taken again with the order it had.
  rows.restore(again);
  t.is(rows.take()!.order, 6);
});

test('a batch that could not be written goes back merged with rows recorded since: their values, its first seen', (t) => {
  const rows = new DerivedRows(0);
  rows.signal('ten', 'live', 'ip', 'h', 'acc_a', 'm1', 0, 100);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',p1,', 'm1', 100);
  rows.link('acc_c', 'email', 'acc_b', 'b', ',p1,', 'm1', 100);
  rows.advance(1);
  const failed = rows.take()!;
  // Recorded while the batch was out: the same signal and link again, and acc_b used from p2.
  rows.signal('ten', 'live', 'ip', 'h', 'acc_a', 'm2', 0, 300);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',p1,p2,', 'm2', 300);
  rows.linkProjects('acc_c', 'email', 'acc_b', ',p1,p2,');
  rows.advance(2);
  rows.restore(failed);
  // Then acc_b used from p3: the change goes into the link row it belongs to.
  rows.linkProjects('acc_c', 'email', 'acc_b', ',p1,p2,p3,');
  const again = rows.take()!;
  t.deepEqual(again.signals, [['ten', 'live', 'ip', 'h', 'acc_a', 'm2', 0, 300]], 'its first seen, the latest last seen');
  t.deepEqual(again.links, [
    ['acc_a', 'email', 'acc_b', 'b', ',p1,p2,', 'm2', 100, 300],
    ['acc_c', 'email', 'acc_b', 'b', ',p1,p2,p3,', 'm1', 100, 100],
  ]);
  t.deepEqual(again.linkProjects, [], 'no older project change left to be written after the link');
});

test('an account\'s event seqs: appended in the order recorded, kept when its counts change, merged back after a failed write', (t) => {
  const rows = new DerivedRows(0);
  rows.eventSeq('acc_a', 10);
  rows.account('acc_a', 100, 1, 0, 0, 1);
  rows.eventSeq('acc_a', 12);
  rows.account('acc_a', 200, 2, 0, 0, 2);
  // An event whose counts could not be recorded still lists its seq: a row of seqs only (-1).
  rows.eventSeq('acc_b', 11);
  rows.advance(3);
  const failed = rows.take()!;
  t.deepEqual(failed.accounts, [['acc_a', 200, 2, 0, 0, 2, [10, 12]], ['acc_b', 0, 0, 0, 0, -1, [11]]]);
  rows.eventSeq('acc_a', 14);
  rows.account('acc_a', 300, 3, 0, 0, 4);
  rows.eventSeq('acc_b', 15);
  rows.advance(5);
  rows.restore(failed);
  t.deepEqual(rows.take()!.accounts, [
    ['acc_a', 300, 3, 0, 0, 4, [10, 12, 14]],
    ['acc_b', 0, 0, 0, 0, -1, [11, 15]],
  ], 'newer counts, every seq once, the older first');
  // A seqs-only row behind a failed one that had counts: the counts come back.
  rows.account('acc_c', 100, 1, 0, 0, 6);
  rows.eventSeq('acc_c', 16);
  rows.advance(6);
  const failedAgain = rows.take()!;
  rows.eventSeq('acc_c', 17);
  rows.restore(failedAgain);
  t.deepEqual(rows.take()!.accounts, [['acc_c', 100, 1, 0, 0, 6, [16, 17]]]);
  rows.eventSeq('acc_d', 18);
  rows.hold('acc_d');
  rows.drop('acc_d');
  t.is(rows.size, 0, 'the seqs of an erased account go with its rows');
});

test('counts recorded with their event\'s seq: one row, the seqs in the order recorded', (t) => {
  const rows = new DerivedRows(0);
  rows.account('acc_a', 100, 1, 0, 0, 1, 21);
  rows.account('acc_a', 200, 2, 0, 1, 2, 23);
  rows.eventSeq('acc_a', 24);
  rows.advance(2);
  t.deepEqual(rows.take()!.accounts, [['acc_a', 200, 2, 0, 1, 2, [21, 23, 24]]]);
});

test('a batch cut into parts: in key order, at most so many rows each, and only the last moves the stamp', (t) => {
  const rows = new DerivedRows(1);
  for (let i = 0; i < 3; i++) rows.account(`acc_${i}`, 100, 1, 0, 0, 7);
  rows.signal('ten', 'live', 'ip', 'h', 'acc_0', 'm', 0, 100);
  rows.link('acc_0', 'ip_24h', 'acc_1', 'b', ',p,', 'm', 100);
  rows.advance(9);
  const batch = rows.take()!;
  t.is(rows.stampedBefore, 1);
  const parts = new BatchParts(batch, 2, rows.stampedBefore).rest();
  // The signal (account_signals is keyed by first seen) and acc_0's row; acc_0's link and acc_1's row; acc_2's row.
  t.deepEqual(parts.map((part) => [part.order, part.accounts.length, part.signals.length, part.links.length]), [[1, 1, 1, 0], [1, 1, 0, 1], [9, 1, 0, 0]]);
  t.deepEqual(mergeBatches(parts), batch, 'joined again: the batch');
  t.deepEqual(new BatchParts(batch, 5, 1).rest(), [batch], 'a batch that fits is one part');
  // The second part failed: it and the third go back; the stamp stays at 1 until they are written.
  rows.restore(mergeBatches(parts.slice(1)));
  const again = rows.take()!;
  t.is(again.order, 9);
  t.is(rows.stampedBefore, 1);
  t.deepEqual(again.accounts.map((row) => row[0]), ['acc_1', 'acc_2']);
  t.deepEqual(again.links.map((row) => row[0]), ['acc_0']);
});

test('rows recorded in any order are written by account, signals by first seen: each part a range of accounts, a link before its project change', (t) => {
  const rows = new DerivedRows(0);
  let seed = 11;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const name = (n: number): string => `acc_${String(n).padStart(3, '0')}`;
  for (let i = 0; i < 300; i++) {
    const account = name(random(60));
    const other = name(random(60));
    switch (random(4)) {
      case 0: rows.account(account, i, i, 0, 0, i); break;
      case 1: rows.signal('ten', 'live', 'ip', `h${random(5)}`, account, 'm', random(20), i); break;
      case 2: rows.link(account, 'email', other, 'x', ',p,', 'm', i); break;
      default: rows.linkProjects(account, 'email', other, `,p${i},`);
    }
  }
  rows.advance(300);
  const batch = rows.take()!;
  const parts = new BatchParts(batch, 25, 0).rest();
  const tables = ['accounts', 'links', 'linkProjects'] as const;
  let last = '';
  let lastSignal: readonly [number, string] = [-1, ''];
  let written = 0;
  const linksWritten = new Set<string>();
  for (const part of parts) {
    t.true(rowCount(part) <= 25);
    written += rowCount(part);
    for (const signal of part.signals) {
      t.true(signal[6] > lastSignal[0] || (signal[6] === lastSignal[0] && signal[4] >= lastSignal[1]), `signal (${signal[6]}, ${signal[4]}) after (${lastSignal.join(', ')})`);
      lastSignal = [signal[6], signal[4]];
    }
    const inPart = tables.flatMap((table) => part[table].map((row) => row[0]));
    if (inPart.length === 0) continue;
    const first = inPart.reduce((min, account) => (account < min ? account : min));
    const lastHere = inPart.reduce((max, account) => (account > max ? account : max));
    t.true(first >= last, `part from ${first} after one to ${last}`);
    last = lastHere;
    for (const link of part.links) linksWritten.add(`${link[0]} ${link[1]} ${link[2]}`);
    for (const change of part.linkProjects) {
      const key = `${change[0]} ${change[1]} ${change[2]}`;
      if (batch.links.some((link) => `${link[0]} ${link[1]} ${link[2]}` === key)) t.true(linksWritten.has(key), `${key}: its link first`);
    }
  }
  t.is(written, rowCount(batch), 'every row once');
  t.is(parts.at(-1)!.order, 300);
  t.true(parts.slice(0, -1).every((part) => part.order === 0));
});

test('only held rows left: nothing to take, however often asked', (t) => {
  const rows = new DerivedRows(4);
  rows.account('acc_a', 100, 1, 0, 0, 7);
  rows.advance(5);
  rows.hold('acc_a');
  t.is(rows.take(), null);
  t.is(rows.take(), null);
  t.is(rows.size, 1);
});

test('a batch of many chunks, sorted a chunk per step and merged part by part, comes out as one sort of it would', (t) => {
  const rows = new DerivedRows(0);
  // xorshift32: the low bits of a plain LCG repeat too soon for several draws per row.
  let state = 7;
  const random = (n: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  const name = (n: number): string => `acc_${String(n).padStart(5, '0')}`;
  for (let i = 0; i < 12 * kSortChunkRows; i++) {
    const account = name(random(3000));
    switch (random(4)) {
      case 0: rows.account(account, i, i, 0, 0, i); break;
      case 1: rows.signal('ten', 'live', ['ip', 'fp', 'card'][random(3)]!, `h${random(50)}`, account, 'm', random(100), i); break;
      case 2: rows.link(account, 'email', name(random(3000)), 'x', ',p,', 'm', i); break;
      default: rows.linkProjects(account, 'email', name(random(3000)), `,p${i},`);
    }
  }
  rows.advance(77);
  const batch = rows.take()!;
  t.true(batch.signals.length > 2 * kSortChunkRows, 'several chunks of signals');
  const parts = new BatchParts(batch, 250, 3);
  t.throws(() => parts.nextPart(), { message: /before every chunk was sorted/ });
  let steps = 0;
  while (parts.sortStep()) steps++;
  t.true(steps >= 5, `${steps} steps`);
  const given: typeof batch[] = [];
  for (let part = parts.nextPart(); part !== null; part = parts.nextPart()) given.push(part);
  t.is(parts.nextPart(), null);
  t.true(given.every((part) => rowCount(part) <= 250));
  t.deepEqual(given.map((part) => part.order), [...given.slice(1).map(() => 3), 77], 'only the last part moves the stamp');
  const text = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  const joined = mergeBatches(given);
  t.deepEqual(joined.accounts, [...batch.accounts].sort((a, b) => text(a[0], b[0])));
  t.deepEqual(joined.signals, [...batch.signals].sort((a, b) => a[6] - b[6] || text(a[4], b[4]) || text(a[2], b[2]) || text(a[3], b[3])));
  t.deepEqual(joined.links, [...batch.links].sort((a, b) => text(a[0], b[0]) || text(a[1], b[1]) || text(a[2], b[2])));
  t.deepEqual(joined.linkProjects, [...batch.linkProjects].sort((a, b) => text(a[0], b[0]) || text(a[1], b[1]) || text(a[2], b[2])));
  t.deepEqual(new BatchParts(batch, 250, 3).rest(), given, 'rest() gives the same parts in one go');
  // Parts cover ranges of accounts that follow each other (signals aside: keyed by first seen).
  let last = '';
  for (const part of given) {
    const accounts = [...part.accounts.map((row) => row[0]), ...part.links.map((row) => row[0]), ...part.linkProjects.map((row) => row[0])];
    if (accounts.length === 0) continue;
    const first = accounts.reduce((min, account) => (account < min ? account : min));
    t.true(first >= last, `part from ${first} after one to ${last}`);
    last = accounts.reduce((max, account) => (account > max ? account : max));
  }
});

test('a part that fails takes every part not yet given back with it; an empty batch is one empty part', (t) => {
  const rows = new DerivedRows(0);
  for (let i = 0; i < 1000; i++) rows.account(`acc_${String(999 - i).padStart(4, '0')}`, i, 1, 0, 0, i);
  rows.advance(5);
  const batch = rows.take()!;
  const parts = new BatchParts(batch, 100, 0);
  while (parts.sortStep());
  const first = parts.nextPart()!;
  const failed = parts.nextPart()!;
  const back = mergeBatches([failed, ...parts.rest()]);
  t.is(back.order, 5);
  t.is(back.accounts.length, 900);
  t.is(back.accounts[0]![0], 'acc_0100');
  t.is(first.accounts.at(-1)![0], 'acc_0099');
  t.is(parts.nextPart(), null);
  const empty = new BatchParts({ order: 9, accounts: [], signals: [], links: [], linkProjects: [] }, 100, 4);
  t.false(empty.sortStep());
  t.deepEqual(empty.nextPart(), { order: 9, accounts: [], signals: [], links: [], linkProjects: [] });
  t.is(empty.nextPart(), null);
});
