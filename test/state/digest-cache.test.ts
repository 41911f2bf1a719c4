// DigestCache (src/state/digest-cache.ts) answers what its digest function answers, cached or not,
// and stays within its capacity.
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { DigestCache } from '../../src/state/digest-cache.js';
import { KeyDomain, KeyHasher } from '../../src/state/keys.js';

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

test('the digest of every value, whether new, cached or evicted; computed once while cached', (t) => {
  let computed = 0;
  const cache = new DigestCache(new KeyHasher(randomBytes(32)), KeyDomain.ApiKeyHash, 3, (value) => {
    computed++;
    return sha256(value);
  });
  const values = ['sk_live_aaaaaaaaaaaaaaaaaaaaaa', 'sk_live_bbbbbbbbbbbbbbbbbbbbbb', '', 'ü'.repeat(700), 'pk_test_cccccccccccccccccccccc'];
  for (let round = 0; round < 3; round++) {
    for (const value of values) t.is(cache.get(value), sha256(value));
  }
  t.is(cache.size, 3, 'bounded');
  t.is(computed, 15, 'five values through a cache of three, in turn: each was evicted before it came back');
  const before = computed;
  t.is(cache.get(values[4]!), sha256(values[4]!));
  t.is(computed, before, 'the last value is still cached');
});

test('many values in random order: the same digests and the same misses as a first-in-first-out cache of strings', (t) => {
  let computed = 0;
  const capacity = 500;
  const cache = new DigestCache(new KeyHasher(randomBytes(32)), KeyDomain.StoredHash, capacity, (value) => {
    computed++;
    return sha256(value);
  });
  // The model: the values kept, oldest first.
  const kept: string[] = [];
  const keptSet = new Set<string>();
  let modelMisses = 0;
  let seed = 7;
  for (let i = 0; i < 20_000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const value = `value-${(seed >>> 8) % 1_200}`;
    t.is(cache.get(value), sha256(value));
    if (!keptSet.has(value)) {
      modelMisses++;
      if (kept.length === capacity) keptSet.delete(kept.shift()!);
      kept.push(value);
      keptSet.add(value);
    }
  }
  t.is(computed, modelMisses);
  t.is(keptSet.size, capacity, 'the test filled the cache');
  t.is(cache.size, capacity);
});
