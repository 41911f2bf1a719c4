// Reads the pages of some tables into the OS page cache in file order, before scans read them in
// key order. Rows written at random keys leave a table's pages all over the file, so a scan from
// disk waits for one random read after another: ~20 s for the 2.3 GB of accounts, signals and
// links at 1M accounts, against ~1–3 s for the same pages read in file order (bench/README.md,
// step 34). The B-trees are walked level by level from their roots (interior pages, a few MB, are
// parsed for their children), each level of all of them read sorted by page number, near pages in
// one read; the leaf level is read and not parsed. Only a hint: what it reads is thrown away, and
// a page it misreads (the file behind the WAL after a crash) costs a useless read, nothing else.
// SQLite's file format: https://www.sqlite.org/fileformat2.html#b_tree_pages
//
// The file is read through a descriptor that stays open (one per thread and file): closing any
// descriptor of the database file drops every POSIX lock this process holds on it, SQLite's
// included. A read-ahead that closed its own let another process's sqlite3 take the file as
// unused while the server wrote to it, and delete its WAL — with acknowledged events in it
// (checkpointer.ts keeps its descriptor open for the same reason). Node closes the descriptors a
// worker thread opened when it ends: a worker reads through one the main thread opened.
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import type { Db } from './database.js';

/** Pages between two wanted ones that are read rather than skipped (a 32-KB read costs about one seek). */
const kGapPages = 8;
const kBufferBytes = 8 << 20;
/** Deeper than any B-tree of this database can be; a bound against a file that is not what it seems. */
const kMaxLevels = 12;

const kInteriorIndex = 2;
const kInteriorTable = 5;

export interface ReadAhead {
  readonly pages: number;
  readonly bytes: number;
  readonly ms: number;
}

/**
 * Reads ahead every page of the tables (and nothing of their indexes), the tables' pages of each
 * level in one pass; of a rowid table given with `fromRowid`, only the pages of rows from that
 * rowid on (the end of the event log). `file`: the file to read, the database's own but in tests,
 * or a descriptor of it that the main thread opened (databaseFileDescriptor); a worker given a
 * path reads nothing.
 */
export function readAheadTables(
  db: Db, tables: ReadonlyArray<string | { readonly table: string; readonly fromRowid: number }>, file: string | number = db.name,
): ReadAhead {
  const started = performance.now();
  if (db.memory || (typeof file === 'string' && !isMainThread)) return { pages: 0, bytes: 0, ms: 0 };
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?").pluck();
  // Each page with the lowest rowid whose rows it must lead to (0: all of them).
  let level: Array<[number, number]> = [];
  for (const entry of tables) {
    const page = root.get(typeof entry === 'string' ? entry : entry.table) as number | undefined;
    if (page !== undefined && !level.some(([root]) => root === page)) level.push([page, typeof entry === 'string' ? 0 : entry.fromRowid]);
  }
  const fd = typeof file === 'number' ? file : databaseFileDescriptor(file);
  if (fd === null) return { pages: 0, bytes: 0, ms: 0 };
  let pages = 0;
  let bytes = 0;
  const filePages = Math.floor(fstatSync(fd).size / pageSize);
  // A page of a tree is reached once; one reached again is not a tree (a damaged file): skipped.
  const seen = new Uint8Array(filePages + 1);
  const buffer = Buffer.allocUnsafe(Math.max(kBufferBytes, pageSize));
  for (let depth = 0; level.length > 0 && depth < kMaxLevels; depth++) {
    const next: Array<[number, number]> = [];
    const push = (page: number, fromRowid: number): void => {
      if (page < 1 || page > filePages || seen[page] === 1) return;
      seen[page] = 1;
      next.push([page, fromRowid]);
    };
    bytes += readPages(fd, buffer, pageSize, level, (at, page, fromRowid) => childPages(buffer, at + (page === 1 ? 100 : 0), pageSize, fromRowid, push));
    pages += level.length;
    level = next;
  }
  return { pages, bytes, ms: performance.now() - started };
}

