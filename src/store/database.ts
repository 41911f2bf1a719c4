// Opening the SQLite file with the settings every connection needs (DESIGN §2):
// WAL so readers never wait for the writer, synchronous=NORMAL so a commit does not fsync (WAL with
// NORMAL survives a process crash or SIGKILL; only an OS crash or power cut can lose the last
// commits), foreign keys on, and a busy timeout for the moments the command line writes too.
import Database from 'better-sqlite3';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { giveToDataDirOwner } from './data-dir-owner.js';

export type Db = Database.Database;

export const kDatabaseFileName = 'fraud-scorer.db';
/** How long a connection waits for another process's write lock before giving up. */
export const kDefaultBusyTimeoutMs = 2000;
/** Connections that write outside serving: setup and migrations, the command line, benchmarks' stores. */
const kWriterCacheKiB = 64 * 1024;
/**
 * The serving writer's page cache: SQLite's default size. A large one cost the writer more than it
 * saved (bench/README.md, step 18): its hash table is walked at commits after a B-tree balance, and
 * the pages it misses are in the OS page cache anyway.
 */
const kServingWriterCacheKiB = 2 * 1024;
const kReaderCacheKiB = 16 * 1024;
/** WAL size past which the checkpointer starts the WAL over (store/checkpoint-worker.ts). */
export const kWalResetBytes = 256 * 1024 * 1024;
/**
 * When the WAL starts over, the next commit cuts the file down to this size. Above the reset size,
 * with room for what comes in while a reset is due: cutting 16 MiB off after every reset held the
 * writer 2–10 ms (bench/README.md, step 23); now the file is cut only after a reset that readers
 * held back, and stays at most this large.
 */
const kJournalSizeLimitBytes = kWalResetBytes + 128 * 1024 * 1024;

/**
 * `PRAGMA compile_options` lists this for the SQLite that scripts/sqlite-secure-delete.mjs patched
 * (npm runs it after every install). With secure_delete on, stock SQLite still leaves copies of
 * cells in the space a rebalanced page does not use (between its cell pointers and its cells),
 * which an erasure cannot reach; the patched build zeroes them (docs/operations.md, "SQLite,
 * patched for erasure").
 */
export const kSecureDeletePatchOption = 'FRAUD_SCORER_SECURE_DELETE_V1';

/** The SQLite that better-sqlite3 loaded cannot keep the erasure guarantee. */
export class SqliteBuildError extends Error {}

/** Throws SqliteBuildError unless `db`'s SQLite was built with the secure_delete patch. */
export function requireSecureDeletePatch(db: Pick<Db, 'pragma'>): void {
  const options = db.pragma('compile_options') as Array<{ compile_options: string }>;
  if (options.some((row) => row.compile_options === kSecureDeletePatchOption)) return;
  throw new SqliteBuildError(
    'better-sqlite3 was not built with the SQLite patch that erasure needs (a prebuilt binary, or a rebuild after the install): run `npm install` again, or `node scripts/sqlite-secure-delete.mjs` (docs/operations.md, "SQLite, patched for erasure")',
  );
}

export function databasePath(dataDir: string): string {
  return join(dataDir, kDatabaseFileName);
}

/**
 * Why a command finds no database at `path` to open: it is not there, or looking failed (a data
 * dir this user may not enter, EACCES: not the same as no database at all); null: it is there.
 */
export function missingDatabase(path: string): string | null {
  try {
    statSync(path);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return `there is no database at ${path}`;
    return `the database at ${path} cannot be looked at (${code ?? (error as Error).message}); run the command as the data dir's owner (the service's user) or root`;
  }
}

/** --data-dir cannot be used: it names something that is not a directory, or it cannot be made or secured. */
/** SQLite found the database locked (SQLITE_BUSY and its extended codes): another connection holds it. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

export class DataDirError extends Error {}

/**
 * The data dir holds key hashes, the install secret and personal data: the dir is 0700 and every
 * file in it 0600, whatever the umask. Creates the dir when missing, tightens one that exists, and
 * sets this process's umask so that files SQLite creates later (-wal, -shm, backups) are 0600 too.
 */
