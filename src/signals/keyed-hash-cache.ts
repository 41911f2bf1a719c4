// The stored keyed hashes of recently seen signal values (keyed-hash.ts: HMAC-SHA256 under the
// install secret), from a DigestCache (state/digest-cache.ts): an event has up to five values, and
// an HMAC costs a few microseconds. The cache holds SipHash keys of the values under a key derived
// from the install secret, and the HMACs the store keeps anyway. Owned by the HTTP thread.
import { DigestCache } from '../state/digest-cache.js';
import { KeyDomain, type KeyHasher } from '../state/keys.js';
import { keyedHashOf, type SignalType } from './keyed-hash.js';

/** Values kept: each ~38 bytes of index and slot and its 43-character hash (bench/state/digest-cache.bench.ts). */
export const kKeyedHashCacheSize = 200_000;

export class KeyedHashCache {
  readonly #cache: DigestCache;

  constructor(secret: Buffer, hasher: KeyHasher, capacity = kKeyedHashCacheSize) {
    this.#cache = new DigestCache(hasher, KeyDomain.StoredHash, capacity, (text) => keyedHashOf(secret, text));
  }

  /** keyedHash(secret, type, value), from the cache when the value was seen lately. */
  hash(type: SignalType, value: string): string {
    return this.#cache.get(`${type}\u0000${value}`);
  }

  get size(): number {
    return this.#cache.size;
  }
}
