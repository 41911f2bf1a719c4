// Writes the rows that follow from scored events in bulk (docs/pipeline.md, "Derived rows"):
// every DERIVED_FLUSH_MS, before an erasure and at a clean stop. One batch at a time, of at most
// kMaxBatchRows rows (a backlog — a replay after a long crash window — goes in several, so that
// none holds the writer, or its message the heap, for long); a batch that fails goes back and is
// tried again at the next flush.
import type { HotAccounts } from './hot-accounts.js';
import type { Logger } from '../shared/log.js';
import type { AppWriter } from '../write-commands.js';

/** Rows per batch: a few tens of milliseconds of the writer. */
export const kMaxBatchRows = 10_000;

export class DerivedFlusher {
  readonly #accounts: HotAccounts;
  readonly #writer: AppWriter;
  readonly #log: Logger;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | null = null;
  #chain: Promise<void> = Promise.resolve();
  /** Batches written (for /metrics). */
  batches = 0;
  failures = 0;

  constructor(accounts: HotAccounts, writer: AppWriter, log: Logger, intervalMs: number) {
    this.#accounts = accounts;
    this.#writer = writer;
    this.#log = log;
    this.#intervalMs = intervalMs;
  }

  start(): void {
    this.#timer = setInterval(() => void this.flush(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Resolves once every row waiting when it was called has been written (or failed to be). */
  flush(): Promise<void> {
    this.#chain = this.#chain.then(() => this.#writeOnce());
    return this.#chain;
  }

  /** The last batch, at a clean stop (after the last event was scored). */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.flush();
  }

  /** Writes batches until none is left (or one fails). */
  async #writeOnce(): Promise<void> {
    for (;;) {
      const batch = this.#accounts.takeRows(kMaxBatchRows);
      if (batch === null) return;
      try {
        await this.#writer.call('applyDerivedRows', batch);
        this.batches++;
      } catch (error) {
        this.failures++;
        this.#accounts.restoreRows(batch);
        this.#log.warn('the rows of scored events could not be written; they are tried again with the next batch', { error });
        return;
      }
    }
  }
}
