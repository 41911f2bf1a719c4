// The backtest thread: started for one backtest by backtest-runner.ts, reads through a read-only
// connection of its own at the lowest priority (background-priority.ts), posts the report or the
// failure as a value, and exits.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { databasePath } from '../store/database.js';
import { announceThread } from '../shared/threads.js';
import { lowerThreadPriority } from './background-priority.js';
import { BacktestCancelled, runBacktest, type BacktestJob } from './backtest-run.js';

export interface BacktestThreadSetup {
  readonly dataDir: string;
  readonly job: BacktestJob;
  readonly progress: SharedArrayBuffer;
}

export type BacktestThreadMessage =
  | { readonly ok: true; readonly report: Record<string, unknown> }
  | { readonly ok: false; readonly cancelled: boolean; readonly message: string };

announceThread('backtest');
lowerThreadPriority();

const setup = workerData as BacktestThreadSetup;
let message: BacktestThreadMessage;
const db = new Database(databasePath(setup.dataDir), { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 5000');
  message = { ok: true, report: runBacktest(db, setup.job, new Int32Array(setup.progress)) };
} catch (error) {
  message = { ok: false, cancelled: error instanceof BacktestCancelled, message: (error as Error).message };
} finally {
  db.close();
}
parentPort!.postMessage(message);
