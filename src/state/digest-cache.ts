// Digests (a SHA-256, an HMAC: what the owner computes) of recently seen strings, found by a 128-bit
// SipHash key of the string (keys.ts): Node makes a new Hash or Hmac object for each digest, a few
// microseconds, where a SipHash and a lookup cost well under one. Neither the strings nor anything
// reversible is kept: the keys are SipHash keys under the hasher's secret key, in a SlotIndex's
// typed arrays (no JS string or Map entry per key, which a Map cost: bench/README.md, step 30),
// beside each slot's digest. Bounded: past `capacity` the oldest entry goes first. Pure.
import type { KeyDomain, KeyHasher } from './keys.js';
import { SlotIndex } from './slot-index.js';
import { sumBytes, type Bytes } from './slots.js';

export class DigestCache {
  readonly #hasher: KeyHasher;
  readonly #domain: KeyDomain;
  readonly #digest: (value: string) => string;
  readonly #capacity: number;
  /** Slot → its SipHash key (the index's key column, 4 words a slot) and its digest. */
  readonly #index = new SlotIndex(4);
  readonly #digests: string[] = [];
  /** The slot the next new entry takes: entries fill the slots in turn, and when all are taken the oldest goes. */
  #next = 0;
  readonly #probe = new Uint32Array(4);

  /** `digest` must be a function of the string alone: a cached digest stands for it. */
  constructor(hasher: KeyHasher, domain: KeyDomain, capacity: number, digest: (value: string) => string) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`a cache holds at least one entry, not ${capacity}`);
    this.#hasher = hasher;
    this.#domain = domain;
    this.#capacity = capacity;
    this.#digest = digest;
  }

  /** digest(value), from the cache when the value was seen lately. */
  get(value: string): string {
    const probe = this.#probe;
    this.#hasher.key128(this.#domain, 0, value, probe, 0);
    const index = this.#index;
    const found = index.find(probe, 0);
    if (found >= 0) return this.#digests[found]!;
    const digest = this.#digest(value);
    const slot = this.#next;
    this.#next = (slot + 1) % this.#capacity;
    if (slot < this.#digests.length) index.remove(slot);
    else index.reserve(slot + 1);
    index.keys.set(probe, slot * 4);
    this.#digests[slot] = digest;
    index.insert(slot);
    return digest;
  }

  get size(): number {
    return this.#index.size;
  }

  /** Bytes of the key index (its table and key column) and of the digests' slots (8 each; the digest strings not counted). */
  bytes(): Bytes {
    const slots = this.#digests.length;
    return sumBytes(this.#index.bytes(slots), { held: 8 * slots, used: 8 * slots });
  }
}
