// In-memory state as a file: a tree of parts (the plain data the state's parts() give: objects,
// arrays, numbers, strings, typed arrays) written at a clean stop and read back by the next start
// (scoring/start-snapshot.ts). The typed arrays' bytes go to the file as they are, each read back
// straight into a new buffer of the same kind (a column that grows in place stays one): no copy
// of the whole state is made in memory either way.
//
// Layout: kMagic, the header's length and its CRC-32 (uint32 LE each), the header (JSON: the tree
// with every typed array replaced by a reference to its buffer, and the buffers' kinds, lengths and
// CRC-32s), then each buffer at an offset that is a multiple of 8, without its trailing zeroes: a
// column's room to grow costs neither file nor memory (pages of a buffer that are never written
// are never committed). The checksums (zlib's, ~7 GB/s here) turn a damaged file into a refused
// one instead of a wrong state.
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import * as zlib from 'node:zlib';
import { resizableBuffer } from '../state/slots.js';
import { giveToDataDirOwner } from './data-dir-owner.js';
import { flushToDisk } from './flush-to-disk.js';

const kMagic = Buffer.from('fraud-scorer parts 1\n');
const kLeadBytes = kMagic.length + 8;
const kAlign = 8;

type View = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;
const kViews = { Uint8Array, Uint16Array, Uint32Array, Int32Array, Float64Array, Buffer } as const;
type ViewName = keyof typeof kViews;

interface BufferEntry {
  readonly bytes: number;
  /** The bytes written: up to the last one that is not zero (the rest of a column is room to grow). */
  readonly written: number;
  /** Set for a resizable buffer: the most it may grow to. */
  readonly maxBytes: number | null;
  readonly offset: number;
  /** CRC-32 of the bytes written. */
  readonly crc: number;
}

interface ViewRef {
  readonly $view: ViewName;
  readonly buffer: number;
  readonly byteOffset: number;
  /** null: the view tracks its resizable buffer's length. */
  readonly length: number | null;
}

interface Header {
  readonly meta: unknown;
  readonly buffers: readonly BufferEntry[];
  readonly tree: unknown;
}

/** A file that is not one this code wrote, or is cut short: the caller loads the state another way. */
export class PartsFileError extends Error {}

interface ResizableBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
}

/**
 * Writes `tree` with `meta` (what the reader checks before it reads the rest) to `path`: to a
 * temporary file first, synced, then renamed over `path`, so that `path` is whole or absent.
 */
export function writePartsFile(path: string, meta: unknown, tree: unknown): number {
  const buffers: ArrayBufferLike[] = [];
  const numbers = new Map<ArrayBufferLike, number>();
  const encoded = encode(tree, buffers, numbers);
  const entries: BufferEntry[] = [];
  // Offsets are relative to the end of the header, whose length is known only once they are.
  let offset = 0;
  for (const buffer of buffers) {
    const resizable = buffer as ResizableBuffer;
    const written = nonZeroLength(buffer);
    const crc = crc32(new Uint8Array(buffer, 0, written));
    entries.push({ bytes: buffer.byteLength, written, maxBytes: resizable.resizable === true ? resizable.maxByteLength : null, offset, crc });
    offset += roundUp(written);
  }
  const header = Buffer.from(JSON.stringify({ meta, buffers: entries, tree: encoded } satisfies Header));
  const start = roundUp(kLeadBytes + header.length);
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    try {
      const lead = Buffer.alloc(start);
      kMagic.copy(lead, 0);
      lead.writeUInt32LE(header.length, kMagic.length);
      lead.writeUInt32LE(crc32(header), kMagic.length + 4);
      header.copy(lead, kLeadBytes);
      writeAll(fd, lead, 0);
      for (let i = 0; i < buffers.length; i++) writeAll(fd, new Uint8Array(buffers[i]!, 0, entries[i]!.written), start + entries[i]!.offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    giveToDataDirOwner(temporary);
    renameSync(temporary, path);
  } catch (error) {
    // A full disk, say: no part-written file is left behind.
    rmSync(temporary, { force: true });
    throw error;
  }
  flushToDisk(dirname(path));
  const last = entries.at(-1);
  return start + (last === undefined ? 0 : last.offset + last.written);
}

/** The header's meta of the file at `path`, without reading the rest; throws PartsFileError. */
export function readPartsMeta(path: string): unknown {
  const fd = openSync(path, 'r');
  try {
    return readHeader(fd).header.meta;
  } finally {
    closeSync(fd);
  }
}

/** The tree written to `path`, its typed arrays in buffers of their own; throws PartsFileError. */
export function readPartsFile(path: string): { meta: unknown; tree: unknown } {
  const fd = openSync(path, 'r');
  try {
    const { header, start } = readHeader(fd);
    const buffers = header.buffers.map((entry) => {
      // A column comes back as state/slots.ts makes one (a plain buffer where address space is capped).
      const buffer = entry.maxBytes === null ? new ArrayBuffer(entry.bytes) : resizableBuffer(entry.bytes, entry.maxBytes);
      if (!(entry.written >= 0 && entry.written <= entry.bytes)) throw new PartsFileError('a buffer is longer than its length');
      const bytes = new Uint8Array(buffer, 0, entry.written);
      readAll(fd, bytes, start + entry.offset);
      if (crc32(bytes) !== entry.crc) throw new PartsFileError('a buffer does not match its checksum');
      return buffer;
    });
    return { meta: header.meta, tree: decode(header.tree, buffers) };
  } finally {
    closeSync(fd);
  }
}

function encode(part: unknown, buffers: ArrayBufferLike[], numbers: Map<ArrayBufferLike, number>): unknown {
  if (ArrayBuffer.isView(part)) {
    let view = part as View;
    const name = (Buffer.isBuffer(view) ? 'Buffer' : view.constructor.name) as ViewName;
    if (!(name in kViews)) throw new TypeError(`parts-file: a ${name} cannot be written`);
    // A small Buffer is a slice of Node's shared pool, which other code goes on writing into while
    // the file is written (and the pool is not ours to save): such a slice is written as a copy.
    if (name === 'Buffer' && view.byteLength < view.buffer.byteLength && (view.buffer as ResizableBuffer).resizable !== true) {
      view = Buffer.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice().buffer);
    }
    let number = numbers.get(view.buffer);
    if (number === undefined) {
      number = buffers.length;
      buffers.push(view.buffer);
      numbers.set(view.buffer, number);
    }
    // A view made without a length on a resizable buffer follows the buffer as it grows.
    const tracking = (view.buffer as ResizableBuffer).resizable === true && view.byteOffset + view.byteLength === view.buffer.byteLength && name !== 'Buffer';
    return { $view: name, buffer: number, byteOffset: view.byteOffset, length: tracking ? null : view.length } satisfies ViewRef;
  }
  if (Array.isArray(part)) return part.map((item) => encode(item, buffers, numbers));
  if (typeof part === 'object' && part !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(part)) out[key] = encode(value, buffers, numbers);
    return out;
  }
  if (typeof part === 'number' && !Number.isFinite(part)) throw new TypeError('parts-file: a number that is not finite cannot be written');
  return part;
}

