// Slot numbers for the entities of the hot state (accounts, signal values, holders, links, event
// ids) and the columns indexed by them: one number per entity, its fields in typed arrays grown by
// doubling (STYLE.md, the lru-cache anchor). Pure.
//
// A column lives on a resizable ArrayBuffer (ES2024; Node 20's V8 has it) that reserves address
// space for kMaxColumnBytes and grows in place: doubling a column costs ~0.1 ms whatever its size,
// where allocating a copy cost ~1.3 ms per MiB here (page faults of the new array). With 5M
// links, a copying doubling of their columns stalled the owning thread for ~0.3 s. The pages are
// committed as they are first written, so the reservation costs no memory (2,000 columns of 4 GiB
// reserved: 1.7 MB of RSS, 15 ms). Where address space is capped (ulimit -v) and a reservation is
// refused, a column is a plain typed array and grows by copying.

/** Typed arrays the columns are made of. */
export type Column = Uint8Array | Uint16Array | Uint32Array | Float64Array;

type ColumnType<T extends Column> = { new (buffer: ArrayBuffer): T; readonly BYTES_PER_ELEMENT: number };

/** ES2024 resizable buffers, which lib ES2023 does not describe. */
interface ResizableBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(byteLength: number): void;
}
const ResizableArrayBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableBuffer;

/** The most a column reserves: V8's limit for one resizable buffer. */
export const kMaxColumnBytes = 2 ** 32;

/** A buffer of `bytes` that can grow in place up to `maxBytes` (capped at kMaxColumnBytes), or a plain one. */
export function resizableBuffer(bytes: number, maxBytes: number): ArrayBuffer {
  try {
    return new ResizableArrayBuffer(bytes, { maxByteLength: Math.min(kMaxColumnBytes, Math.max(bytes, maxBytes)) });
  } catch {
    return new ArrayBuffer(bytes);
  }
}

/** Grows `buffer` in place to `bytes`; false when it cannot (not resizable, or past its reservation). */
export function resizeInPlace(buffer: ArrayBufferLike, bytes: number): boolean {
  const resizable = buffer as ResizableBuffer;
  if (resizable.resizable !== true || bytes > resizable.maxByteLength) return false;
  resizable.resize(bytes);
  return true;
}

/** A zeroed column of `length` elements that can grow in place up to `maxLength` elements. */
export function column<T extends Column>(type: ColumnType<T>, length: number, maxLength: number): T {
  // Without a length, the view tracks the buffer's length as it grows.
  return new type(resizableBuffer(length * type.BYTES_PER_ELEMENT, maxLength * type.BYTES_PER_ELEMENT));
}

/** `array` with room for `length` elements (the new part zeroed): itself grown in place, or a copy. */
export function grown<T extends Column>(array: T, length: number): T {
  if (resizeInPlace(array.buffer, length * array.BYTES_PER_ELEMENT)) return array;
  const next = new (array.constructor as new (length: number) => T)(length);
  next.set(array as never);
  return next;
}

/**
 * Memory of a part of the hot state: `held`, the arrays as allocated (a doubled column is held
 * whole); `used`, the part written so far (slots below the high-water mark, index tables, arena
 * bytes): what is resident, since untouched pages of a column are never committed.
 */
export interface Bytes {
  readonly held: number;
  readonly used: number;
}

/** The bytes of `columns` (parallel, indexed by slot) with slots below `high` written. */
export function columnBytes(high: number, ...columns: Column[]): Bytes {
  let held = 0;
  let used = 0;
  for (const array of columns) {
    held += array.byteLength;
    used += Math.min(array.byteLength, high * array.BYTES_PER_ELEMENT);
  }
  return { held, used };
}

/** The sum of some Bytes. */
export function sumBytes(...parts: Bytes[]): Bytes {
  let held = 0;
  let used = 0;
  for (const part of parts) {
    held += part.held;
    used += part.used;
  }
  return { held, used };
}

/**
 * Takes `node` off a doubly linked list kept in typed arrays: heads[owner] is the first node + 1,
 * next/prev[node] its neighbours + 1 (0: none) — the holder lists of a value and the link lists of
 * an account.
 */
export function unlink(heads: Uint32Array, owner: number, next: Uint32Array, prev: Uint32Array, node: number): void {
  const before = prev[node]! - 1;
  const after = next[node]! - 1;
  if (before < 0) heads[owner] = after + 1;
  else next[before] = after + 1;
  if (after >= 0) prev[after] = before + 1;
  next[node] = 0;
  prev[node] = 0;
}

/**
 * Hands out slot numbers: freed ones first (a stack, so a slot erased a moment ago is reused before
 * the columns grow), then the next never-used one. `high` is the number of slots ever used: the
 * columns must have room for slots below it.
 */
export class SlotAllocator {
  readonly limit: number;
  #next = 0;
  #free: Uint32Array = new Uint32Array(64);
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

  get bytes(): Bytes {
    return { held: this.#free.byteLength, used: this.#free.byteLength };
  }

  /** Its state as plain data, to hand to another thread (StateParts); this allocator is not used after. */
  parts(): SlotAllocatorParts {
    return { next: this.#next, free: this.#free, freeCount: this.#freeCount };
  }

  /** The allocator whose parts() these are. */
  static fromParts(limit: number, parts: SlotAllocatorParts): SlotAllocator {
    const allocator = new SlotAllocator(limit);
    allocator.#next = parts.next;
    allocator.#free = parts.free;
    allocator.#freeCount = parts.freeCount;
    return allocator;
  }
}

export interface SlotAllocatorParts {
  readonly next: number;
  readonly free: Uint32Array;
  readonly freeCount: number;
}

/**
 * The buffers of some parts (a tree of plain objects, arrays and typed arrays), each once: the
 * transfer list that moves them to another thread without a copy.
 */
export function partBuffers(parts: unknown, into = new Set<ArrayBufferLike>()): ArrayBuffer[] {
  if (ArrayBuffer.isView(parts)) into.add(parts.buffer);
  else if (Array.isArray(parts)) for (const part of parts) partBuffers(part, into);
  else if (typeof parts === 'object' && parts !== null) for (const part of Object.values(parts)) partBuffers(part, into);
  return [...into] as ArrayBuffer[];
}
