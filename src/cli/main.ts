// fraud-scorer: the command line (package bin). One module per command; this file only dispatches.
import Database from 'better-sqlite3';
import { kVersion } from '../shared/version.js';
import { SqliteBuildError } from '../store/database.js';
import { CliError, UsageError, print, type Command } from './args.js';

// Each command's module is loaded only when it runs: `serve` brings the whole server (ajv schemas,
// the rules compiler, uWS, piscina), which a `keys create` has no use for. The top-level help
// loads them all, for their summaries.
const kCommands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  keys: async () => (await import('./keys.js')).keysCommand,
  projects: async () => (await import('./projects.js')).projectsCommand,
  tenants: async () => (await import('./projects.js')).tenantsCommand,
  webhook: async () => (await import('./webhook.js')).webhookCommand,
  accounts: async () => (await import('./accounts.js')).accountsCommand,
  backup: async () => (await import('./backup.js')).backupCommand,
};

async function usage(): Promise<string> {
  const lines: string[] = [];
  for (const [name, load] of Object.entries(kCommands)) lines.push(`  ${name.padEnd(10)} ${(await load()).summary}`);
  return `Usage: fraud-scorer <command> [options]\n       fraud-scorer --version\n\nCommands:\n${lines.join('\n')}\n\nRun fraud-scorer <command> --help for the options of a command.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  // The server's log goes on whatever reads it; a command's answer is for its reader only.
  if (name !== 'serve') process.stdout.on('error', stopWriting);
  else for (const stream of [process.stdout, process.stderr]) stream.on('error', goOnWithoutLog);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    print(await usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    print(`fraud-scorer ${kVersion}`);
    return 0;
  }
  const load = Object.hasOwn(kCommands, name) ? kCommands[name] : undefined;
  if (load === undefined) {
    process.stderr.write(`fraud-scorer: unknown command ${JSON.stringify(name)}\n\n${await usage()}\n`);
    return 2;
  }
  const command = await load();
  try {
    return await command.run(args);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`fraud-scorer ${name}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof CliError || error instanceof SqliteBuildError) {
      process.stderr.write(`fraud-scorer ${name}: ${error.message}\n`);
      return 1;
    }
    // The database refused (a full disk, an I/O error, a lock held too long): the operator's
    // problem, said in one line. A command's changes are one transaction, rolled back whole.
    if (error instanceof Database.SqliteError) {
      process.stderr.write(`fraud-scorer ${name}: the database refused the command, nothing was changed: ${error.message} (${error.code}); check the disk and the data dir, then run it again\n`);
      return 1;
    }
    throw error;
  }
}

/**
 * A command's answer could not be written: a reader that closed early (`| head -1`) is no failure
 * (the command's work is done), as with other Unix tools; any other (a full disk) is one line.
 */
function stopWriting(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  process.stderr.write(`fraud-scorer: the answer could not be written: ${error.message}\n`);
  process.exit(1);
}

/**
 * The server's log could not be written: its reader went away (the terminal of a server started in
 * the foreground closed, EIO, and SIGHUP drains it; the reader of a pipe exited, EPIPE). The server
 * goes on, and drains, without its log: dying on the next line would drop the requests in flight
 * and the start snapshot.
 */
function goOnWithoutLog(): void {}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`fraud-scorer: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
