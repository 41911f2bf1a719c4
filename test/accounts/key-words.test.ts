// The 128-bit keys of signal values in memory are decoded from the stored keyed hashes
// (accounts/hot-accounts.ts keyWords): the same words as decoding the base64url with Buffer.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { keyWords } from '../../src/accounts/hot-accounts.js';
import { keyedHash } from '../../src/signals/keyed-hash.js';

test('keyWords reads the first 16 bytes of a base64url hash as four little-endian words', (t) => {
  const secret = randomBytes(32);
  const out = new Uint32Array(4);
  for (let i = 0; i < 2000; i++) {
    const hash = i % 2 === 0 ? keyedHash(secret, 'email', `user${i}@example.com`) : randomBytes(32).toString('base64url');
    keyWords(hash, out);
    const bytes = Buffer.from(hash, 'base64url');
    t.deepEqual([...out], [bytes.readUInt32LE(0), bytes.readUInt32LE(4), bytes.readUInt32LE(8), bytes.readUInt32LE(12)], hash);
  }
  // Every digit, including - and _, in each position of a word.
  keyWords('-_-_-_-_-_-_-_-_-_-_-_-_', out);
  const edge = Buffer.from('-_-_-_-_-_-_-_-_-_-_-_-_', 'base64url');
  t.deepEqual([...out], [edge.readUInt32LE(0), edge.readUInt32LE(4), edge.readUInt32LE(8), edge.readUInt32LE(12)]);
});
