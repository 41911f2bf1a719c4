// One server per data dir: `serve` holds an exclusive lock on <data-dir>/server.lock for as long as
// it runs. Two servers on one data dir would each deliver the webhook outbox and each keep their
// own in-memory state (idempotency, velocity) of the same events.
//
// The lock is SQLite's own file lock (POSIX fcntl / Windows LockFileEx) on a small database file,
// taken with BEGIN EXCLUSIVE under locking_mode=EXCLUSIVE and held until the connection closes:
//   - the kernel drops it when the process ends in any way (SIGKILL included), so there is never a
//     stale lock to clean up and no PID file to trust;
//   - a second process asking for it with a zero busy timeout gets SQLITE_BUSY at once.
// The file is never deleted: unlinking a lock file lets a third process lock a new file with the
// same name while a second still holds the old one.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { giveToDataDirOwner } from './data-dir-owner.js';

export const kLockFileName = 'server.lock';

/** Another process holds the lock of this data dir. */
export class DataDirLockedError extends Error {}

export interface DataDirLock {
  /** Releases the lock (closing the connection that holds it). */
  release(): void;
}

export function lockPath(dataDir: string): string {
  return join(dataDir, kLockFileName);
}

/**
 * Takes the data dir's lock, or throws DataDirLockedError when another process holds it. Keep the
 * returned object referenced for as long as the lock is needed: a collected connection closes, and
 * the lock goes with it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const db = new Database(lockPath(dataDir), { timeout: 0 });
  try {
    giveToDataDirOwner(lockPath(dataDir));
    db.pragma('locking_mode = EXCLUSIVE');
    // No rollback journal on disk: the file exists only to be locked.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new DataDirLockedError(`the data dir ${dataDir} is in use by another fraud-scorer process, a server or a command running the server's parts (it holds ${lockPath(dataDir)})`);
    }
    throw error;
  }
  return { release: () => db.close() };
}

/** The data dir's lock when no server holds it (for a command that must not run beside one), else null. */
export function tryDataDirLock(dataDir: string): DataDirLock | null {
  try {
    return acquireDataDirLock(dataDir);
  } catch (error) {
    if (error instanceof DataDirLockedError) return null;
    throw error;
  }
}
