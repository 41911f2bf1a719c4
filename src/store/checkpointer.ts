// Runs WAL checkpoints on their own thread (see checkpoint-worker.ts); the writer connection has
// auto-checkpointing turned off.
//
// The thread syncs the database file through a descriptor of its own, opened here. It is closed
// only by closeDatabaseFile, once no SQLite connection of this process is open: closing any
// descriptor of a file drops every POSIX lock this process holds on it (SQLite's included), and
// another process could then take the file for its own while ours still use it.
import { Worker } from 'node:worker_threads';
import { closeSync, openSync } from 'node:fs';
import { databasePath, kWalResetBytes } from './database.js';

const kIntervalMs = 500;

export class Checkpointer {
  readonly #worker: Worker;
  #databaseFd: number | null;
  #pauses = 0;
  #acknowledged: Promise<void> = Promise.resolve();

  constructor(dataDir: string, options: { walResetBytes?: number; intervalMs?: number } = {}) {
    const path = databasePath(dataDir);
    this.#databaseFd = openSync(path, 'r');
    this.#worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { path, intervalMs: options.intervalMs ?? kIntervalMs, walResetBytes: options.walResetBytes ?? kWalResetBytes, databaseFd: this.#databaseFd },
    });
    this.#worker.unref();
  }

  /**
   * Runs `fn` while this thread makes no checkpoint: a checkpoint of another connection (an
   * erasure's TRUNCATE on the writer) would otherwise find the checkpoint lock taken. Nests.
   */
  async whilePaused<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#pauses++ === 0) this.#acknowledged = this.#request('pause');
    try {
      await this.#acknowledged;
      return await fn();
    } finally {
      if (--this.#pauses === 0) this.#worker.postMessage('resume');
    }
  }

  /** Sends `message` and resolves on the thread's answer (it answers between checkpoints). */
  #request(message: 'pause' | 'stop'): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.#worker.off('message', done);
        this.#worker.off('exit', done);
        resolve();
      };
      this.#worker.on('message', done);
      this.#worker.on('exit', done);
      this.#worker.postMessage(message);
    });
  }

  stop(): Promise<void> {
    return this.#request('stop');
  }

  /** After stop, and once every SQLite connection of this process to the database is closed. */
  closeDatabaseFile(): void {
    if (this.#databaseFd === null) return;
    closeSync(this.#databaseFd);
    this.#databaseFd = null;
  }
}
