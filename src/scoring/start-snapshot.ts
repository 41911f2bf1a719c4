// The start snapshot: what a start would otherwise rebuild from the database — the accounts,
// signal values and links (every row of their tables), the event ids (a read of the whole event
// log) and the velocity windows (the last 24 hours of payloads parsed again) — written by a clean
// stop to <data dir>/start-snapshot as the typed arrays they live in, and read back by the next
// start (docs/operations.md, "The start snapshot"; bench/README.md has the figures at scale).
//
// Used only when it is the state of the database as it is: the stop seals the database to the
// file (store/snapshot-seal.ts: a token in both, voided by any change to the tables while
// stopped), and the file names the schema version it was taken at. Otherwise, or when the file
// cannot be read, the start loads from the tables as before. Either way the file is deleted
// before the start goes on, so a later start (after a crash, say) never finds a stale one.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { HotAccountsParts } from '../accounts/hot-accounts.js';
import type { VelocityParts } from '../signals/velocity.js';
import { openDatabase } from '../store/database.js';
import { readPartsFile, readPartsMeta, writePartsFile } from '../store/parts-file.js';
import { newSnapshotToken, sealSnapshot } from '../store/snapshot-seal.js';
import type { EventIdsParts } from './event-ids.js';

const kFileName = 'start-snapshot';
/**
 * The layout of the parts in the file. 2: velocity amount slots hold the day's 24 hourly sums only
 * (36 numbers before), and a slot names its amount slot plus one (0: none; -1 before). A start
 * meets another format after an upgrade, and loads from the tables.
 */
const kFormat = 2;

/** What the snapshot holds (each part as its owner's parts() gives it). */
export interface StartSnapshotParts {
  readonly accounts: HotAccountsParts;
  readonly velocity: VelocityParts;
  readonly eventIds: EventIdsParts;
}

interface SnapshotMeta {
  readonly format: number;
  readonly token: string;
  readonly schema: number;
  /** When the stop wrote it (for whoever opens the file by hand). */
  readonly writtenAt: number;
}

export type TakenSnapshot =
  | { readonly ok: true; readonly parts: StartSnapshotParts; readonly ms: number }
  | { readonly ok: false; readonly reason: string };

export function startSnapshotPath(dataDir: string): string {
  return join(dataDir, kFileName);
}

/**
 * Writes the snapshot, then seals the database to it (nothing may write the database after);
 * bytes written. Throws when either fails, and leaves no file then.
 */
export function saveStartSnapshot(dataDir: string, parts: StartSnapshotParts, schema: number, now: number): number {
  const path = startSnapshotPath(dataDir);
  const token = newSnapshotToken();
  try {
    const bytes = writePartsFile(path, { format: kFormat, token, schema, writtenAt: now } satisfies SnapshotMeta, parts);
    const db = openDatabase(dataDir, { mustExist: true });
    try {
      sealSnapshot(db, token, now);
    } finally {
      db.close();
    }
    return bytes;
  } catch (error) {
    rmSync(path, { force: true });
    throw error;
  }
}

/**
 * The snapshot, if it is the one the database was sealed with (`sealed`: the token the start
 * claimed, or null) at `schema`; the file is deleted in every case.
 */
export function takeStartSnapshot(dataDir: string, sealed: string | null, schema: number): TakenSnapshot {
  const path = startSnapshotPath(dataDir);
  const started = performance.now();
  try {
    let meta: SnapshotMeta | null;
    try {
      meta = readPartsMeta(path) as SnapshotMeta | null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, reason: 'no snapshot' };
      return { ok: false, reason: `the snapshot cannot be read: ${(error as Error).message}` };
    }
    if (typeof meta !== 'object' || meta === null) return { ok: false, reason: 'the snapshot names no token' };
    if (meta.format !== kFormat) return { ok: false, reason: `the snapshot is of another format (${String(meta.format)})` };
    if (sealed === null || meta.token !== sealed) return { ok: false, reason: 'the database changed after the snapshot was written (or the stop did not seal it)' };
    if (meta.schema !== schema) return { ok: false, reason: `the snapshot is of schema version ${meta.schema}, the database of ${schema}` };
    try {
      const { tree } = readPartsFile(path);
      return { ok: true, parts: tree as StartSnapshotParts, ms: performance.now() - started };
    } catch (error) {
      return { ok: false, reason: `the snapshot cannot be read: ${(error as Error).message}` };
    }
  } finally {
    rmSync(path, { force: true });
    rmSync(`${path}.tmp`, { force: true });
  }
}
