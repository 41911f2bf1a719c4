// Slot numbers for the entities of the hot state (accounts, signal values, holders, links, event
// ids) and the columns indexed by them: one number per entity, its fields in typed arrays grown by
// doubling (STYLE.md, the lru-cache anchor). Pure.

/** Typed arrays the columns are made of. */
export type Column = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/** A copy of `array` with room for `length` elements (the new part zeroed). */
export function grown<T extends Column>(array: T, length: number): T {
  const next = new (array.constructor as new (length: number) => T)(length);
  next.set(array as never);
  return next;
}

/**
 * Hands out slot numbers: freed ones first (a stack, so a slot erased a moment ago is reused before
 * the columns grow), then the next never-used one. `high` is the number of slots ever used: the
 * columns must have room for slots below it.
 */
export class SlotAllocator {
  readonly limit: number;
  #next = 0;
  #free = new Uint32Array(64);
  #freeCount = 0;

  /** `limit`: how many slots may be in use at once (the index packs slot numbers in 28 bits). */
  constructor(limit: number) {
    this.limit = limit;
  }

  /** A slot, or -1 when `limit` slots are in use. */
  allocate(): number {
    if (this.#freeCount > 0) return this.#free[--this.#freeCount]!;
    if (this.#next >= this.limit) return -1;
    return this.#next++;
  }

  release(slot: number): void {
    if (this.#freeCount === this.#free.length) this.#free = grown(this.#free, this.#free.length * 2);
    this.#free[this.#freeCount++] = slot;
  }

  /** Slots in use. */
  get live(): number {
    return this.#next - this.#freeCount;
  }

  /** Slots that can still be allocated. */
  get available(): number {
    return this.limit - this.live;
  }

  get high(): number {
    return this.#next;
  }

  get bytes(): number {
    return this.#free.byteLength;
  }
}
