// The few strings the hot state must keep (external account ids, the masked form of each signal
// value), as UTF-8 bytes in one growing Buffer, each behind a LEB128 length: an owner keeps a
// 4-byte offset per entry instead of a JS string.
//
// Measured here with a million ids like "user-1234567": a JS array of strings cost ~40 bytes of
// heap per id (87 of RSS) and made each full collection walk a million objects (34 ms, against
// 3 ms with the arena); the arena costs the bytes plus 1 and its offset. Reading one back costs
// ~0.2 µs (Buffer#toString) against ~0.05 µs for an array read: paid only where a string is shown
// (the links route), never while scoring.
//
// Released strings are zeroed at once (an erased account's external id leaves nothing in memory)
// and counted as garbage; an owner copies its live strings into a fresh arena when garbage
// dominates (see `wasteful`). Pure.

import { kMaxColumnBytes, resizableBuffer, resizeInPlace, type Bytes } from './slots.js';

const kMinBytes = 64 * 1024;
/** Longest string kept: three LEB128 bytes of length. */
export const kMaxStringBytes = (1 << 21) - 1;

/** A StringArena as plain data (parts(), fromParts()). */
export interface StringArenaParts {
  readonly buffer: Buffer;
  readonly used: number;
  readonly garbage: number;
}

export class StringArena {
  #buffer: Buffer;
  #used = 0;
  #garbage = 0;
  /** The length #open() read last (a field, so that reading a string allocates nothing else). */
  #length = 0;

  constructor(initialBytes = kMinBytes) {
    const bytes = Math.max(kMinBytes, initialBytes);
    this.#buffer = Buffer.from(resizableBuffer(bytes, kMaxColumnBytes), 0, bytes);
  }

  /** Its state as plain data (scoring/start-snapshot.ts); this arena is not used after. */
  parts(): StringArenaParts {
    return { buffer: this.#buffer, used: this.#used, garbage: this.#garbage };
  }

  /** The arena whose parts() these are. */
  static fromParts(parts: StringArenaParts): StringArena {
    const arena = new StringArena(0);
    arena.#buffer = parts.buffer;
    arena.#used = parts.used;
    arena.#garbage = parts.garbage;
    return arena;
  }

  /** Appends `value`; its offset, or -1 when it is longer than kMaxStringBytes. */
  add(value: string): number {
    const length = Buffer.byteLength(value, 'utf8');
    if (length > kMaxStringBytes) return -1;
    const offset = this.#reserve(length);
    this.#buffer.write(value, offset + headerBytes(length), length, 'utf8');
    return offset;
  }

  /** The string at `offset`. */
  get(offset: number): string {
    const start = this.#open(offset);
    return this.#buffer.toString('utf8', start, start + this.#length);
  }

  /**
   * True when the string at `offset` is `value`, as get(offset) === value would say. An ASCII
   * `value` is compared byte by byte, with no string made: ~0.06 µs here, where get() and ===
   * cost ~0.13 and leave a string for the collector (a value's mask is compared on each write of
   * it, and on each holder row loaded).
   */
  equals(offset: number, value: string): boolean {
    const start = this.#open(offset);
    const length = this.#length;
    // A UTF-16 unit is at least one UTF-8 byte.
    if (value.length > length) return false;
    const buffer = this.#buffer;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      // Up to here both were the same ASCII: the rest is compared as strings.
      if (code >= 0x80) return this.get(offset) === value;
      if (buffer[start + i] !== code) return false;
    }
    return length === value.length;
  }

  /** Zeroes the string at `offset` and counts its bytes as garbage. */
  release(offset: number): void {
    const end = this.#open(offset) + this.#length;
    this.#buffer.fill(0, offset, end);
    this.#garbage += end - offset;
  }

  /** Copies the string at `offset` of `from` (its bytes as they are); its offset here. */
  copyFrom(from: StringArena, offset: number): number {
    const start = from.#open(offset);
    const length = from.#length;
    const at = this.#reserve(length);
    from.#buffer.copy(this.#buffer, at + headerBytes(length), start, start + length);
    return at;
  }

  /** True when released strings take more than half of a sizeable arena: time to copy the live ones. */
  get wasteful(): boolean {
    return this.#used > 4 * kMinBytes && this.#garbage * 2 > this.#used;
  }

  /** Bytes in use, garbage included. */
  get used(): number {
    return this.#used;
  }

  get garbage(): number {
    return this.#garbage;
  }

  /** The buffer's size, and the bytes written (garbage included). */
  get bytes(): Bytes {
    return { held: this.#buffer.length, used: this.#used };
  }

  /** Room for a string of `length` bytes; writes its header and returns its offset. */
  #reserve(length: number): number {
    const header = headerBytes(length);
    const offset = this.#used;
    if (offset + header + length > this.#buffer.length) {
      let size = this.#buffer.length * 2;
      while (size < offset + header + length) size *= 2;
      // In place when the buffer is resizable (slots.ts): then only the Buffer view is new.
      if (resizeInPlace(this.#buffer.buffer, size)) {
        this.#buffer = Buffer.from(this.#buffer.buffer, 0, size);
      } else {
        const buffer = Buffer.alloc(size);
        this.#buffer.copy(buffer, 0, 0, offset);
        this.#buffer = buffer;
      }
    }
    const buffer = this.#buffer;
    if (header === 1) {
      buffer[offset] = length;
    } else {
      buffer[offset] = (length & 0x7f) | 0x80;
      if (header === 2) {
        buffer[offset + 1] = length >>> 7;
      } else {
        buffer[offset + 1] = ((length >>> 7) & 0x7f) | 0x80;
        buffer[offset + 2] = length >>> 14;
      }
    }
    this.#used = offset + header + length;
    return offset;
  }

  /** Where the bytes of the string at `offset` start; their number is left in #length. */
  #open(offset: number): number {
    const buffer = this.#buffer;
    let byte = buffer[offset]!;
    let length = byte & 0x7f;
    let at = offset + 1;
    if (byte >= 0x80) {
      byte = buffer[at++]!;
      length |= (byte & 0x7f) << 7;
      if (byte >= 0x80) length |= buffer[at++]! << 14;
    }
    this.#length = length;
    return at;
  }
}

function headerBytes(length: number): number {
  return length < 0x80 ? 1 : length < 0x4000 ? 2 : 3;
}
