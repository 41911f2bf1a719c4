// The checkpointer thread: copies committed WAL pages into the database file, so the writer never
// has to. A checkpoint syncs the database file; run from the writer's own commits (SQLite's
// default auto-checkpoint) that sync would stall the writer every few hundred commits.
//
// A PASSIVE checkpoint never waits, but under steady reading and writing the WAL may never find a
// moment to start over, and grows without end (checkpoint starvation; better-sqlite3's
// docs/performance.md). Past walResetFrames the checkpoint is RESTART: it holds the writer back
// while it copies the last frames and syncs, so that the next commit writes the WAL from its start.
// Not TRUNCATE: that also cuts the file, which held the writer back twice as long (bench/README.md,
// step 6); the writer trims the file to journal_size_limit itself when it starts over. The reset
// size (kWalResetBytes, database.ts) is 256 MiB: a reset comes every few seconds under full load
// (step 9).
//
// What the writer waits for is kept short (step 23):
//   - A PASSIVE pass syncs the database file only when it copied the whole WAL, which under load
//     it never does: the pages copied since the last reset stayed unsynced, and the RESTART synced
//     them all (18–30 ms) while holding the write lock. They are synced first, through a descriptor
//     of our own (checkpointer.ts) and with no lock held, then a PASSIVE pass copies what came in
//     meanwhile, and the RESTART has little left to copy and sync.
//   - SQLite's busy handler sleeps 1, 2, 5, 10, 15… ms between tries. The RESTART is tried every
//     0.2 ms instead (lock-wait.ts), with a zero busy timeout (a try that finds the writer
//     mid-transaction or a reader on the WAL gives up at once), for at most kResetTryMs per reset;
//     the next tick tries again. The writer waits for the lock the same way (writer-thread.ts).
import Database from 'better-sqlite3';
import { fdatasyncSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { announceThread } from '../shared/threads.js';
import { pauseBeforeRetry } from './lock-wait.js';

announceThread('checkpointer');

const kResetTryMs = 1000;

const { path, intervalMs, walResetBytes, databaseFd } = workerData as { path: string; intervalMs: number; walResetBytes: number; databaseFd: number };
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const pageSize = db.pragma('page_size', { simple: true }) as number;
const walResetFrames = Math.max(1, Math.floor(walResetBytes / pageSize));

type CheckpointRow = { busy: number; log: number; checkpointed: number };

function checkpoint(mode: 'PASSIVE' | 'RESTART'): CheckpointRow {
  return (db.pragma(`wal_checkpoint(${mode})`) as CheckpointRow[])[0]!;
}

function startWalOver(): void {
  try {
    fdatasyncSync(databaseFd);
  } catch {
    // A platform that refuses to sync a read-only descriptor: the RESTART then syncs it all itself.
  }
  checkpoint('PASSIVE');
  const deadline = performance.now() + kResetTryMs;
  while (checkpoint('RESTART').busy !== 0 && performance.now() < deadline) pauseBeforeRetry();
}

let stopped = false;
// Paused while an erasure empties the WAL from the writer's connection (checkpointer.ts).
let paused = false;
const timer = setInterval(() => {
  if (stopped || paused) return;
  try {
    if (checkpoint('PASSIVE').log >= walResetFrames) startWalOver();
  } catch {
    // Busy or locked (another process's checkpoint): the next tick tries again.
  }
}, intervalMs);

parentPort!.on('message', (message: string) => {
  // Messages arrive between ticks, so no checkpoint of this thread is running when one is handled.
  if (message === 'pause') {
    paused = true;
    parentPort!.postMessage('paused');
    return;
  }
  if (message === 'resume') {
    paused = false;
    return;
  }
  if (message !== 'stop') return;
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage('stopped');
});
