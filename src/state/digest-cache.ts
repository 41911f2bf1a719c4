// Digests (a SHA-256, an HMAC: what the owner computes) of recently seen strings, found by a 128-bit
// SipHash key of the string (keys.ts): Node makes a new Hash or Hmac object for each digest, a few
// microseconds, where a SipHash and a Map lookup cost well under one. Neither the strings nor
// anything reversible is kept: the Map's keys are SipHash keys under the hasher's secret key, its
// values the digests. Bounded: past `capacity` the oldest entry goes first. Pure.
import { FifoCache } from './fifo-cache.js';
import type { KeyDomain, KeyHasher } from './keys.js';

export class DigestCache {
  readonly #hasher: KeyHasher;
  readonly #domain: KeyDomain;
  readonly #digest: (value: string) => string;
  readonly #digests: FifoCache<string, string>;
  readonly #words = new Uint32Array(4);

  /** `digest` must be a function of the string alone: a cached digest stands for it. */
  constructor(hasher: KeyHasher, domain: KeyDomain, capacity: number, digest: (value: string) => string) {
    this.#hasher = hasher;
    this.#domain = domain;
    this.#digests = new FifoCache(capacity);
    this.#digest = digest;
  }

  /** digest(value), from the cache when the value was seen lately. */
  get(value: string): string {
    const words = this.#words;
    this.#hasher.key128(this.#domain, 0, value, words, 0);
    const key = String.fromCharCode(
      words[0]! & 0xffff, words[0]! >>> 16, words[1]! & 0xffff, words[1]! >>> 16,
      words[2]! & 0xffff, words[2]! >>> 16, words[3]! & 0xffff, words[3]! >>> 16,
    );
    let digest = this.#digests.get(key);
    if (digest === undefined) {
      digest = this.#digest(value);
      this.#digests.set(key, digest);
    }
    return digest;
  }

  get size(): number {
    return this.#digests.size;
  }
}
