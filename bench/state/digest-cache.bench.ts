// By hand (about 20 s): the DigestCache (src/state/digest-cache.ts) that keeps the keyed hashes of
// recent signal values and the digests of API keys, at the size the server uses (200,000): ns per
// get that finds its value, per get that misses once full (the digest itself left out: here it is
// a constant), and bytes per entry.
//   node dist/bench/state/digest-cache.bench.js     (after npm run build)
import { randomBytes } from 'node:crypto';
import { Bench } from 'tinybench';
import { kKeyedHashCacheSize } from '../../src/signals/keyed-hash-cache.js';
import { DigestCache } from '../../src/state/digest-cache.js';
import { KeyDomain, KeyHasher } from '../../src/state/keys.js';

const kCapacity = kKeyedHashCacheSize;
const kDigest = 'x'.repeat(43);
const hasher = new KeyHasher(randomBytes(32));
// Values as the server hashes them: "<type>\0<value>".
const values = Array.from({ length: kCapacity }, (_, i) => `email\u0000user.${i}@example-${i % 97}.com`);

const cache = new DigestCache(hasher, KeyDomain.StoredHash, kCapacity, () => kDigest);
for (const value of values) cache.get(value);
const bytes = cache.bytes();

let hit = 0;
let miss = 0;
const bench = new Bench({ time: 3000 });
bench
  .add('get, found (200,000 values cached, in random order)', () => {
    hit = (hit + 7_919) % kCapacity;
    cache.get(values[hit]!);
  })
  .add('get, not found (the oldest value goes)', () => {
    cache.get(`email\u0000new.${miss++}@example.com`);
  });
await bench.run();
for (const task of bench.tasks) {
  const result = task.result;
  if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
  console.log(`${task.name}: ${(result.latency.mean * 1e6).toFixed(0)} ns (p99 ${(result.latency.p99 * 1e6).toFixed(0)})`);
}
console.log(`bytes per entry: ${(bytes.used / kCapacity).toFixed(1)} used, ${(bytes.held / kCapacity).toFixed(1)} held (the key index and the digests' slots; the digest strings, 43 characters, not counted)`);
