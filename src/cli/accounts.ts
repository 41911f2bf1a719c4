// fraud-scorer accounts erase: the operator's erasure (docs/accounts.md, "The operator's erasure").
// The erasure itself is the server's (a barrier on its events and its memory): the command writes
// a request row and waits for the answer. With no server on the data dir, the command starts the
// server's machinery in this process, without HTTP; the start does the request, and it stops.
import { collectOperatorAnswer, kOperatorAliveIntervalMs, kOperatorErasureWaitMs, operatorErasureTaken, requestOperatorErasure, stillWaiting, withdrawOperatorErasure, type OperatorErasureAnswer } from '../accounts/operator-erasure-store.js';
import type { ErasureSummary } from '../accounts/accounts-service.js';
import { ConfigError, loadConfig, type Config } from '../config/settings.js';
import { createLogger } from '../shared/log.js';
import { tryDataDirLock } from '../store/data-dir-lock.js';
import { openDatabase, type Db } from '../store/database.js';
import { resolveProjectRef } from '../tenancy/tenancy-store.js';
import { actionCommand, CliError, dataDirOf, kDataDirHelp, kDataDirOption, openDataDir, parse, print, printJson, required, UsageError } from './args.js';

const kHelp = `Usage:
  fraud-scorer accounts erase --project live|sandbox|<prj_id> [--data-dir D] [--json] [--] ID

erase  erases the account ID (its acc_ id, or the external_account_id the project sends) as
       DELETE /v1/accounts/{id} does: its events, pending ones included, signals, links, list
       items, fingerprint sightings; cases and labels lose it. An account that several live
       projects of the tenant used is erased in all of them: the API answers it 403
       ACCOUNT_SHARED_ACROSS_PROJECTS, and only the operator erases it. Each project whose data
       went has the erasure in its audit trail, by actor "cli".
       A running server does it and answers within a second or so (an erasure waits for the
       account's events in flight and for webhook deliveries naming it). With no server on the
       data dir, the command starts the server's parts in this process (no HTTP, no async
       scoring, no webhooks), does it and stops them again; a server cannot start meanwhile.
       Stopped (Ctrl-C) before the erasure is taken, or killed, the command erases nothing.
       Prints what was erased (with --json: the DELETE's answer); an account erased before is
       answered as such. Exit 1: no such account in the project, or the erasure failed.

${kDataDirHelp}`;

export const accountsCommand = actionCommand('accounts', 'erase an account, in every project that used it', kHelp, { erase });

const kAnswerPollMs = 50;
/** How often the command looks whether the data dir is free (the server stopped, another command ended). */
const kLockPollMs = 500;

async function erase(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { ...kDataDirOption, project: { type: 'string' }, json: { type: 'boolean' } }, true);
  if (values.help) return (print(kHelp), 0);
  const projectRef = required(values.project, 'project');
  if (positionals.length !== 1 || positionals[0] === '') throw new UsageError('give one account: its acc_ id or its external_account_id');
  const accountRef = positionals[0]!;
  const dataDir = dataDirOf(values);
  // Settings are read before the request is written: one that is wrong leaves nothing to do.
  const config = serverConfig(dataDir);
  const connection = { db: openDataDir(dataDir) };
  try {
    const project = resolveProjectRef(connection.db, projectRef);
    if (project === null) throw new UsageError(`no such project: ${projectRef}`);
    const requestId = requestOperatorErasure(connection.db, project.project_id, accountRef, Date.now());
    let answer: OperatorErasureAnswer;
    try {
      answer = await waitForAnswer(connection, requestId, config);
    } catch (error) {
      // Not taken: no one does it later (a command that failed says so and is run again).
      withdraw(connection.db, requestId);
      throw error;
    }
    // The id given named nothing (or the erasure failed), and no server empties the WAL of it.
    if (!answer.ok) await emptyWalUnlessServed(connection.db, dataDir);
    return report(answer, accountRef, project.project_id, values.json === true);
  } finally {
    connection.db.close();
  }
}

