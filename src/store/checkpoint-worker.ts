// The checkpointer thread: copies committed WAL pages into the database file, so the writer never
// has to. A checkpoint syncs the database file; run from the writer's own commits (SQLite's
// default auto-checkpoint) that sync would stall the writer every few hundred commits.
//
// A PASSIVE checkpoint never waits, but under steady reading and writing the WAL may never find a
// moment to start over, and grows without end (checkpoint starvation; better-sqlite3's
// docs/performance.md). Past kWalResetFrames the checkpoint is RESTART: it waits (briefly: most
// pages are already copied) for readers to move on and holds the writer back while it copies the
// last frames and syncs, so that the next commit writes the WAL from its start. Not TRUNCATE: that
// also cuts the file, which held the writer back twice as long (134 against 64 ms per reset at
// 64 MiB, and a second at 1 GiB; bench/README.md, step 6); the writer trims the file to
// journal_size_limit itself when it starts over. The reset size (checkpointer.ts) is 256 MiB: a
// reset holds the writer for about as long as at 64 MiB, and coming four times less often it
// leaves the p99 at half capacity (bench/README.md, step 9).
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { announceThread } from '../shared/threads.js';

announceThread('checkpointer');

const { path, intervalMs, walResetBytes } = workerData as { path: string; intervalMs: number; walResetBytes: number };
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const pageSize = db.pragma('page_size', { simple: true }) as number;
const walResetFrames = Math.max(1, Math.floor(walResetBytes / pageSize));

let stopped = false;
// Paused while an erasure empties the WAL from the writer's connection (checkpointer.ts).
let paused = false;
const timer = setInterval(() => {
  if (stopped || paused) return;
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    if (passive !== undefined && passive.log >= walResetFrames) db.pragma('wal_checkpoint(RESTART)');
  } catch {
    // Busy or locked: the next tick tries again.
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
