// Runs WAL checkpoints on their own thread (see checkpoint-worker.ts); the writer connection has
// auto-checkpointing turned off.
import { Worker } from 'node:worker_threads';
import { databasePath } from './database.js';

const kIntervalMs = 500;
/** WAL size past which the checkpointer empties the WAL (see checkpoint-worker.ts). */
const kWalResetBytes = 64 * 1024 * 1024;

export class Checkpointer {
  readonly #worker: Worker;

  constructor(dataDir: string) {
    this.#worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { path: databasePath(dataDir), intervalMs: kIntervalMs, walResetBytes: kWalResetBytes },
    });
    this.#worker.unref();
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#worker.once('message', () => resolve());
      this.#worker.once('exit', () => resolve());
      this.#worker.postMessage('stop');
    });
  }
}
