// How the writer and the checkpointer wait for SQLite's write lock (bench/README.md, step 23): a
// zero busy timeout and a retry every kLockRetryMs, instead of SQLite's busy handler, which sleeps
// 1, 2, 5, 10, 15… ms between tries and so keeps the waiter long after the lock is free. Each of
// those threads does nothing else meanwhile, so blocking it is what waiting means there.

const kLockRetryMs = 0.2;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the calling thread for kLockRetryMs (never call it on the HTTP thread). */
export function pauseBeforeRetry(): void {
  Atomics.wait(sleepCell, 0, 0, kLockRetryMs);
}
