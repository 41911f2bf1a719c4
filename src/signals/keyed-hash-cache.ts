// The stored keyed hashes of recently seen signal values (keyed-hash.ts: HMAC-SHA256 under the
// install secret), found by a 128-bit SipHash key of the value (state/keys.ts): an HMAC costs a
// few microseconds in Node (a new Hmac object per call), a SipHash and a Map lookup well under
// one, and an event has up to five values. Neither the values nor anything reversible is kept:
// the Map's keys are SipHash keys under a key derived from the install secret, its values the
// HMACs the store keeps anyway. Bounded: the oldest entry goes first. Owned by the HTTP thread.
import { KeyDomain, type KeyHasher } from '../state/keys.js';
import { keyedHash, type SignalType } from './keyed-hash.js';

/** Values kept: ~100 bytes each (an 8-character key, a 43-character hash, the Map's entry). */
export const kKeyedHashCacheSize = 200_000;

export class KeyedHashCache {
  readonly #secret: Buffer;
  readonly #hasher: KeyHasher;
  readonly #capacity: number;
  readonly #hashes = new Map<string, string>();
  readonly #words = new Uint32Array(4);

  constructor(secret: Buffer, hasher: KeyHasher, capacity = kKeyedHashCacheSize) {
    this.#secret = secret;
    this.#hasher = hasher;
    this.#capacity = capacity;
  }

  /** keyedHash(secret, type, value), from the cache when the value was seen lately. */
  hash(type: SignalType, value: string): string {
    const words = this.#words;
    this.#hasher.key128(KeyDomain.StoredHash, 0, `${type}\u0000${value}`, words, 0);
    const key = String.fromCharCode(
      words[0]! & 0xffff, words[0]! >>> 16, words[1]! & 0xffff, words[1]! >>> 16,
      words[2]! & 0xffff, words[2]! >>> 16, words[3]! & 0xffff, words[3]! >>> 16,
    );
    let hash = this.#hashes.get(key);
    if (hash === undefined) {
      hash = keyedHash(this.#secret, type, value);
      if (this.#hashes.size >= this.#capacity) this.#hashes.delete(this.#hashes.keys().next().value!);
      this.#hashes.set(key, hash);
    }
    return hash;
  }

  get size(): number {
    return this.#hashes.size;
  }
}
