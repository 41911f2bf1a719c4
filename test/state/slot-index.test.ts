// The hash index of the hot state against a Set as the model (fast-check), and the ways owners use
// it: keys at an offset, growth, keys held more than once.
import test from 'ava';
import fc from 'fast-check';
import { SlotIndex } from '../../src/state/slot-index.js';
import { column, grown } from '../../src/state/slots.js';

/** Structured keys, as holders and links use: small numbers, many sharing words. */
function writeKey(index: SlotIndex, slot: number): void {
  index.reserve(slot + 1);
  const keys = index.keys;
  for (let w = 0; w < index.words; w++) keys[slot * index.words + w] = w === 0 ? slot % 7 : w === 1 ? slot : Math.imul(slot, 0x9e3779b1) >>> 0;
}

function probeOf(words: number, slot: number): Uint32Array {
  const probe = new Uint32Array(words);
  for (let w = 0; w < words; w++) probe[w] = w === 0 ? slot % 7 : w === 1 ? slot : Math.imul(slot, 0x9e3779b1) >>> 0;
  return probe;
}

for (const words of [2, 4] as const) {
  test(`${words * 32}-bit keys: insert, find, remove and growth agree with a Set`, (t) => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('insert', 'remove'), fc.integer({ min: 0, max: 3000 })), { maxLength: 4000 }), (ops) => {
        const index = new SlotIndex(words);
        const model = new Set<number>();
        for (const [op, slot] of ops) {
          if (op === 'insert') {
            if (model.has(slot)) continue;
            writeKey(index, slot);
            index.insert(slot);
            model.add(slot);
          } else if (index.remove(slot) !== model.delete(slot)) {
            return false;
          }
        }
        if (index.size !== model.size) return false;
        for (let slot = 0; slot <= 3000; slot++) if (index.find(probeOf(words, slot), 0) !== (model.has(slot) ? slot : -1)) return false;
        let seen = 0;
        for (let segment = 0; segment < SlotIndex.segments; segment++) {
          index.forEachIn(segment, (slot) => {
            if (model.has(slot)) seen++;
          });
        }
        return seen === model.size;
      }),
      { seed: 42, numRuns: 100 },
    );
    t.pass();
  });
}

test('a probe at an offset in a larger array', (t) => {
  const index = new SlotIndex(2);
  writeKey(index, 5);
  index.insert(5);
  const probe = new Uint32Array(6);
  probe.set(probeOf(2, 5), 3);
  t.is(index.find(probe, 3), 5);
  t.is(index.find(probe, 0), -1);
});

test('grows past its first capacity and keeps every entry', (t) => {
  const index = new SlotIndex(4);
  for (let slot = 0; slot < 50_000; slot++) {
    writeKey(index, slot);
    index.insert(slot);
  }
  for (let slot = 0; slot < 50_000; slot += 2) t.true(index.remove(slot));
  t.is(index.size, 25_000);
  let wrong = 0;
  for (let slot = 0; slot < 50_000; slot++) if (index.find(probeOf(4, slot), 0) !== (slot % 2 === 0 ? -1 : slot)) wrong++;
  t.is(wrong, 0);
});

test('a key held by several slots: find, then findNext, then -1', (t) => {
  const index = new SlotIndex(2);
  index.reserve(3);
  index.keys.set([7, 7, 1, 2, 7, 7]);
  for (const slot of [0, 1, 2]) index.insert(slot);
  const probe = Uint32Array.of(7, 7);
  const found = [index.find(probe, 0), index.findNext(probe, 0), index.findNext(probe, 0)].sort();
  t.deepEqual(found, [-1, 0, 2]);
  t.true(index.remove(0));
  t.is(index.find(probe, 0), 2);
  t.is(index.findNext(probe, 0), -1);
});

test('columns grow in place on a resizable buffer, and by copying otherwise; new elements are zero', (t) => {
  const resizable = column(Float64Array, 4, 1 << 20);
  resizable.set([1, 2, 3, 4]);
  const same = grown(resizable, 4096);
  t.is(same, resizable);
  t.is(same.length, 4096);
  t.deepEqual([...same.subarray(0, 6)], [1, 2, 3, 4, 0, 0]);
  const plain = Uint32Array.of(7, 8);
  const copy = grown(plain, 5);
  t.not(copy, plain);
  t.deepEqual([...copy], [7, 8, 0, 0, 0]);
  // Past its reservation a resizable column is copied too.
  const small = column(Uint8Array, 2, 4);
  t.not(grown(small, 8), small);
});

test('presized, an index takes that many entries without growing its tables, and keeps what it held', (t) => {
  const index = new SlotIndex(4);
  for (let slot = 0; slot < 1000; slot++) {
    writeKey(index, slot);
    index.insert(slot);
  }
  index.presize(200_000);
  const tables = (): number => index.bytes(0).held;
  const presized = tables();
  for (let slot = 0; slot < 1000; slot++) t.is(index.find(probeOf(4, slot), 0), slot, 'held before, found after');
  for (let slot = 1000; slot < 200_000; slot++) {
    writeKey(index, slot);
    index.insert(slot);
  }
  t.is(tables(), presized, 'no table doubled');
  t.is(index.size, 200_000);
  for (let slot = 0; slot < 200_000; slot += 97) t.is(index.find(probeOf(4, slot), 0), slot);
  // Presizing for fewer than it holds changes nothing.
  index.presize(10);
  t.is(tables(), presized);
});
