// The checkpointer thread: copies committed WAL pages into the database file, so the writer never
// has to. A checkpoint syncs the database file; run from the writer's own commits (SQLite's
// default auto-checkpoint) that sync would stall the HTTP thread every few hundred commits.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');

let stopped = false;
const timer = setInterval(() => {
  if (stopped) return;
  try {
    // PASSIVE never waits for the writer or readers: it copies what it can now.
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked: the next tick tries again.
  }
}, intervalMs);

parentPort!.on('message', (message: string) => {
  if (message !== 'stop') return;
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage('stopped');
});
