// Runs WAL checkpoints on their own thread (see checkpoint-worker.ts); the writer connection has
// auto-checkpointing turned off.
import { Worker } from 'node:worker_threads';
import { databasePath } from './database.js';

const kIntervalMs = 500;
/** WAL size past which the checkpointer starts the WAL over (see checkpoint-worker.ts); database.ts keeps the file at most this large. */
const kWalResetBytes = 256 * 1024 * 1024;

export class Checkpointer {
  readonly #worker: Worker;
  #pauses = 0;
  #acknowledged: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.#worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { path: databasePath(dataDir), intervalMs: kIntervalMs, walResetBytes: kWalResetBytes },
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
}
