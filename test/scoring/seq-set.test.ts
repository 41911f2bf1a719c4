// The writer's sets of seqs (scoring/seq-set.ts): the lowest and every member, as a plain list of
// the same changes says, through adds, removes and the undos of rolled-back transactions in any
// order of reads — including the rowid a rolled-back insert gives back to the next one.
import test from 'ava';
import { SeqSet, SeqSetsByProject } from '../../src/scoring/seq-set.js';

const ascending = (values: Iterable<number>): number[] => [...values].sort((a, b) => a - b);

test('the lowest and every member, through adds, removes and rollbacks that give seqs back, as a brute-force list says', (t) => {
  let seed = 11;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 300; round++) {
    const start = [3, 1, 2].slice(0, next(4));
    const set = new SeqSet(start);
    let model = new Set(start);
    let seq = 10;
    for (let step = 0; step < 60; step++) {
      // A transaction of a few changes, committed or rolled back (undos in reverse order).
      const before = new Set(model);
      const seqBefore = seq;
      const undos: Array<() => void> = [];
      for (let change = next(4); change >= 0; change--) {
        const live = [...model];
        if (live.length > 0 && next(2) === 0) {
          const gone = live[next(live.length)]!;
          undos.push(set.remove(gone));
          model.delete(gone);
        } else {
          seq += 1 + next(2);
          undos.push(set.add(seq));
          model.add(seq);
        }
        // Reads in the middle of the transaction take marked entries out of the heap.
        if (next(2) === 0) t.is(set.lowest(), model.size === 0 ? null : Math.min(...model));
      }
      if (next(3) === 0) {
        for (const undo of undos.reverse()) undo();
        model = before;
        // As SQLite does without AUTOINCREMENT: the next insert takes the rolled-back rowids again.
        seq = seqBefore;
      }
      if (next(2) === 0) t.is(set.lowest(), model.size === 0 ? null : Math.min(...model));
      t.deepEqual(set.values(), ascending(model));
      t.is(set.size, model.size);
    }
    // Everything leaves: nothing is left behind.
    for (const member of model) set.remove(member);
    t.is(set.lowest(), null);
    t.is(set.size, 0);
  }
});

test('a seq added again after its add was rolled back, then removed, is gone', (t) => {
  const set = new SeqSet([5]);
  const undoAdd = set.add(100);
  undoAdd();
  set.add(100);
  set.remove(100);
  t.deepEqual(set.values(), [5]);
  set.remove(5);
  t.is(set.lowest(), null, 'no copy of 100 outlives both');
  t.is(set.size, 0);
});

test('a member taken out at the top and then rolled back is a member again, once', (t) => {
  const set = new SeqSet([5, 7]);
  const undoRemove = set.remove(5);
  t.is(set.lowest(), 7, 'taken out at the top');
  undoRemove();
  t.is(set.lowest(), 5);
  t.deepEqual(set.values(), [5, 7]);
  t.is(set.size, 2);
});

test('removed entries held behind a member that stays lowest are bounded, and the members stay exact', (t) => {
  // A case that cannot be written keeps its seq at the top while thousands of others come and go.
  const set = new SeqSet([1]);
  const undos: Array<() => void> = [];
  for (let seq = 2; seq < 100_000; seq++) {
    set.add(seq);
    if (seq % 10 !== 0) set.remove(seq);
    // Now and then a member (a multiple of 10) leaves in a transaction that is rolled back at the end.
    if (seq % 9_973 === 0) undos.push(set.remove(seq - (seq % 10)));
    if (seq % 1_000 === 0) t.true(set.held <= 2 * set.size + 1_026, `held ${set.held} for ${set.size} members`);
  }
  // Undone after compactions: the members removed are members again.
  for (const undo of undos.reverse()) undo();
  const expected = [1, ...Array.from({ length: 9_999 }, (_, i) => (i + 1) * 10)];
  t.deepEqual(set.values(), expected);
  t.is(set.size, expected.length);
  t.is(set.lowest(), 1);
});

test('by project: the lowest of all projects, the members of some, and undos', (t) => {
  const sets = new SeqSetsByProject([[9, 'prj_sandbox'], [4, 'prj_live'], [12, 'prj_live'], [2, 'prj_other']]);
  t.is(sets.lowest(), 2);
  t.deepEqual(sets.valuesOf(['prj_live']), [4, 12], 'another project\'s members are not read');
  t.deepEqual(sets.valuesOf(['prj_sandbox', 'prj_live']), [4, 9, 12], 'ascending across projects');
  t.deepEqual(sets.valuesOf(['prj_none']), []);
  sets.remove('prj_other', 2);
  t.is(sets.lowest(), 4);
  const undo = sets.add('prj_live', 1);
  t.is(sets.lowest(), 1);
  undo();
  t.is(sets.lowest(), 4);
  t.throws(() => sets.remove('prj_none', 4), { message: /not a member/ });
});
