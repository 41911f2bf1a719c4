// The size of a server's database, for growth per event: the files on disk, and the database's
// logical size (page_count × page_size as a reader sees it, committed WAL frames included), which
// does not move with checkpoints and WAL resets.
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { databasePath } from '../../src/store/database.js';

export interface DataSize {
  /** page_count × page_size: what the database file holds once checkpointed. */
  readonly logical: number;
  readonly dbFile: number;
  readonly walFile: number;
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Reads the sizes with a short-lived read-only connection (held for a few microseconds). */
export function dataSize(dataDir: string): DataSize {
  const path = databasePath(dataDir);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    return { logical: pages * pageSize, dbFile: fileBytes(path), walFile: fileBytes(`${path}-wal`) };
  } finally {
    db.close();
  }
}