export function secureDataDir(dataDir: string): void {
  process.umask(0o077);
  try {
    if (!existsSync(dataDir)) makeDirectories(dataDir, 0o700);
    // Never the mode of a file named by mistake.
    else if (!statSync(dataDir).isDirectory()) throw new DataDirError(`the data dir ${dataDir} is not a directory; give a directory (it is made if it does not exist)`);
    // Nor of a folder named by mistake (DATA_DIR=/etc as root would make every file in it 0600).
    else if (isOtherFolder(dataDir)) throw new DataDirError(`the data dir ${dataDir} holds other files and no ${kDatabaseFileName}; give a new or empty folder, or a data dir of fraud-scorer (every file in one is made private)`);
    else if (existsSync(databasePath(dataDir)) && !statSync(databasePath(dataDir)).isFile()) throw new DataDirError(`${databasePath(dataDir)} is not a file; the data dir holds the database as a file of that name`);
    // The one-server lock is the data dir's (server.lock): a database linked into a second data
    // dir would let a second server write it beside the first (a hard link, with a WAL of its
    // own: the file is then corrupt). Move the whole data dir instead.
    else if (lstatSync(databasePath(dataDir), { throwIfNoEntry: false })?.isSymbolicLink() === true) throw new DataDirError(`${databasePath(dataDir)} is a symbolic link; the data dir holds the database itself (to keep it elsewhere, point DATA_DIR at a data dir there)`);
    else if ((statSync(databasePath(dataDir), { throwIfNoEntry: false })?.nlink ?? 1) > 1) throw new DataDirError(`${databasePath(dataDir)} has other hard links (made by ln or cp -l): remove them; the data dir holds the database alone, and copies are made with fraud-scorer backup`);
    chmodSync(dataDir, 0o700);
    for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
      if (entry.isFile()) chmodSync(join(dataDir, entry.name), 0o600);
    }
  } catch (error) {
    if (error instanceof DataDirError) throw error;
    // A path the process may not write (EACCES, EPERM), or one under a file (ENOTDIR): one line.
    throw new DataDirError(`the data dir ${dataDir} could not be made or secured: ${(error as Error).message}`);
  }
}

/**
 * What a data dir may hold without its database (lost+found: a file system of its own). Not a
 * -wal, -shm or journal: SQLite would drop one that outlived its database, and with it commits.
 */
const kDataDirNamesWithoutDatabase = /^(server\.lock|bootstrap-keys\.json|start-snapshot(\.tmp)?|lost\+found)$/;

/** A folder without a database that holds anything a data dir would not: not one of ours to tighten. */
function isOtherFolder(dataDir: string): boolean {
  const names = readdirSync(dataDir);
  return !names.includes(kDatabaseFileName) && names.some((name) => !kDataDirNamesWithoutDatabase.test(name));
}

/**
 * mkdirSync(path, { recursive: true }) without its loop: Node's retries forever an mkdir that
 * answers ENOENT under a parent that exists (/proc/x, /sys/x). Each missing level is made alone.
 */
function makeDirectories(path: string, mode: number): void {
  const missing: string[] = [];
  for (let at = resolve(path); !existsSync(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const dir of missing.reverse()) mkdirSync(dir, { mode });
}

/**
 * After every other connection of this process is closed: empties the WAL into the database
 * (TRUNCATE) and closes, which removes the -wal and -shm files. A clean stop leaves one file.
 */
export function closeCleanly(dataDir: string): void {
  const db = new Database(databasePath(dataDir), { fileMustExist: true });
  db.pragma(`busy_timeout = ${kDefaultBusyTimeoutMs}`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

export interface OpenOptions {
  readonly readonly?: boolean;
  readonly busyTimeoutMs?: number;
  /**
   * The server's writer: checkpoints are left to the checkpointer thread (store/checkpointer.ts),
   * and its page cache is small (kServingWriterCacheKiB).
   */
  readonly servingWriter?: boolean;
  /** Fail rather than create the file (read-only connections always do). */
  readonly mustExist?: boolean;
}

/** Checked once per thread, before the first connection that writes opens the file. */
let patchChecked = false;

export function openDatabase(dataDir: string, options: OpenOptions = {}): Db {
  // Every connection that writes deletes with secure_delete, which only the patched build keeps.
  if (!(options.readonly ?? false) && !patchChecked) {
    const probe = new Database(':memory:');
    try {
      requireSecureDeletePatch(probe);
    } finally {
      probe.close();
    }
    patchChecked = true;
  }
  const db = new Database(databasePath(dataDir), { readonly: options.readonly ?? false, fileMustExist: (options.readonly ?? false) || (options.mustExist ?? false) });
  // A first start as root in the service user's folder: the database is that user's (and so,
  // SQLite sees to it, its -wal and -shm).
  if (!(options.readonly ?? false)) giveToDataDirOwner(databasePath(dataDir));
  // better-sqlite3 waits on the calling thread: on the HTTP thread this is a pause of the server,
  // so it is short, and a write that cannot get the lock in time fails (500 / 503) instead.
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? kDefaultBusyTimeoutMs}`);
  if (!options.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Deleted and overwritten content is zeroed, so an erased account's data does not linger in
    // free pages of the file (DELETE /v1/accounts/{id}).
    db.pragma('secure_delete = ON');
    // The file is not memory-mapped: mapped pages count in the process's resident memory, which
    // would then grow with the database.
    db.pragma(`cache_size = -${options.servingWriter ? kServingWriterCacheKiB : kWriterCacheKiB}`);
    if (options.servingWriter) db.pragma('wal_autocheckpoint = 0');
    // After a checkpoint resets the WAL, SQLite truncates the file back to this size.
    db.pragma(`journal_size_limit = ${kJournalSizeLimitBytes}`);
  } else {
    db.pragma(`cache_size = -${kReaderCacheKiB}`);
  }
  db.pragma('foreign_keys = ON');
  return db;
}
