// The typed-array hash table of the hot state, against a Map as the model (fast-check).
import test from 'ava';
import fc from 'fast-check';
import { KeyTable } from '../../src/state/key-table.js';

const key = (words: number, n: number): Uint32Array => {
  const out = new Uint32Array(words);
  for (let w = 0; w < words; w++) out[w] = Math.imul(n + 1, 0x9e3779b1 + w * 0x85ebca6b) >>> 0;
  // Many keys share their low bits: long probe runs, the case deletion must get right.
  out[words - 1] = (n % 7) * 1024;
  return out;
};

for (const words of [2, 4] as const) {
  test(`${words * 32}-bit keys: set, get, delete and growth agree with a Map`, (t) => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('set', 'delete'), fc.integer({ min: 0, max: 300 }), fc.nat(1e9)), { maxLength: 3000 }), (ops) => {
        const table = new KeyTable(words);
        const model = new Map<number, number>();
        for (const [op, n, value] of ops) {
          if (op === 'set') {
            table.set(key(words, n), 0, value);
            model.set(n, value);
          } else {
            if (table.delete(key(words, n)) !== model.delete(n)) return false;
          }
        }
        if (table.size !== model.size) return false;
        for (let n = 0; n <= 300; n++) if (table.get(key(words, n)) !== (model.get(n) ?? -1)) return false;
        let seen = 0;
        table.forEach(() => seen++);
        return seen === model.size;
      }),
      { seed: 42, numRuns: 200 },
    );
    t.pass();
  });
}

test('a key at an offset in a larger array', (t) => {
  const table = new KeyTable(2);
  const keys = Uint32Array.of(9, 9, 1, 2, 3, 4);
  table.set(keys, 2, 7);
  t.is(table.get(Uint32Array.of(1, 2)), 7);
  t.is(table.get(keys, 4), -1);
});

test('grows past its first capacity and keeps every entry', (t) => {
  const table = new KeyTable(4);
  const keyOf = (n: number): Uint32Array => Uint32Array.of(n, n ^ 0x5555, n * 3, Math.imul(n, 0x9e3779b1) >>> 0);
  for (let n = 0; n < 20_000; n++) table.set(keyOf(n), 0, n);
  for (let n = 0; n < 20_000; n += 2) t.true(table.delete(keyOf(n)));
  t.is(table.size, 10_000);
  let wrong = 0;
  for (let n = 0; n < 20_000; n++) if (table.get(keyOf(n)) !== (n % 2 === 0 ? -1 : n)) wrong++;
  t.is(wrong, 0);
});
