// Event id → log sequence number, for idempotency and lookups by event id without an index in the
// event log (docs/pipeline.md). The key is the keyed 64-bit hash of (project number, event id):
// the caller reads the stored row at the sequence number and compares its event id, so 64 bits
// are plenty, and when two ids ever share a key both entries are kept and the caller walks them
// (findNext). Sequence numbers are float64: exact to 2^53, no wrap after 2^32 events.
// Per id: 8 bytes of key, 8 of sequence number, the index's 4 bytes per table slot. Pure.
import { KeyDomain, type KeyHasher } from './keys.js';
import { kMaxSlot, SlotIndex, type SlotIndexParts } from './slot-index.js';
import { column, columnBytes, grown, SlotAllocator, sumBytes, type Bytes, type SlotAllocatorParts } from './slots.js';
import { stateError, type StateError } from './state-error.js';

const kInitialIds = 1024;

/** An EventIndex as plain data (parts(), fromParts()). */
export interface EventIndexParts {
  readonly slots: SlotAllocatorParts;
  readonly byKey: SlotIndexParts;
  readonly seq: Float64Array;
}

export class EventIndex {
  readonly #hasher: KeyHasher;
  #slots = new SlotAllocator(kMaxSlot + 1);
  #byKey: SlotIndex;
  #seq: Float64Array;
  readonly #probe = new Uint32Array(2);

  /** `expected`: how many ids to make room for at once (a start loading the log knows it). */
  constructor(hasher: KeyHasher, expected = kInitialIds) {
    this.#hasher = hasher;
    this.#byKey = new SlotIndex(2, Math.max(kInitialIds, expected));
    this.#seq = column(Float64Array, Math.max(kInitialIds, expected), kMaxSlot + 1);
  }

  /** The sequence number of the first entry under (project, event id)'s key, or -1. */
  find(project: number, eventId: string): number {
    this.#hasher.key64(KeyDomain.EventId, project, eventId, this.#probe, 0);
    const slot = this.#byKey.find(this.#probe, 0);
    return slot < 0 ? -1 : this.#seq[slot]!;
  }

  /** After find() (nothing added or deleted since): the next entry under the same key, or -1. */
  findNext(): number {
    const slot = this.#byKey.findNext(this.#probe, 0);
    return slot < 0 ? -1 : this.#seq[slot]!;
  }

  /** Adds (project, event id) → seq; the caller has checked it is not there. */
  add(project: number, eventId: string, seq: number): StateError | null {
    const slot = this.#allocate();
    if (slot < 0) return stateError('STATE_FULL', 'no room for another event id');
    EventIndex.keyOf(this.#hasher, project, eventId, this.#byKey.keys, slot * 2);
    this.#byKey.insert(slot);
    this.#seq[slot] = seq;
    return null;
  }

  /** Adds an entry whose key keyOf() made (event ids kept beside the log: scoring/event-id-runs.ts). */
  addKey(low: number, high: number, seq: number): StateError | null {
    const slot = this.#allocate();
    if (slot < 0) return stateError('STATE_FULL', 'no room for another event id');
    this.#byKey.keys[slot * 2] = low;
    this.#byKey.keys[slot * 2 + 1] = high;
    this.#byKey.insert(slot);
    this.#seq[slot] = seq;
    return null;
  }

  /** The key of (project, event id), as add() makes it, to out[at], out[at + 1]. */
  static keyOf(hasher: KeyHasher, project: number, eventId: string, out: Uint32Array, at: number): void {
    hasher.key64(KeyDomain.EventId, project, eventId, out, at);
  }

  #allocate(): number {
    const slot = this.#slots.allocate();
    if (slot < 0) return slot;
    if (slot >= this.#seq.length) this.#seq = grown(this.#seq, this.#seq.length * 2);
    this.#byKey.reserve(slot + 1);
    return slot;
  }

  /** Removes the entry (project, event id) → seq; true when it was there. */
  delete(project: number, eventId: string, seq: number): boolean {
    this.#hasher.key64(KeyDomain.EventId, project, eventId, this.#probe, 0);
    for (let slot = this.#byKey.find(this.#probe, 0); slot >= 0; slot = this.#byKey.findNext(this.#probe, 0)) {
      if (this.#seq[slot] !== seq) continue;
      this.#byKey.remove(slot);
      this.#byKey.keys[slot * 2] = 0;
      this.#byKey.keys[slot * 2 + 1] = 0;
      this.#seq[slot] = 0;
      this.#slots.release(slot);
      return true;
    }
    return false;
  }

  /** Its state as plain data, to hand to another thread; this index is not used after. */
  parts(): EventIndexParts {
    return { slots: this.#slots.parts(), byKey: this.#byKey.parts(), seq: this.#seq };
  }

  /** The index whose parts() these are; `hasher` under the same install secret. */
  static fromParts(hasher: KeyHasher, parts: EventIndexParts): EventIndex {
    const index = new EventIndex(hasher, 0);
    index.#slots = SlotAllocator.fromParts(kMaxSlot + 1, parts.slots);
    index.#byKey = SlotIndex.fromParts(parts.byKey);
    index.#seq = parts.seq;
    return index;
  }

  /** Ids held. */
  get size(): number {
    return this.#slots.live;
  }

  get bytes(): Bytes {
    const high = this.#slots.high;
    return sumBytes(this.#byKey.bytes(high), this.#slots.bytes, columnBytes(high, this.#seq));
  }
}
