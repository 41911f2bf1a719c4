// The rows that follow from scored events, gathered between two bulk writes (src/accounts/
// derived-rows.ts): one row per table key with its latest values, the stamp's order, and what an
// erasure holds back, drops or releases.
import test from 'ava';
import { DerivedRows, mergeBatches, splitBatch } from '../../src/accounts/derived-rows.js';

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
  rows.signal('ten', 'live', 'email', 'h1', 'acc_a', 'a***@e***.com', 100);
  rows.signal('ten', 'live', 'email', 'h1', 'acc_a', 'a***@e***.com', 200);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',prj_1,', 'a***@e***.com', 100);
  rows.link('acc_a', 'email', 'acc_b', 'b', ',prj_1,prj_2,', 'a***@e***.com', 200);
  rows.advance(2);
  t.is(rows.size, 3);
  t.deepEqual(rows.take(), {
    order: 2,
    accounts: [['acc_a', 200, 2, 1, 0, 7]],
    signals: [['ten', 'live', 'email', 'h1', 'acc_a', 'a***@e***.com', 100, 200]],
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
  rows.signal('ten', 'live', 'email', 'h', 'acc_a', 'm', 100);
  rows.advance(5);
  rows.hold('acc_a');
  const first = rows.take()!;
  t.is(first.order, 3, 'the last stamp: the held rows belong to events up to 5');
  t.deepEqual(first.accounts, [['acc_b', 100, 1, 0, 0, 7]]);
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
  t.deepEqual(rows.take(), { order: 1, accounts: [['acc_a', 100, 1, 0, 0, 7]], signals: [], links: [], linkProjects: [] });
});

test('a batch that could not be written goes back, behind newer rows, and the stamp is not passed', (t) => {
  const rows = new DerivedRows(2);
  rows.account('acc_a', 100, 1, 0, 0, 7);
  rows.signal('ten', 'live', 'ip', 'h', 'acc_a', 'm', 100);
  rows.advance(4);
  const failed = rows.take()!;
  t.is(failed.order, 4);
  rows.account('acc_a', 300, 2, 0, 0, 7);
  rows.advance(6);
  rows.restore(failed);
  const again = rows.take()!;
  t.is(again.order, 6);
  t.deepEqual(again.accounts, [['acc_a', 300, 2, 0, 0, 7]], 'the newer counts');
  t.deepEqual(again.signals, [['ten', 'live', 'ip', 'h', 'acc_a', 'm', 100, 100]]);
  // A failed batch with nothing newer: taken again with the order it had.
  rows.restore(again);
  t.is(rows.take()!.order, 6);
});

test('a batch cut into parts: in order, at most so many rows each, and only the last moves the stamp', (t) => {
  const rows = new DerivedRows(1);
  for (let i = 0; i < 3; i++) rows.account(`acc_${i}`, 100, 1, 0, 0, 7);
  rows.signal('ten', 'live', 'ip', 'h', 'acc_0', 'm', 100);
  rows.link('acc_0', 'ip_24h', 'acc_1', 'b', ',p,', 'm', 100);
  rows.advance(9);
  const batch = rows.take()!;
  t.is(rows.stampedBefore, 1);
  const parts = splitBatch(batch, 2, rows.stampedBefore);
  t.deepEqual(parts.map((part) => [part.order, part.accounts.length, part.signals.length, part.links.length]), [[1, 2, 0, 0], [1, 1, 1, 0], [9, 0, 0, 1]]);
  t.deepEqual(mergeBatches(parts), batch, 'joined again: the batch');
  t.deepEqual(splitBatch(batch, 5, 1), [batch], 'a batch that fits is one part');
  // The second part failed: it and the third go back; the stamp stays at 1 until they are written.
  rows.restore(mergeBatches(parts.slice(1)));
  const again = rows.take()!;
  t.is(again.order, 9);
  t.is(rows.stampedBefore, 1);
  t.deepEqual(again.accounts, [['acc_2', 100, 1, 0, 0, 7]]);
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
