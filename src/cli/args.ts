// Shared pieces of the command line: argument parsing with node:util parseArgs, usage errors,
// and opening the data dir the way every command does.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { openDatabase, secureDataDir, type Db } from '../store/database.js';
import { migrate } from '../store/migrate.js';

export class UsageError extends Error {}

export interface Command {
  readonly summary: string;
  readonly help: string;
  run(args: string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends Options>(args: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export const kDataDirOption = { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

export function dataDirOf(values: { 'data-dir'?: string | undefined }): string {
  return values['data-dir'] ?? (process.env.DATA_DIR || './data');
}

/** Opens (creating when missing) the database of a data dir, migrated to this build's schema. */
export function openDataDir(dataDir: string): Db {
  secureDataDir(dataDir);
  const db = openDatabase(dataDir);
  migrate(db);
  return db;
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

export function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

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
