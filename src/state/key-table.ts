// An open-addressing hash table from fixed-width integer keys (2 or 4 uint32 words: 64 or 128-bit
// keyed hashes, src/state/keys.ts) to uint32 values, in typed arrays: no object and no string per
// entry, so its memory is `capacity × (words + 1) × 4` bytes and the garbage collector never walks
// it. Linear probing; deletion shifts the following entries back (no tombstones), so lookups stay
// short however many entries come and go. Grows by doubling at 3/4 full. Pure.
//
// The keys are uniformly distributed hashes already, so the slot is the key's low word masked.

const kMinCapacity = 1024;

export class KeyTable {
  readonly words: number;
  #keys: Uint32Array;
  /** value + 1; 0 marks an empty slot. */
  #values: Uint32Array;
  #mask: number;
  #size = 0;

  constructor(words: 2 | 4, initialCapacity = kMinCapacity) {
    this.words = words;
    let capacity = kMinCapacity;
    while (capacity < initialCapacity) capacity *= 2;
    this.#keys = new Uint32Array(capacity * words);
    this.#values = new Uint32Array(capacity);
    this.#mask = capacity - 1;
  }

  get size(): number {
    return this.#size;
  }

  /** Bytes held by the arrays. */
  get bytes(): number {
    return this.#keys.byteLength + this.#values.byteLength;
  }

  /** The value of the key at key[at..at+words), or -1. */
  get(key: Uint32Array, at = 0): number {
    const slot = this.#find(key, at);
    return slot < 0 ? -1 : this.#values[slot]! - 1;
  }

  /** Sets the key's value (0 ≤ value < 2^32 − 1). */
  set(key: Uint32Array, at: number, value: number): void {
    let slot = this.#find(key, at);
    if (slot >= 0) {
      this.#values[slot] = value + 1;
      return;
    }
    if ((this.#size + 1) * 4 > this.#values.length * 3) this.#grow();
    slot = this.#probeStart(key, at);
    while (this.#values[slot] !== 0) slot = (slot + 1) & this.#mask;
    this.#keys.set(key.subarray(at, at + this.words), slot * this.words);
    this.#values[slot] = value + 1;
    this.#size++;
  }

  /** Removes the key; true when it was there. */
  delete(key: Uint32Array, at = 0): boolean {
    let hole = this.#find(key, at);
    if (hole < 0) return false;
    this.#values[hole] = 0;
    this.#size--;
    // Backward-shift: move later entries of the run into the hole when their probe start allows.
    let slot = (hole + 1) & this.#mask;
    while (this.#values[slot] !== 0) {
      const home = this.#probeStart(this.#keys, slot * this.words);
      // The entry may move to `hole` if `hole` lies cyclically in [home, slot).
      const distanceToSlot = (slot - home) & this.#mask;
      const distanceToHole = (hole - home) & this.#mask;
      if (distanceToHole < distanceToSlot) {
        this.#keys.copyWithin(hole * this.words, slot * this.words, slot * this.words + this.words);
        this.#values[hole] = this.#values[slot]!;
        this.#values[slot] = 0;
        hole = slot;
      }
      slot = (slot + 1) & this.#mask;
    }
    return true;
  }

  /** Calls fn(key words view, at, value) for every entry (unordered). */
  forEach(fn: (keys: Uint32Array, at: number, value: number) => void): void {
    for (let slot = 0; slot < this.#values.length; slot++) {
      if (this.#values[slot] !== 0) fn(this.#keys, slot * this.words, this.#values[slot]! - 1);
    }
  }

  #probeStart(key: Uint32Array, at: number): number {
    return key[at + this.words - 1]! & this.#mask;
  }

  #find(key: Uint32Array, at: number): number {
    const words = this.words;
    let slot = this.#probeStart(key, at);
    for (;;) {
      if (this.#values[slot] === 0) return -1;
      const base = slot * words;
      let same = true;
      for (let w = 0; w < words; w++) {
        if (this.#keys[base + w] !== key[at + w]) {
          same = false;
          break;
        }
      }
      if (same) return slot;
      slot = (slot + 1) & this.#mask;
    }
  }

  #grow(): void {
    const oldKeys = this.#keys;
    const oldValues = this.#values;
    const capacity = oldValues.length * 2;
    this.#keys = new Uint32Array(capacity * this.words);
    this.#values = new Uint32Array(capacity);
    this.#mask = capacity - 1;
    for (let slot = 0; slot < oldValues.length; slot++) {
      if (oldValues[slot] === 0) continue;
      let target = this.#probeStart(oldKeys, slot * this.words);
      while (this.#values[target] !== 0) target = (target + 1) & this.#mask;
      this.#keys.set(oldKeys.subarray(slot * this.words, slot * this.words + this.words), target * this.words);
      this.#values[target] = oldValues[slot]!;
    }
  }
}
