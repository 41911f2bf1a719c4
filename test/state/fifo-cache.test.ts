// FifoCache (src/state/fifo-cache.ts): bounded, the oldest entry goes first, a replaced entry keeps
// its age, a deleted one frees its place, and an entry goes once 2 × capacity entries were added
// after it; checked against a plain model under random operations.
import test from 'ava';
import { FifoCache } from '../../src/state/fifo-cache.js';

test('the oldest entry goes first; a replaced one keeps its age; a deleted one is gone', (t) => {
  const cache = new FifoCache<string, number>(3);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  cache.set('a', 10); // replaced: still the oldest
  cache.set('d', 4);
  t.false(cache.has('a'), 'a was the oldest');
  t.deepEqual(['b', 'c', 'd'].map((key) => cache.get(key)), [2, 3, 4]);
  t.true(cache.delete('c'));
  t.false(cache.delete('c'), 'deleted once');
  t.is(cache.size, 2);
  cache.set('e', 5);
  cache.set('f', 6);
  t.is(cache.size, 3, 'never more than the capacity');
  t.deepEqual(['b', 'c', 'd', 'e', 'f'].map((key) => cache.get(key)), [undefined, undefined, 4, 5, 6]);
});

test('a cache of one holds the last entry', (t) => {
  const cache = new FifoCache<number, string>(1);
  cache.set(1, 'one');
  cache.set(2, 'two');
  t.is(cache.get(1), undefined);
  t.is(cache.get(2), 'two');
  t.is(cache.size, 1);
});

test('an entry that outlives 2 × capacity later ones, all deleted, goes too', (t) => {
  const cache = new FifoCache<string, number>(3);
  cache.set('kept', 0);
  for (let i = 1; i <= 5; i++) {
    cache.set(`brief-${i}`, i);
    cache.delete(`brief-${i}`);
  }
  t.is(cache.get('kept'), 0, 'five added after it');
  cache.set('sixth', 6);
  t.is(cache.get('kept'), undefined, 'six (2 × 3) added after it');
  t.is(cache.get('sixth'), 6);
  t.is(cache.size, 1);
});

test('a capacity below one, or not whole, is refused', (t) => {
  for (const capacity of [0, -1, 1.5, Number.NaN]) t.throws(() => new FifoCache(capacity), { instanceOf: RangeError });
});

test('random sets, deletes and reads answer as a plain first-in-first-out model does', (t) => {
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (const capacity of [1, 2, 5, 64]) {
    const cache = new FifoCache<number, number>(capacity);
    const model: Array<[number, number, number]> = []; // key, value, position; oldest first
    let added = 0;
    for (let step = 0; step < 20_000; step++) {
      const key = random(capacity * 3);
      const op = random(10);
      const at = model.findIndex(([k]) => k === key);
      if (op < 6) {
        const value = step;
        cache.set(key, value);
        if (at >= 0) model[at]![1] = value;
        else {
          if (model.length === capacity) model.shift();
          while (model.length > 0 && model[0]![2] <= added - 2 * capacity) model.shift();
          model.push([key, value, added++]);
        }
      } else if (op < 8) {
        t.is(cache.delete(key), at >= 0);
        if (at >= 0) model.splice(at, 1);
      } else {
        t.is(cache.get(key), at >= 0 ? model[at]![1] : undefined);
      }
      if (cache.size !== model.length) t.fail(`size ${cache.size}, model ${model.length} at step ${step}`);
    }
  }
});
