// The backtest thread: started for one backtest by backtest-runner.ts, reads through a read-only
// connection of its own at the lowest priority (background-priority.ts), posts the report or the
// failure as a value, and exits.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { databasePath } from '../store/database.js';
import { announceThread } from '../shared/threads.js';
import { lowerThreadPriority } from './background-priority.js';
import { BacktestCancelled, runBacktest, waitToGo, type BacktestJob } from './backtest-run.js';

export interface BacktestThreadSetup {
  readonly dataDir: string;
  readonly job: BacktestJob;
  readonly progress: SharedArrayBuffer;
  /**
   * Tests only (FAULT_INJECTION=hold_points): say when the snapshot is taken and wait for the go
   * (kGo) before reading on, so that a test holds a backtest that has fixed its events and lists.
   */
  readonly holdAfterSnapshot: boolean;
}

export type BacktestThreadMessage =
  | { readonly ok: true; readonly report: Record<string, unknown> }
  | { readonly ok: false; readonly cancelled: boolean; readonly message: string }
  /** The snapshot is taken (holdAfterSnapshot only); the thread waits for kGo. */
  | { readonly snapshot: true };

announceThread('backtest');
lowerThreadPriority();

const setup = workerData as BacktestThreadSetup;
let message: BacktestThreadMessage;
const db = new Database(databasePath(setup.dataDir), { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 5000');
  const cells = new Int32Array(setup.progress);
  const snapshotTaken = (): void => {
    if (!setup.holdAfterSnapshot) return;
    parentPort!.postMessage({ snapshot: true } satisfies BacktestThreadMessage);
    waitToGo(cells);
  };
  message = { ok: true, report: runBacktest(db, setup.job, cells, { now: Date.now, snapshotTaken }) };
} catch (error) {
  message = { ok: false, cancelled: error instanceof BacktestCancelled, message: (error as Error).message };
} finally {
  db.close();
}
parentPort!.postMessage(message);
