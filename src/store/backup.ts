// Online backup of a data dir's database into one file, while the server keeps running.
//
// SQLite's online backup API (better-sqlite3 `db.backup`) copies a consistent snapshot through a
// read-only connection of its own. In WAL mode a reader never blocks the writer, so the server
// goes on committing meanwhile. The copy is made in as few steps as possible: when another
// connection writes between two steps, SQLite restarts the copy, and small steps under steady
// traffic could restart forever.
//
// The file appears at its destination only complete and checked: it is written beside it under a
// temporary name (mode 0600: it holds key hashes, the install secret and personal data), switched
// to rollback-journal mode so that it is one self-contained file without -wal/-shm companions,
// checked with PRAGMA quick_check, flushed to disk, and then moved into place. Without `force`
// the move is a hard link, which fails rather than replace a file that appeared meanwhile.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, openSync, realpathSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { kLockFileName, lockPath, tryDataDirLock } from './data-dir-lock.js';
import { closeCleanly, databasePath, DataDirError, kDatabaseFileName, missingDatabase, openDatabase, secureDataDir } from './database.js';
import { flushToDisk } from './flush-to-disk.js';

export class BackupError extends Error {}

export interface BackupResult {
  readonly source: string;
  readonly destination: string;
  readonly bytes: number;
  readonly pages: number;
  readonly schemaVersion: number;
}

// Pages per step after the first (better-sqlite3 always starts with 100): everything at once.
const kAllPages = 2 ** 31 - 1;

export async function backupDatabase(dataDir: string, destination: string, options: { readonly force: boolean }): Promise<BackupResult> {
  const source = databasePath(dataDir);
  const missing = missingDatabase(source);
  if (missing !== null) throw new BackupError(`${missing}; check --data-dir or DATA_DIR`);
  // As every command does (docs/operations.md, "The data dir"): the files this one makes (the lock,
  // the -wal and -shm of a stopped server's database) private, and a loosened data dir tightened.
  try {
    secureDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirError) throw new BackupError(error.message);
    throw error;
  }
  const folder = dirname(destination);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new BackupError(`${folder} is not a directory`);
  if (existsSync(destination) && statSync(destination).isDirectory()) throw new BackupError(`${destination} is a directory; --to names the file to write`);
  // Refusals that --force does not lift come first: "pass --force" must not be said of them.
  const refusal = refusedDestination(source, destination);
  if (refusal !== null) throw new BackupError(refusal);
  if (existsSync(destination) && !options.force) throw new BackupError(`${destination} exists; pass --force to replace it`);

  const partial = join(folder, `.${basename(destination)}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    closeSync(openSync(partial, 'wx', 0o600));
  } catch (error) {
    throw new BackupError(`cannot write in ${folder}: ${(error as Error).message}${adviceFor(error)}`);
  }
  // No server holds the data dir and a clean stop left it one file: it is left so (a read-only
  // connection makes the -wal and -shm files, and only a writer's close removes them). A WAL a
  // crash left stays for the next start.
  const unserved = existsSync(`${source}-wal`) ? null : tryDataDirLock(dataDir);
  try {
    let db;
    try {
      db = openDatabase(dataDir, { readonly: true });
    } catch (error) {
      throw new BackupError(`cannot read ${source}: ${(error as Error).message}${adviceFor(error)}`);
    }
    try {
      await db.backup(partial, { progress: () => kAllPages });
    } catch (error) {
      throw new BackupError(`the copy into ${folder} failed, nothing was written at ${destination}: ${(error as Error).message}${adviceFor(error)}`);
    } finally {
      db.close();
      if (unserved !== null) {
        try {
          closeCleanly(dataDir);
        } finally {
          unserved.release();
        }
      }
    }
    let sealed;
    try {
      sealed = seal(partial);
    } catch (error) {
      if (error instanceof BackupError) throw error;
      throw new BackupError(`the copy into ${folder} could not be finished, nothing was written at ${destination}: ${(error as Error).message}${adviceFor(error)}`);
    }
    const { pages, schemaVersion } = sealed;
    flushToDisk(partial);
    if (options.force) {
      renameSync(partial, destination);
    } else {
      try {
        linkSync(partial, destination);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupError(`${destination} appeared during the backup; pass --force to replace it`);
        throw error;
      }
      unlinkSync(partial);
    }
    flushToDisk(folder);
    return { source, destination, bytes: statSync(destination).size, pages, schemaVersion };
  } finally {
    if (existsSync(partial)) unlinkSync(partial);
  }
}

/**
 * Why the copy must not go to `destination`, or null. Replacing a database file under a server
 * that has it open corrupts it (the server goes on writing its WAL against the old file), and a
 * database file put beside another one's -wal is read with that WAL's pages: a backup never
 * replaces a database in use, nor the one it copies, and never restores into a running server.
 */
function refusedDestination(source: string, destination: string): string | null {
  const real = (path: string): string => join(realpathSync(dirname(path)), basename(path));
  const target = real(destination);
  const live = real(source);
  if ([live, `${live}-wal`, `${live}-shm`].includes(target)) return `${destination} is the database being backed up (or its WAL); --to names a new file`;
  const folder = dirname(target);
  // The files a data dir keeps beside its database are not backups' to replace: a new server.lock
  // under a running server lets a second server start on the same data dir (the lock is held on
  // the old file), and the others are a database's journal, the start snapshot or the first keys.
  if (kDataDirFiles.includes(basename(target)) && (existsSync(join(folder, kDatabaseFileName)) || existsSync(lockPath(folder)))) {
    return `${destination} is a file of the data dir ${folder}, not a place for a backup; --to names a new file (docs/operations.md, "The data dir")`;
  }
  // Any other name is a file of its own, even inside a data dir.
  if (basename(target) !== kDatabaseFileName) return null;
  for (const companion of ['-wal', '-shm']) {
    const path = `${join(folder, kDatabaseFileName)}${companion}`;
    if (existsSync(path)) return `${path} exists: ${folder} holds a database in use or not closed cleanly; restore into an empty data dir (docs/operations.md, "Restore")`;
  }
  if (!existsSync(lockPath(folder))) return null;
  const lock = tryDataDirLock(folder);
  if (lock === null) return `a server runs on ${folder}; stop it before writing its database (to restore, use an empty data dir: docs/operations.md, "Restore")`;
  lock.release();
  return null;
}

/**
 * The files of a data dir other than the database (docs/operations.md, "The data dir"). The names
 * of the start snapshot and the first keys are set in scoring/start-snapshot.ts and main.ts, which
 * the store does not import; test/cli/backup.test.ts checks them against those modules.
 */
export const kDataDirFiles: readonly string[] = [
  kLockFileName, 'start-snapshot', 'bootstrap-keys.json',
  `${kDatabaseFileName}-wal`, `${kDatabaseFileName}-shm`, `${kDatabaseFileName}-journal`,
];

/** What to do about a failed write or read, from its error code, for the one line the operator sees. */
function adviceFor(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return ' (the disk is full: free space there, or write the copy to another disk)';
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN') {
    return ' (check that the file system is mounted read-write and that this user may write there; take backups as the service user)';
  }
  return '';
}

/** Makes the copy one self-contained file and checks it. */
function seal(path: string): { pages: number; schemaVersion: number } {
  const copy = new Database(path, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError(`the copy failed its check: ${String(check)}`);
    return {
      pages: copy.pragma('page_count', { simple: true }) as number,
      schemaVersion: copy.pragma('user_version', { simple: true }) as number,
    };
  } finally {
    copy.close();
  }
}
