// Shared pieces of the command line: argument parsing with node:util parseArgs, usage errors,
// and opening the data dir the way every command does.
import { writeSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { characterLength } from '../shared/text.js';
import { tryDataDirLock } from '../store/data-dir-lock.js';
import { databasePath, DataDirError, missingDatabase, openDatabase, secureDataDir, type Db } from '../store/database.js';
import { migrate, schemaStatus, type SchemaStatus } from '../store/migrate.js';

/** Wrong arguments: the command prints the message and exits 2. */
export class UsageError extends Error {}

/** The command cannot be done as asked (no database, a server in the way): one line, exit 1. */
export class CliError extends Error {}

export interface Command {
  readonly summary: string;
  readonly help: string;
  run(args: string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends Options>(args: string[], options: O, allowPositionals = false) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // parseArgs keeps the last of a flag given twice (`--port 8080 … --port 9090`): one of them is a
  // mistake, and which one is not for us to guess.
  const given = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple === true || token.name === 'help') continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} is given more than once; give it once`);
    given.add(token.name);
  }
  // A flag given an empty value ("$X" with X unset) is a mistake, for every flag of every
  // command: never the default, never an empty label or id looked up (docs/operations.md).
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === '' || (Array.isArray(value) && value.includes(''))) {
      throw new UsageError(name === 'data-dir' ? kEmptyDataDir : `--${name}: empty value; give a value, or leave the flag out`);
    }
  }
  return parsed;
}

const kEmptyDataDir = '--data-dir: empty value; give a value, or leave the flag out to use DATA_DIR or ./data';

export const kDataDirOption = { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

/** The --data-dir line of every command's help but serve's. */
export const kDataDirHelp = `--data-dir D  the data dir (default: DATA_DIR, else ./data); it must hold a database: only
              fraud-scorer serve creates one`;

/** The data dir of values from parse(), which refused an empty --data-dir ("$DIR" unset). */
export function dataDirOf(values: { 'data-dir'?: string | undefined }): string {
  return values['data-dir'] ?? (process.env.DATA_DIR || './data');
}

/**
 * Opens the database of a data dir for a command other than serve. Only serve creates a database,
 * so a mistyped --data-dir fails here instead of leaving an empty database behind.
 *
 * What the command line writes while a server runs (keys, tenants, projects and their published
 * presets, webhooks, redeliveries) is what the server reads back on its own: keys and rulesets
 * through generation counters, webhook settings and the outbox on every delivery round. A schema
 * migration is the exception: a server must never run on a schema it does not know, so a database
 * older than this build is migrated here only while no server holds the data dir's lock.
 */
export function openDataDir(dataDir: string): Db {
  const path = databasePath(dataDir);
  const missing = missingDatabase(path);
  if (missing !== null) throw new CliError(`${missing}; check --data-dir or DATA_DIR (only fraud-scorer serve creates a database)`);
  // Looked at read-only first: opening for writing sets WAL mode, which writes to the file.
  let status: SchemaStatus;
  try {
    const probe = openDatabase(dataDir, { readonly: true });
    try {
      status = schemaStatus(probe);
    } finally {
      probe.close();
    }
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (!status.initialised) throw new CliError(`${path} is not a fraud-scorer database (it has no schema); start fraud-scorer serve on a data dir to create one`);
  if (status.unknown.length > 0) throw new CliError(`${path} was used by a newer build (schema migrations ${status.unknown.join(', ')} are unknown here); use that build`);
  try {
    secureDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirError) throw new CliError(error.message);
    throw error;
  }
  // A command waits for the running server's commits (or another command's) as long as it takes
  // within reason: an operator's command should not fail because a batch was being written.
  const db = openDatabase(dataDir, { mustExist: true, busyTimeoutMs: kCliBusyTimeoutMs });
  try {
    if (status.pending.length > 0) migrateUnlessServed(db, dataDir, status.pending);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** How long a command waits for the write lock (the server's connections wait far less). */
const kCliBusyTimeoutMs = 30_000;

function migrateUnlessServed(db: Db, dataDir: string, pending: readonly number[]): void {
  const path = databasePath(dataDir);
  const lock = tryDataDirLock(dataDir);
  if (lock === null) {
    throw new CliError(`${path} needs schema migrations ${pending.join(', ')} of this build, and a server of an older build is running on it; stop that server and start this build's (it migrates the database), then run this command again`);
  }
  try {
    migrate(db);
  } finally {
    lock.release();
  }
}

/** Opens the data dir of the parsed --data-dir, runs `work`, and closes the database whatever happens. */
export function withDataDir<T>(values: { 'data-dir'?: string | undefined }, work: (db: Db) => T): T {
  const db = openDataDir(dataDirOf(values));
  try {
    return work(db);
  } finally {
    db.close();
  }
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

const kMaxNameLength = 200;

/**
 * Text an operator names a thing with (a key's label, a project's or a tenant's name). The lists
 * show one thing per line, so a control character or line break would forge lines there.
 */
export function checkedName(value: string, flag: string): string {
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value) || characterLength(value) > kMaxNameLength) {
    throw new UsageError(`--${flag}: at most ${kMaxNameLength} characters, none of them a control character or line break`);
  }
  return value;
}

/** Such a name in a list's line: quoted, any character a line cannot show escaped (names stored by earlier builds). */
export function quotedName(name: string): string {
  return JSON.stringify(name);
}

export function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/**
 * Writes `text` to stdout now, throwing if it cannot be written (EPIPE: the reader closed, ENOSPC):
 * for what the command shows only once (a new key), whose caller must undo it when nobody saw it.
 * (process.stdout reports such a failure only after the command has ended.)
 */
export function printOrThrow(text: string): void {
  const bytes = Buffer.from(text);
  for (let written = 0; written < bytes.length; ) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      // A full pipe (stdout is non-blocking): wait for its reader.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(kPause, 0, 0, 5);
    }
  }
}

const kPause = new Int32Array(new SharedArrayBuffer(4));

export function formatTime(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(epochMs).toISOString();
}

export type Action = (args: string[]) => number | Promise<number>;

/**
 * A command made of actions ("keys create", "keys list"): no action prints the help and exits 2,
 * --help prints it and exits 0, an unknown action is a usage error.
 */
export function actionCommand(name: string, summary: string, help: string, actions: Readonly<Record<string, Action>>): Command {
  return {
    summary,
    help,
    async run(args) {
      const [action, ...rest] = args;
      if (action === undefined || action === '--help' || action === '-h') {
        print(help);
        return action === undefined ? 2 : 0;
      }
      const run = Object.hasOwn(actions, action) ? actions[action] : undefined;
      if (run === undefined) {
        throw new UsageError(`unknown ${name} action ${JSON.stringify(action)}; expected ${Object.keys(actions).join(', ')}`);
      }
      return run(rest);
    },
  };
}
