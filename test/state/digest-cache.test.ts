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
