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
// Compared with a table that keeps each key inline beside its value (the KeyTable this replaced:
// 12 or 20 bytes per table slot, and a second copy of the key in a column), an entry is 4
// bytes, so a table slot costs 4 / load (5–11 bytes) per entry. Linear probing from a hash of all
// the key's words (keys such as (account, signal) are small structured numbers, not hashes),
// deletion by backward shift (no tombstones).
//
// The table is 256 segments, chosen by 8 bits of the hash, each doubling on its own at 3/4 full:
// growing rehashes 1/256 of the entries (each a random read of the key column): measured here
// under load, ~4 ms per segment as 3M entries grew, where one table of 1.5M entries stalled the
// owning thread for ~0.6 s. Pure.

import { column, columnBytes, grown, sumBytes, type Bytes } from './slots.js';

/** A SlotIndex as plain data (parts(), fromParts()). */
export interface SlotIndexParts {
  readonly words: 1 | 2 | 3 | 4;
  readonly keys: Uint32Array;
  readonly tables: readonly Uint32Array[];
  readonly sizes: Uint32Array;
  readonly size: number;
}

const kMinSlots = 1024;
const kSegmentBits = 8;
const kSegments = 1 << kSegmentBits;
/** The hash bits that choose a segment: above those of a position (segments of up to 2^20 entries). */
const kSegmentShift = 20;
const kMinSegmentCapacity = 8;
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
  readonly #tables: Uint32Array[] = [];
  readonly #sizes = new Uint32Array(kSegments);
  #size = 0;
  /** Where find() or findNext() last matched, so that findNext() goes on from there; -1 after a miss. */
  #cursor = -1;

  constructor(words: 1 | 2 | 3 | 4, initialSlots = kMinSlots) {
    this.words = words;
    this.#keys = column(Uint32Array, Math.max(kMinSlots, initialSlots) * words, (kMaxSlot + 1) * words);
    let capacity = kMinSegmentCapacity;
    while (capacity * kSegments * 3 < initialSlots * 4) capacity *= 2;
    for (let segment = 0; segment < kSegments; segment++) this.#tables.push(new Uint32Array(capacity));
  }

  /** Its state as plain data, to hand to another thread; this index is not used after. */
  parts(): SlotIndexParts {
    return { words: this.words as 1 | 2 | 3 | 4, keys: this.#keys, tables: this.#tables, sizes: this.#sizes, size: this.#size };
  }

  /** The index whose parts() these are. */
  static fromParts(parts: SlotIndexParts): SlotIndex {
    const index = new SlotIndex(parts.words, 0);
    index.#keys = parts.keys;
    index.#tables.splice(0, kSegments, ...parts.tables);
    index.#sizes.set(parts.sizes);
    index.#size = parts.size;
    return index;
  }

  /** The key column. It may be replaced when it grows: read it again after reserve(). */
  get keys(): Uint32Array {
    return this.#keys;
  }

  /** Makes room in the key column for slots below `slots` (doubling). */
  reserve(slots: number): void {
    if (slots * this.words <= this.#keys.length) return;
    let length = this.#keys.length;
    while (length < slots * this.words) length *= 2;
    this.#keys = grown(this.#keys, length);
  }

  /** Entries in the index. */
  get size(): number {
    return this.#size;
  }

  /** Bytes of the table and the key column, slots below `high` written. */
  bytes(high: number): Bytes {
    let tables = this.#sizes.byteLength;
    for (const table of this.#tables) tables += table.byteLength;
    return sumBytes({ held: tables, used: tables }, columnBytes(high * this.words, this.#keys));
  }

  /** The slot whose key equals probe[at .. at + words), or -1. */
  find(probe: Uint32Array, at: number): number {
    const hash = hashWords(probe, at, this.words);
    const segment = (hash >>> kSegmentShift) & (kSegments - 1);
    return this.#scan(probe, at, hash, segment, hash & (this.#tables[segment]!.length - 1));
  }

  /**
   * The next slot with the same key after the one find() or findNext() returned (an index may hold
   * a key more than once: EventIndex does), or -1. Valid only with nothing inserted or removed
   * since.
   */
  findNext(probe: Uint32Array, at: number): number {
    if (this.#cursor < 0) return -1;
    const hash = hashWords(probe, at, this.words);
    const segment = (hash >>> kSegmentShift) & (kSegments - 1);
    return this.#scan(probe, at, hash, segment, (this.#cursor + 1) & (this.#tables[segment]!.length - 1));
  }

  /** Indexes `slot` (≤ kMaxSlot) under the key already written at its place in the key column. */
  insert(slot: number): void {
    const hash = hashWords(this.#keys, slot * this.words, this.words);
    const segment = (hash >>> kSegmentShift) & (kSegments - 1);
    if ((this.#sizes[segment]! + 1) * 4 > this.#tables[segment]!.length * 3) this.#grow(segment);
    place(this.#tables[segment]!, hash, slot);
    this.#sizes[segment]!++;
    this.#size++;
  }

  /** Drops `slot` from the index; its key must still be in the column. True when it was there. */
  remove(slot: number): boolean {
    const keys = this.#keys;
    const words = this.words;
    const hash = hashWords(keys, slot * words, words);
    const segment = (hash >>> kSegmentShift) & (kSegments - 1);
    const table = this.#tables[segment]!;
    const mask = table.length - 1;
    let hole = hash & mask;
    for (;;) {
      const entry = table[hole]!;
      if (entry === 0) return false;
      if ((entry & kSlotField) === slot + 1) break;
      hole = (hole + 1) & mask;
    }
    table[hole] = 0;
    this.#sizes[segment]!--;
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

  /** The segments forEachIn() takes: each holds about 1/256 of the entries. */
  static readonly segments = kSegments;

  /**
   * Calls fn(slot) for every slot indexed in `segment` (0 ≤ segment < SlotIndex.segments), in
   * table order: a walk a segment at a time never holds the owning thread for the whole index.
   */
  forEachIn(segment: number, fn: (slot: number) => void): void {
    const table = this.#tables[segment]!;
    for (let position = 0; position < table.length; position++) {
      if (table[position] !== 0) fn((table[position]! & kSlotField) - 1);
    }
  }

  #scan(probe: Uint32Array, at: number, hash: number, segment: number, position: number): number {
    const table = this.#tables[segment]!;
    const keys = this.#keys;
    const words = this.words;
    const mask = table.length - 1;
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

  /**
   * Room for `entries` entries (slots below `entries` in the key column, tables big enough) at
   * once: a start that knows how many rows it loads rehashes nothing on the way.
   */
  presize(entries: number): void {
    this.reserve(entries);
    let capacity = kMinSegmentCapacity;
    // A segment holds about entries / kSegments: 1/8 more covers the spread between segments.
    while (capacity * kSegments * 3 < entries * 4 * 1.125) capacity *= 2;
    for (let segment = 0; segment < kSegments; segment++) {
      if (this.#tables[segment]!.length < capacity) this.#resize(segment, capacity);
    }
  }

  #grow(segment: number): void {
    this.#resize(segment, this.#tables[segment]!.length * 2);
  }

  #resize(segment: number, capacity: number): void {
    const old = this.#tables[segment]!;
    const table = new Uint32Array(capacity);
    for (let position = 0; position < old.length; position++) {
      const entry = old[position]!;
      if (entry !== 0) place(table, hashWords(this.#keys, ((entry & kSlotField) - 1) * this.words, this.words), (entry & kSlotField) - 1);
    }
    this.#tables[segment] = table;
    this.#cursor = -1;
  }
}

/** Puts the entry of `slot` (key hash `hash`) at the first empty position of its run. */
function place(table: Uint32Array, hash: number, slot: number): void {
  const mask = table.length - 1;
  let position = hash & mask;
  while (table[position] !== 0) position = (position + 1) & mask;
  table[position] = ((hash & kTagField) | (slot + 1)) >>> 0;
}
