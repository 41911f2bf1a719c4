// TransientMap (src/state/transient-map.ts): behaves as a Map for get, has, set, delete, size,
// entries, values and clear, checked against a plain Map under random operations; freed slots are reused.
import test from 'ava';
import { TransientMap } from '../../src/state/transient-map.js';

test('set, replace, delete and clear as a Map does', (t) => {
  const map = new TransientMap<string, number>();
  map.set('a', 1);
  map.set('b', 2);
  map.set('a', 10);
  t.is(map.size, 2);
  t.is(map.get('a'), 10);
  t.true(map.has('b'));
  t.true(map.delete('b'));
  t.false(map.delete('b'), 'deleted once');
  t.false(map.has('b'));
  t.is(map.get('b'), undefined);
  map.set('c', 3);
  t.deepEqual([...map.values()].sort(), [10, 3].sort());
  map.clear();
  t.is(map.size, 0);
  t.is(map.get('a'), undefined);
  map.set('d', 4);
  t.is(map.get('d'), 4, 'usable after clear');
});

test('random operations agree with a Map', (t) => {
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const map = new TransientMap<number, { id: number }>();
  const model = new Map<number, { id: number }>();
  for (let step = 0; step < 20_000; step++) {
    const key = random(40);
    const op = random(10);
    if (op < 5) {
      const value = { id: step };
      map.set(key, value);
      model.set(key, value);
    } else if (op < 9) {
      t.is(map.delete(key), model.delete(key));
    } else if (random(200) === 0) {
      map.clear();
      model.clear();
    }
    t.is(map.size, model.size);
    t.is(map.get(key), model.get(key));
    t.is(map.has(key), model.has(key));
  }
  t.deepEqual([...map.values()].map((value) => value.id).sort(), [...model.values()].map((value) => value.id).sort());
  const byKey = (entries: Iterable<[number, { id: number }]>): Array<[number, number]> => [...entries].map(([key, value]): [number, number] => [key, value.id]).sort((a, b) => a[0] - b[0]);
  t.deepEqual(byKey(map.entries()), byKey(model.entries()));
});

test('a deleted value is released at once: nothing of the map holds it', async (t) => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const map = new TransientMap<number, object>();
  let ref: WeakRef<object> | null = null;
  (() => {
    const value = { big: new Array(1000).fill(1) };
    ref = new WeakRef(value);
    map.set(1, value);
    map.set(2, {});
  })();
  map.delete(1);
  await new Promise((resolve) => setImmediate(resolve)); // a WeakRef keeps its target until the job ends
  gc();
  t.is(ref!.deref(), undefined);
  t.is(map.size, 1);
});
