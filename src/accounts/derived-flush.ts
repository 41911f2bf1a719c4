// Writes the rows that follow from scored events in bulk (docs/pipeline.md, "Derived rows"):
// every DERIVED_FLUSH_MS, before an erasure and at a clean stop. A flush takes every row waiting
// and writes it in parts of at most kPartRows, one writer command each: events committed behind a
// part wait for it, so parts stay small enough to cost a few milliseconds (the rows of 250 ms in
// one transaction showed in the p99 at half capacity; bench/README.md, step 9). The rows of a
// replay, before the server listens, go in larger parts. A part that fails goes back, with the
// parts after it, and is tried again at the next flush. Then new cases, and the events that joined
// open cases once the first of them has waited CASE_EVENTS_WAIT_MS, are written into the cases'
// rows, kFoldCases cases per writer command.
import { BatchParts, mergeBatches } from './derived-rows.js';
import type { HotAccounts } from './hot-accounts.js';
import type { UnfoldedCases } from '../cases/unfolded-cases.js';
import { kFoldCases } from '../scoring/event-store.js';
import type { Logger } from '../shared/log.js';
import type { AppWriter } from '../write-commands.js';

/** Rows per part while serving. */
export const kPartRows = 250;
/** Rows per part before the server listens (the rows of a replay). */
export const kBacklogPartRows = 10_000;

export class DerivedFlusher {
  readonly #accounts: HotAccounts;
  readonly #cases: UnfoldedCases;
  readonly #writer: AppWriter;
  readonly #log: Logger;
  readonly #intervalMs: number;
  /** How long the events that join a case whose row exists wait before they are written into it. */
  readonly #caseEventsWaitMs: number;
  /** Tests only (FAULT_INJECTION=derived_rows_fail): every part fails as a failed transaction would. */
  readonly #failWrites: boolean;
  /** Tests only (FAULT_INJECTION=case_folds_fail): every write of cases fails so. */
  readonly #failFolds: boolean;
  #timer: NodeJS.Timeout | null = null;
  #chain: Promise<void> = Promise.resolve();
  /** Parts written (for /metrics). */
  batches = 0;
  /** Writes of new cases and of events into their open cases (for /metrics). */
  caseFolds = 0;
  failures = 0;

  constructor(
    accounts: HotAccounts, cases: UnfoldedCases, writer: AppWriter, log: Logger, intervals: { flushMs: number; caseEventsWaitMs: number },
    faults: { failWrites: boolean; failFolds: boolean } = { failWrites: false, failFolds: false },
  ) {
    this.#accounts = accounts;
    this.#cases = cases;
    this.#writer = writer;
    this.#log = log;
    this.#intervalMs = intervals.flushMs;
    this.#caseEventsWaitMs = intervals.caseEventsWaitMs;
    this.#failWrites = faults.failWrites;
    this.#failFolds = faults.failFolds;
  }

  start(): void {
    this.#timer = setInterval(() => void this.flush(), this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * Resolves once every row waiting when it was called has been written (or failed to be), and the
   * cases due written (all of them if `allCases`).
   */
  flush(partRows = kPartRows, allCases = false): Promise<void> {
    this.#chain = this.#chain.then(() => this.#writeAll(partRows)).then(() => this.#foldCases(allCases));
    return this.#chain;
  }

  /** The last batch, at a clean stop (after the last event was scored). */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.flush(kPartRows, true);
  }

  /**
   * New cases, and case events that have waited long enough, written into the cases' rows (all of
   * them if `all`); those the fold could not write wait for the next flush.
   */
  async #foldCases(all: boolean): Promise<void> {
    try {
      for (;;) {
        if (this.#failFolds) throw new Error('case_folds_fail (fault injection)');
        const folds = await this.#writer.call('foldCaseEvents', { limit: kFoldCases, waitedMs: all ? 0 : this.#caseEventsWaitMs });
        this.#cases.folded(folds.folded);
        if (folds.folded.length > 0) this.caseFolds++;
        if (folds.failed.length > 0) {
          this.failures++;
          this.#log.warn('cases could not be written; they are tried again with the next batch', { cases: folds.failed.map(([caseId, message]) => ({ case_id: caseId, error: message })) });
          // Only those that failed were due: the next flush tries them again.
          if (folds.folded.length === 0) return;
        }
        if (!folds.due) return;
      }
    } catch (error) {
      this.failures++;
      this.#log.warn('cases and the events of open cases could not be written; they are tried again with the next batch', { error });
    }
  }

  /**
   * Takes every row waiting and writes it in parts of at most `partRows` (one transaction each;
   * only the last moves the stamp). Rows recorded meanwhile wait for the next flush, so that the
   * stamp moves however busy the server is. A part that fails goes back with those after it.
   */
  async #writeAll(partRows: number): Promise<void> {
    const taken = this.#accounts.takeRows();
    if (taken === null) return;
    // Sorted a chunk per turn of the event loop: the HTTP thread serves events in between.
    const parts = new BatchParts(taken.batch, partRows, taken.stampedBefore);
    while (parts.sortStep()) await new Promise<void>((resolve) => setImmediate(resolve));
    for (let part = parts.nextPart(); part !== null; part = parts.nextPart()) {
      try {
        if (this.#failWrites) throw new Error('derived_rows_fail (fault injection)');
        await this.#writer.call('applyDerivedRows', part);
        this.batches++;
      } catch (error) {
        this.failures++;
        this.#accounts.restoreRows(mergeBatches([part, ...parts.rest()]));
        this.#log.warn('the rows of scored events could not be written; they are tried again with the next batch', { error });
        return;
      }
    }
  }
}