/** The settings a server of this data dir starts with; it listens on nothing here, so HOST and PORT are not read. */
function serverConfig(dataDir: string): Config {
  try {
    return loadConfig({ 'data-dir': dataDir, host: '127.0.0.1', port: '0' }, process.env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * The answer to the request: a running server's, or, whenever no server holds the data dir and
 * the request is not taken, the one a start of the server's parts in this process gives (a
 * server that stopped meanwhile, another command that held the data dir, are waited out).
 * Meanwhile it says every second that it waits: a server takes no request whose command does not.
 */
async function waitForAnswer(connection: { db: Db }, requestId: number, config: Config): Promise<OperatorErasureAnswer> {
  const deadline = Date.now() + kOperatorErasureWaitMs;
  let stoppedBy: string | null = null;
  let inProcess = false;
  const onSignal = (signal: string): void => {
    stoppedBy = signal;
    // The server's parts run here: the request is withdrawn now, unless they took it already.
    if (inProcess) withdrawNow(config.dataDir, requestId);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.once(signal, onSignal);
  try {
    let lockLookedAt = 0;
    let saidAt = 0;
    for (;;) {
      const { db } = connection;
      const answer = collectOperatorAnswer(db, requestId);
      if (answer !== null) return answer;
      const taken = operatorErasureTaken(db, requestId);
      if (stoppedBy !== null) throw new CliError(`stopped by ${stoppedBy}${taken ? '; the server had taken the request and finishes it (run the command again: an account erased is answered as erased before)' : ': nothing was erased'}`);
      if (Date.now() > deadline) throw new CliError(timedOut(taken, tryDataDirLock(config.dataDir)));
      if (!taken && Date.now() - saidAt >= kOperatorAliveIntervalMs) {
        saidAt = Date.now();
        stillWaiting(db, requestId, saidAt);
      }
      if (Date.now() - lockLookedAt >= kLockPollMs) {
        lockLookedAt = Date.now();
        const free = tryDataDirLock(config.dataDir);
        // Taken, and nothing holds the data dir: the server that took it stopped without answering.
        if (taken && free !== null) {
          // It may have answered and then stopped since the look above.
          const late = collectOperatorAnswer(db, requestId);
          if (late !== null) {
            free.release();
            return late;
          }
          throw new CliError(timedOut(true, free));
        }
        if (free !== null) {
          free.release();
          db.close();
          inProcess = true;
          try {
            await eraseWithoutServer(config, requestId);
          } finally {
            inProcess = false;
            connection.db = openDataDir(config.dataDir);
          }
          continue;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, kAnswerPollMs));
    }
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
}

/** Why no answer came within the wait, from what holds the data dir now. */
function timedOut(taken: boolean, free: { release(): void } | null): string {
  free?.release();
  const seconds = kOperatorErasureWaitMs / 1000;
  if (!taken) return `no server took the request within ${seconds} s, and the data dir was held all along (by a server that is stuck or busy — its log says —, a backup or another command): nothing was erased`;
  if (free !== null) return 'the server that took the request stopped before it answered; its next start answers it as interrupted. Run the command again (an account erased is answered as erased before)';
  return `the server took the request and has not answered within ${seconds} s; it goes on: run the command again later (an account erased is answered as erased before)`;
}

/**
 * No server holds the data dir: its parts start here, without HTTP, and the start does the
 * requests waiting (this one even while the start loads). When something holds it (a server, a
 * backup, another such command), nothing. A start that fails otherwise ends the process, as
 * `serve` does: its threads would keep it alive, holding the data dir.
 */
async function eraseWithoutServer(config: Config, requestId: number): Promise<void> {
  // The whole server is loaded only for this: the other commands have no use for it.
  const { DataDirInUseError, startService, StartupError } = await import('../main.js');
  let service;
  try {
    service = await startService(config, createLogger('warn'), { listen: false, operatorRequest: requestId });
  } catch (error) {
    // Taken meanwhile: whoever holds the data dir now answers.
    if (error instanceof DataDirInUseError) return;
    withdrawNow(config.dataDir, requestId);
    process.stderr.write(`fraud-scorer accounts: the server's parts could not start, nothing was erased: ${error instanceof StartupError ? error.message : ((error as Error).stack ?? String(error))}\n`);
    process.exit(1);
  }
  await service.shutdown();
}

/**
 * With no server on the data dir (the server's parts ran here, or a server stopped), the WAL may
 * still hold the id the request named, while a reader of another process (a backup) holds it: the
 * command empties it once the reader lets go, waiting as long as it waits for an answer.
 */
async function emptyWalUnlessServed(db: Db, dataDir: string): Promise<void> {
  const deadline = Date.now() + kOperatorErasureWaitMs;
  for (;;) {
    const lock = tryDataDirLock(dataDir);
    if (lock === null) return; // a server runs: it empties it (accounts/operator-erasures.ts)
    lock.release();
    try {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (result?.busy === 0) return;
    } catch {
      // busy: tried again
    }
    if (Date.now() > deadline) {
      process.stderr.write('fraud-scorer accounts: a reader held the database all along; the id given may stay in its -wal file until the next server start or command\n');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, kLockPollMs));
  }
}

/** Withdraws the request unless a server took it, and leaves the id it named in no file (best effort). */
function withdraw(db: Db, requestId: number): void {
  try {
    if (withdrawOperatorErasure(db, requestId)) db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // The database refused (busy): the server's next checkpoint copies the page over.
  }
}

/** withdraw() through a connection of its own (the command's is closed while the server's parts run here). */
function withdrawNow(dataDir: string, requestId: number): void {
  try {
    const db = openDatabase(dataDir, { mustExist: true, busyTimeoutMs: 2_000 });
    try {
      withdraw(db, requestId);
    } finally {
      db.close();
    }
  } catch {
    // As withdraw(): the request then expires unanswered by its command.
  }
}

function report(answer: OperatorErasureAnswer, accountRef: string, projectId: string, json: boolean): number {
  if (!answer.ok) {
    if (answer.code === 'NOT_FOUND') throw new CliError(`no account ${JSON.stringify(accountRef)} in project ${projectId}`);
    throw new CliError(`the erasure failed (${answer.code}): ${answer.message}`);
  }
  if (json) printJson(answer.body);
  else print(describe(answer.body));
  return 0;
}

function describe(summary: ErasureSummary): string {
  const account = summary.account_public_id ?? 'the account (its events were not scored yet: no acc_ id)';
  const counts = Object.entries(summary.erased).map(([name, count]) => `${name} ${count}`).join(', ');
  return summary.already_erased ? `${account} was erased before, at ${summary.erased_at}: ${counts}` : `erased ${account} at ${summary.erased_at}: ${counts}`;
}
