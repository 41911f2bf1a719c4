// The writer thread: owns the only writing connection and runs batches of named commands (see
// writer.ts for the rules). Started by Writer; not imported by anything else.
import { parentPort, workerData } from 'node:worker_threads';
import { kStandaloneCommands, kWriteCommands } from '../write-commands.js';
import { openDatabase, type Db } from './database.js';
import type { CommandCall, CommandOutcome, WriterSetup } from './writer.js';
import { announceThread } from '../shared/threads.js';

announceThread('writer');

const setup = workerData as WriterSetup;
const db: Db = openDatabase(setup.dataDir, { busyTimeoutMs: setup.busyTimeoutMs, servingWriter: true });
const commands = kWriteCommands as Record<string, (db: Db, ...args: unknown[]) => unknown>;

function failure(id: number, error: unknown): CommandOutcome {
  const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : null;
  return { id, ok: false, message: (error as Error).message ?? String(error), code };
}

function execute(call: CommandCall): unknown {
  const command = commands[call.name];
  if (command === undefined) throw new Error(`unknown write command ${call.name}`);
  return command(db, ...call.args);
}

function runBatch(batch: CommandCall[]): CommandOutcome[] {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    return batch.map((call) => failure(call.id, error));
  }
  const values = new Array<unknown>(batch.length);
  try {
    for (let i = 0; i < batch.length; i++) values[i] = execute(batch[i]!);
  } catch {
    db.exec('ROLLBACK');
    return batch.map((call) => runAlone(call));
  }
  try {
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    return batch.map((call) => failure(call.id, error));
  }
  return batch.map((call, i) => ({ id: call.id, ok: true, value: values[i] }));
}

function runAlone(call: CommandCall): CommandOutcome {
  try {
    return { id: call.id, ok: true, value: db.transaction(() => execute(call)).immediate() };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    return failure(call.id, error);
  }
}

function runStandalone(call: CommandCall): CommandOutcome {
  try {
    return { id: call.id, ok: true, value: execute(call) };
  } catch (error) {
    return failure(call.id, error);
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
