// A hash index from fixed-width integer keys (1 to 4 uint32 words) to slot numbers, for the hot
// state's columns. The keys live once, in the index's key column (slot s at
// keys[s * words .. (s + 1) * words)), which the owner also reads as data: the two account numbers
// of a link, the account and signal of a holder, the packed public id of an account, the key of a
// signal value that erasure hands back. The table itself holds only slot numbers.
//
//   table entry (uint32): 0 = empty, else tag << 28 | (slot + 1)
//                         tag = the top 4 bits of the key's hash: 15 in 16 probes that meet
//                         another key are settled without reading the key column
//
// Compared with a table that keeps each key inline beside its value (src/state/key-table.ts before
// this, 12 or 20 bytes per table slot, and a second copy of the key in a column), an entry is 4
// bytes, so a table slot costs 4 / load (5–11 bytes) per entry. Linear probing from a hash of all
// the key's words (keys such as (account, signal) are small structured numbers, not hashes),
// growth by doubling at 3/4 full, deletion by backward shift (no tombstones). Pure.

const kMinCapacity = 1024;
const kSlotBits = 28;
const kSlotField = (1 << kSlotBits) - 1;
const kTagField = ~kSlotField;

/** The largest slot number an index can hold (slot + 1 fills the 28 bits). */
export const kMaxSlot = kSlotField - 1;

/** MurmurHash3's mixing over whole words (Appleby, public domain), finished by its fmix32. */
export function hashWords(keys: Uint32Array, at: number, words: number): number {
  let h = 0x5bd1e995;
  for (let w = 0; w < words; w++) {
    let k = Math.imul(keys[at + w]!, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export class SlotIndex {
  readonly words: number;
  #keys: Uint32Array;
  #table: Uint32Array;
  #mask: number;
  #size = 0;
  /** Where find() or findNext() last matched, so that findNext() goes on from there; -1 after a miss. */
  #cursor = -1;

  constructor(words: 1 | 2 | 3 | 4, initialSlots = kMinCapacity) {
    this.words = words;
    this.#keys = new Uint32Array(initialSlots * words);
    let capacity = kMinCapacity;
    while (capacity * 3 < initialSlots * 4) capacity *= 2;
    this.#table = new Uint32Array(capacity);
    this.#mask = capacity - 1;
  }

  /** The key column. It is replaced when it grows: read it again after reserve(). */
  get keys(): Uint32Array {
    return this.#keys;
  }

  /** Makes room in the key column for slots below `slots` (doubling). */
  reserve(slots: number): void {
    if (slots * this.words <= this.#keys.length) return;
    let length = this.#keys.length;
    while (length < slots * this.words) length *= 2;
    const keys = new Uint32Array(length);
    keys.set(this.#keys);
    this.#keys = keys;
  }

  /** Entries in the index. */
  get size(): number {
    return this.#size;
  }

  /** Bytes of the table and the key column. */
  get bytes(): number {
    return this.#table.byteLength + this.#keys.byteLength;
  }

  /** The slot whose key equals probe[at .. at + words), or -1. */
  find(probe: Uint32Array, at: number): number {
    const hash = hashWords(probe, at, this.words);
    return this.#scan(probe, at, hash, hash & this.#mask);
  }

  /**
   * The next slot with the same key after the one find() or findNext() returned (an index may hold
   * a key more than once: EventIndex does), or -1. Valid only with nothing inserted or removed
   * since.
   */
  findNext(probe: Uint32Array, at: number): number {
    if (this.#cursor < 0) return -1;
    return this.#scan(probe, at, hashWords(probe, at, this.words), (this.#cursor + 1) & this.#mask);
  }

  /** Indexes `slot` (≤ kMaxSlot) under the key already written at its place in the key column. */
  insert(slot: number): void {
    if ((this.#size + 1) * 4 > this.#table.length * 3) this.#grow();
    this.#place(this.#table, this.#mask, slot);
    this.#size++;
  }

  /** Drops `slot` from the index; its key must still be in the column. True when it was there. */
  remove(slot: number): boolean {
    const table = this.#table;
    const mask = this.#mask;
    const keys = this.#keys;
    const words = this.words;
    let hole = hashWords(keys, slot * words, words) & mask;
    for (;;) {
      const entry = table[hole]!;
      if (entry === 0) return false;
      if ((entry & kSlotField) === slot + 1) break;
      hole = (hole + 1) & mask;
    }
    table[hole] = 0;
    this.#size--;
    this.#cursor = -1;
    // Backward shift: move later entries of the run into the hole when their home allows it, so
    // that no probe run is ever broken by an empty entry.
    let position = (hole + 1) & mask;
    while (table[position] !== 0) {
      const home = hashWords(keys, ((table[position]! & kSlotField) - 1) * words, words) & mask;
      // The entry may move to `hole` if `hole` lies cyclically in [home, position).
      if (((hole - home) & mask) < ((position - home) & mask)) {
        table[hole] = table[position]!;
        table[position] = 0;
        hole = position;
      }
      position = (position + 1) & mask;
    }
    return true;
  }

  /** Calls fn(slot) for every indexed slot (in table order). */
  forEach(fn: (slot: number) => void): void {
    const table = this.#table;
    for (let position = 0; position < table.length; position++) {
      if (table[position] !== 0) fn((table[position]! & kSlotField) - 1);
    }
  }

  #scan(probe: Uint32Array, at: number, hash: number, position: number): number {
    const table = this.#table;
    const keys = this.#keys;
    const words = this.words;
    const mask = this.#mask;
    const tag = hash & kTagField;
    for (;;) {
      const entry = table[position]!;
      if (entry === 0) {
        this.#cursor = -1;
        return -1;
      }
      if ((entry & kTagField) === tag) {
        const slot = (entry & kSlotField) - 1;
        const base = slot * words;
        let w = 0;
        while (w < words && keys[base + w] === probe[at + w]) w++;
        if (w === words) {
          this.#cursor = position;
          return slot;
        }
      }
      position = (position + 1) & mask;
    }
  }

  #place(table: Uint32Array, mask: number, slot: number): void {
    const hash = hashWords(this.#keys, slot * this.words, this.words);
    let position = hash & mask;
    while (table[position] !== 0) position = (position + 1) & mask;
    table[position] = ((hash & kTagField) | (slot + 1)) >>> 0;
  }

  #grow(): void {
    const old = this.#table;
    const table = new Uint32Array(old.length * 2);
    const mask = table.length - 1;
    for (let position = 0; position < old.length; position++) {
      if (old[position] !== 0) this.#place(table, mask, (old[position]! & kSlotField) - 1);
    }
    this.#table = table;
    this.#mask = mask;
    this.#cursor = -1;
  }
}