function decode(part: unknown, buffers: readonly ArrayBuffer[]): unknown {
  if (Array.isArray(part)) return part.map((item) => decode(item, buffers));
  if (typeof part !== 'object' || part === null) return part;
  const ref = part as ViewRef;
  if (typeof ref.$view === 'string') {
    const buffer = buffers[ref.buffer];
    if (buffer === undefined || !(ref.$view in kViews)) throw new PartsFileError('a typed array refers to no buffer');
    if (ref.$view === 'Buffer') return Buffer.from(buffer, ref.byteOffset, ref.length ?? undefined);
    const View = kViews[ref.$view] as unknown as new (buffer: ArrayBuffer, byteOffset: number, length?: number) => View;
    return ref.length === null ? new View(buffer, ref.byteOffset) : new View(buffer, ref.byteOffset, ref.length);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(part)) out[key] = decode(value, buffers);
  return out;
}

function readHeader(fd: number): { header: Header; start: number } {
  const lead = Buffer.alloc(kLeadBytes);
  if (readSync(fd, lead, 0, lead.length, 0) !== lead.length || !lead.subarray(0, kMagic.length).equals(kMagic)) {
    throw new PartsFileError('not a parts file');
  }
  const length = lead.readUInt32LE(kMagic.length);
  const text = Buffer.alloc(length);
  if (readSync(fd, text, 0, length, lead.length) !== length) throw new PartsFileError('the header is cut short');
  if (crc32(text) !== lead.readUInt32LE(kMagic.length + 4)) throw new PartsFileError('the header does not match its checksum');
  let header: Header;
  try {
    header = JSON.parse(text.toString('utf8')) as Header;
  } catch {
    throw new PartsFileError('the header is not JSON');
  }
  if (typeof header !== 'object' || header === null || !Array.isArray(header.buffers)) throw new PartsFileError('the header is not a parts header');
  return { header, start: roundUp(lead.length + length) };
}

/** Bytes of `buffer` up to its last byte that is not zero. */
function nonZeroLength(buffer: ArrayBufferLike): number {
  const words = Math.floor(buffer.byteLength / 4);
  const bytes = new Uint8Array(buffer);
  for (let i = buffer.byteLength - 1; i >= words * 4; i--) if (bytes[i] !== 0) return i + 1;
  const view = new Uint32Array(buffer, 0, words);
  let w = words - 1;
  while (w >= 0 && view[w] === 0) w--;
  if (w < 0) return 0;
  for (let i = w * 4 + 3; ; i--) if (bytes[i] !== 0) return i + 1;
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

function readAll(fd: number, into: Uint8Array, position: number): void {
  for (let done = 0; done < into.length; ) {
    const read = readSync(fd, into, done, into.length - done, position + done);
    if (read === 0) throw new PartsFileError('the file is cut short');
    done += read;
  }
}

/**
 * CRC-32 of `bytes`, in slices (zlib takes at most 2^31 − 1 bytes at once). Node 22.0 and 22.1 have
 * no zlib.crc32 (package.json's engines ask for 22.2 or newer): there every checksum would be 0,
 * written and compared alike, so only a short read would catch a damaged file.
 */
function crc32(bytes: Uint8Array): number {
  // Looked up, not imported by name: a missing named export of a built-in fails the whole import.
  const zlibCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (typeof zlibCrc32 !== 'function') return 0;
  let crc = 0;
  for (let at = 0; at < bytes.length; at += kCrcSlice) crc = zlibCrc32(bytes.subarray(at, Math.min(bytes.length, at + kCrcSlice)), crc);
  return crc;
}
const kCrcSlice = 1 << 30;

const roundUp = (n: number): number => Math.ceil(n / kAlign) * kAlign;
