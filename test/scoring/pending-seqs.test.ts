// The writer's set of pending async events (scoring/pending-seqs.ts): the lowest and every one, as
// a plain sorted list of the same changes says, through adds, removes and the undos of rolled-back
// transactions in any order of reads.
import test from 'ava';
import { PendingSeqs } from '../../src/scoring/pending-seqs.js';

test('the lowest and every pending seq, through adds, removes and rollbacks, as a brute-force list says', (t) => {
  let seed = 11;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 200; round++) {
    const start = [3, 1, 2].slice(0, next(4));
    const pending = new PendingSeqs(start);
    let model = new Set(start);
    let seq = 10;
    for (let step = 0; step < 60; step++) {
      // A transaction of a few changes, committed or rolled back (undos in reverse order).
      const before = new Set(model);
      const undos: Array<() => void> = [];
      for (let change = next(4); change >= 0; change--) {
        const live = [...model];
        if (live.length > 0 && next(2) === 0) {
          const gone = live[next(live.length)]!;
          undos.push(pending.remove(gone));
          model.delete(gone);
        } else {
          seq += 1 + next(3);
          undos.push(pending.add(seq));
          model.add(seq);
        }
        // Reads in the middle of the transaction take marked entries out of the heap.
        if (next(2) === 0) t.is(pending.lowest(), model.size === 0 ? null : Math.min(...model));
      }
      if (next(3) === 0) {
        for (const undo of undos.reverse()) undo();
        model = before;
      }
      t.is(pending.lowest(), model.size === 0 ? null : Math.min(...model));
      t.deepEqual(pending.values(), [...model].sort((a, b) => a - b));
      t.is(pending.size, model.size);
    }
  }
});

test('an event taken out at the top and then rolled back is pending again, once', (t) => {
  const pending = new PendingSeqs([5, 7]);
  const undoRemove = pending.remove(5);
  t.is(pending.lowest(), 7, 'taken out at the top');
  undoRemove();
  t.is(pending.lowest(), 5);
  t.deepEqual(pending.values(), [5, 7]);
  t.is(pending.size, 2);
});
