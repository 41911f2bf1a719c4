// The cache of stored keyed hashes (src/signals/keyed-hash-cache.ts) answers exactly what
// keyedHash does, for every type and value, whether the value is cached, new or evicted.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { keyedHash, type SignalType } from '../../src/signals/keyed-hash.js';
import { KeyedHashCache } from '../../src/signals/keyed-hash-cache.js';
import { KeyHasher } from '../../src/state/keys.js';

const kTypes: readonly SignalType[] = ['email', 'phone', 'fp', 'ip', 'card'];

test('the same hashes as keyedHash: new, cached, and after the oldest were evicted', (t) => {
  const secret = randomBytes(32);
  const cache = new KeyedHashCache(secret, new KeyHasher(secret), 50);
  const values = ['jane@example.com', '+447700900123', 'fp_abc', '203.0.113.7', '411111:1111', '', 'ünïcødé@例え.jp', 'x'.repeat(2000)];
  for (let round = 0; round < 3; round++) {
    for (const type of kTypes) {
      for (const value of values) t.is(cache.hash(type, value), keyedHash(secret, type, value), `${type} ${value.slice(0, 20)} (round ${round})`);
    }
  }
  t.true(cache.size <= 50, 'bounded');
  // One value under two types: two hashes, never the other's.
  t.not(cache.hash('email', 'same'), cache.hash('fp', 'same'));
});

test('a value of another install secret is not answered from this cache', (t) => {
  const first = randomBytes(32);
  const second = randomBytes(32);
  const cache = new KeyedHashCache(first, new KeyHasher(first));
  const other = new KeyedHashCache(second, new KeyHasher(second));
  t.not(cache.hash('email', 'jane@example.com'), other.hash('email', 'jane@example.com'));
  t.is(other.hash('email', 'jane@example.com'), keyedHash(second, 'email', 'jane@example.com'));
});
