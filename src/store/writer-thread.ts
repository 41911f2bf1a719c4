// The writer thread: owns the only writing connection and runs batches of named commands (see
// writer.ts for the rules). Started by Writer; not imported by anything else.
import { parentPort, workerData } from 'node:worker_threads';
import { kStandaloneCommands, kWriteCommands } from '../write-commands.js';
import { isBusyError, openDatabase, type Db } from './database.js';
import { pauseBeforeRetry } from './lock-wait.js';
import { transactionEnded } from './transaction-undo.js';
import { kCommitsCell, kLockWaitsCell, type CommandCall, type CommandOutcome, type WriterSetup } from './writer.js';
import { announceThread } from '../shared/threads.js';

announceThread('writer');

const setup = workerData as WriterSetup;
// SQLite's own busy handler is off (timeout 0) for transactions: a lock held for 19 ms kept the
// writer waiting 33 and one held for 34 ms 53 (lock-wait.ts). beginImmediate tries again every
// 0.2 ms instead, for as long as the busy timeout allows. Standalone commands keep the busy
// handler (runStandalone).
const db: Db = openDatabase(setup.dataDir, { busyTimeoutMs: 0, servingWriter: true });
const commands = kWriteCommands as Record<string, (db: Db, ...args: unknown[]) => unknown>;
const counters = new Int32Array(setup.counters);
// Rows this connection changed: a transaction that changed none (a fold with nothing to fold)
// commits even on a full disk, and must not be taken as the database writable again (/healthz).
const totalChanges = db.prepare('SELECT total_changes()').pluck();
parentPort!.postMessage('opened');

function failure(id: number, error: unknown): CommandOutcome {
  const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : null;
  return { id, ok: false, message: (error as Error).message ?? String(error), code };
}

/** BEGIN IMMEDIATE, waiting for another connection's write lock up to the busy timeout. */
function beginImmediate(): void {
  let deadline = 0;
  for (;;) {
    try {
      db.exec('BEGIN IMMEDIATE');
      return;
    } catch (error) {
      if (!isBusyError(error)) throw error;
      const now = performance.now();
      if (deadline === 0) {
        deadline = now + setup.busyTimeoutMs;
        Atomics.add(counters, kLockWaitsCell, 1);
      }
      if (now >= deadline) throw error;
      pauseBeforeRetry();
    }
  }
}

function execute(call: CommandCall): unknown {
  const command = commands[call.name];
  if (command === undefined) throw new Error(`unknown write command ${call.name}`);
  return command(db, ...call.args);
}

function runBatch(batch: CommandCall[]): CommandOutcome[] {
  const before = totalChanges.get() as number;
  try {
    beginImmediate();
  } catch (error) {
    return batch.map((call) => failure(call.id, error));
  }
  const values = new Array<unknown>(batch.length);
  try {
    for (let i = 0; i < batch.length; i++) values[i] = execute(batch[i]!);
  } catch {
    // Some errors (a full disk, RAISE(ROLLBACK)) have rolled the transaction back already: a
    // second ROLLBACK would throw out of this thread.
    if (db.inTransaction) db.exec('ROLLBACK');
    transactionEnded(false);
    return batch.map((call) => runAlone(call));
  }
  try {
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    transactionEnded(false);
    return batch.map((call) => failure(call.id, error));
  }
  transactionEnded(true);
  Atomics.add(counters, kCommitsCell, 1);
  const wrote = (totalChanges.get() as number) !== before;
  return batch.map((call, i) => ({ id: call.id, ok: true, value: values[i], wrote }));
}

function runAlone(call: CommandCall): CommandOutcome {
  const before = totalChanges.get() as number;
  try {
    beginImmediate();
    const value = execute(call);
    db.exec('COMMIT');
    transactionEnded(true);
    Atomics.add(counters, kCommitsCell, 1);
    return { id: call.id, ok: true, value, wrote: (totalChanges.get() as number) !== before };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    transactionEnded(false);
    return failure(call.id, error);
  }
}

/**
 * How long one standalone command (an erasure's TRUNCATE checkpoint) waits for readers: it holds
 * the write lock while it waits, so every event's write waits as long. Short, and tried again
 * (AccountsService.purgeOldPages): a backup's read of minutes must not stall every event by the
 * busy timeout per attempt.
 */
const kStandaloneWaitMs = 50;

/** Outside any transaction; its waits (a checkpoint's wait for readers) are SQLite's busy handler's, up to kStandaloneWaitMs. */
function runStandalone(call: CommandCall): CommandOutcome {
  db.pragma(`busy_timeout = ${Math.min(setup.busyTimeoutMs, kStandaloneWaitMs)}`);
  try {
    return { id: call.id, ok: true, value: execute(call), wrote: false };
  } catch (error) {
    return failure(call.id, error);
  } finally {
    transactionEnded(true);
    db.pragma('busy_timeout = 0');
  }
}

parentPort!.on('message', (message: CommandCall[] | 'close') => {
  if (message === 'close') {
    db.close();
    process.exit(0);
  }
  const standalone = message.filter((call) => kStandaloneCommands.has(call.name as never));
  const transactional = standalone.length === 0 ? message : message.filter((call) => !kStandaloneCommands.has(call.name as never));
  const outcomes = transactional.length === 0 ? [] : runBatch(transactional);
  for (const call of standalone) outcomes.push(runStandalone(call));
  parentPort!.postMessage(outcomes);
});