/** This thread's descriptors of the files read ahead, by path: opened once, never closed while the file is the one at that path. */
const kOpenFiles = new Map<string, { readonly fd: number; readonly inode: number }>();

/**
 * A descriptor of the file at `path`, opened by the main thread and kept open (see the top of this
 * file); null when there is no such file (nothing to read ahead). One of a file that is no longer
 * at that path (a test's database made again under the same name) is closed: its locks, if any,
 * are on a file no connection uses any more.
 */
export function databaseFileDescriptor(path: string): number | null {
  if (!isMainThread) throw new Error('databaseFileDescriptor: only the main thread opens one (a worker\'s is closed when it ends)');
  if (!existsSync(path)) return null;
  const inode = statSync(path).ino;
  const open = kOpenFiles.get(path);
  if (open !== undefined && open.inode === inode) return open.fd;
  if (open !== undefined) closeSync(open.fd);
  const fd = openSync(path, 'r');
  kOpenFiles.set(path, { fd, inode: fstatSync(fd).ino });
  return fd;
}

/**
 * Reads `pages` (sorted here by page number) in file order, runs of near pages in one read, calling
 * `each` with every wanted page's offset in `buffer`. Returns the bytes read.
 */
function readPages(fd: number, buffer: Buffer, pageSize: number, pages: Array<[number, number]>, each: (at: number, page: number, fromRowid: number) => void): number {
  pages.sort((a, b) => a[0] - b[0]);
  const perRead = Math.floor(buffer.length / pageSize);
  let bytes = 0;
  for (let i = 0; i < pages.length; ) {
    const first = pages[i]![0];
    let j = i;
    while (j + 1 < pages.length && pages[j + 1]![0] - pages[j]![0] <= kGapPages && pages[j + 1]![0] - first < perRead) j++;
    const length = (pages[j]![0] - first + 1) * pageSize;
    const got = readSync(fd, buffer, 0, length, (first - 1) * pageSize);
    bytes += got;
    for (let k = i; k <= j; k++) {
      const [page, fromRowid] = pages[k]!;
      const at = (page - first) * pageSize;
      if (at + pageSize <= got && (k === i || page !== pages[k - 1]![0])) each(at, page, fromRowid);
    }
    i = j + 1;
  }
  return bytes;
}

/**
 * The child pages of the B-tree page whose header is at `at` (none for a leaf), each to `push`;
 * of an interior table page, only those that hold rowids ≥ `fromRowid` (a cell's child holds the
 * rowids up to the cell's; the right-most child those past the last cell's).
 */
function childPages(buffer: Buffer, at: number, pageSize: number, fromRowid: number, push: (page: number, fromRowid: number) => void): void {
  const type = buffer[at];
  if (type !== kInteriorIndex && type !== kInteriorTable) return;
  const pageStart = at - (at % pageSize);
  const pageEnd = pageStart + pageSize;
  const cells = buffer.readUInt16BE(at + 3);
  for (let i = 0; i < cells; i++) {
    const pointer = at + 12 + i * 2;
    if (pointer + 2 > pageEnd) break;
    const cell = pageStart + buffer.readUInt16BE(pointer);
    if (cell + 4 > pageEnd) continue;
    if (fromRowid > 0 && type === kInteriorTable && varint(buffer, cell + 4, pageEnd) < fromRowid) continue;
    push(buffer.readUInt32BE(cell), fromRowid);
  }
  push(buffer.readUInt32BE(at + 8), fromRowid);
}

/** SQLite's varint at `at` (big-endian groups of 7 bits, the ninth byte whole); exact to 2^53. */
function varint(buffer: Buffer, at: number, end: number): number {
  let value = 0;
  for (let i = 0; i < 9 && at + i < end; i++) {
    const byte = buffer[at + i]!;
    if (i === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return value;
  }
  return value;
}
