// The cases opened and the events that joined open cases, not on the cases' rows yet (the writer
// folds them in bulk: foldCaseEvents in scoring/event-store.ts), as the HTTP thread learns of them
// from each commit (Scorer) and forgets them once written (DerivedFlusher, CasesService.change,
// AccountsService.erase): GET /v1/cases reads the rows with these on top, so a case and its
// events are there as soon as they are committed. Pure.
import type { FoldedCase, WaitingCase } from '../scoring/event-store.js';
import { TransientMap } from '../state/transient-map.js';

/** A case whose row is not written yet: what it opened with. */
export interface OpenedCase {
  readonly projectId: string;
  readonly accountId: string | null;
  readonly externalAccountId: string | null;
  readonly createdAt: number;
}

export interface UnfoldedCase {
  /** The highest score and latest time of these events (the row keeps the maxima). */
  riskScore: number;
  updatedAt: number;
  readonly seqs: number[];
  /** Not null while the case's row is not written. */
  opened: OpenedCase | null;
}

export class UnfoldedCases {
  /** An entry lives a flush (a new case) or up to CASE_EVENTS_WAIT_MS and a flush (events that joined a written case): a TransientMap (src/state/transient-map.ts says why). */
  readonly #cases = new TransientMap<string, UnfoldedCase>();
  /** Ids of the cases not written yet (for listing), in the order they opened. */
  readonly #opened = new Set<string>();

  /** Cases with something waiting (for /metrics). */
  get size(): number {
    return this.#cases.size;
  }

  /** The event at row `seq`, scored `riskScore` at `at`, opened the case (committed). */
  opened(caseId: string, opened: OpenedCase, riskScore: number, seq: number): void {
    this.#cases.set(caseId, { riskScore, updatedAt: opened.createdAt, seqs: [seq], opened });
    this.#opened.add(caseId);
  }

  /** The event at row `seq`, scored `riskScore` at `at`, joined the open case (committed). */
  added(caseId: string, riskScore: number, at: number, seq: number): void {
    const waiting = this.#cases.get(caseId);
    if (waiting === undefined) this.#cases.set(caseId, { riskScore, updatedAt: at, seqs: [seq], opened: null });
    else {
      waiting.riskScore = Math.max(waiting.riskScore, riskScore);
      waiting.updatedAt = Math.max(waiting.updatedAt, at);
      waiting.seqs.push(seq);
    }
  }

  /**
   * At a start whose bulk write of cases failed: the cases the writer holds (waitingCases), oldest
   * first, as if their events had just been committed. `externalIdOf` gives an account's external id.
   */
  restore(waiting: readonly WaitingCase[], externalIdOf: (accountId: string) => string | null): void {
    const oldestFirst = [...waiting].sort((a, b) => (a[1]?.createdAt ?? a[3]) - (b[1]?.createdAt ?? b[3]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [caseId, opened, riskScore, updatedAt, seqs] of oldestFirst) {
      if (seqs.length === 0) continue;
      if (opened === null) this.#cases.set(caseId, { riskScore, updatedAt, seqs: [...seqs], opened: null });
      else {
        const externalAccountId = opened.accountId === null ? null : externalIdOf(opened.accountId);
        this.#cases.set(caseId, { riskScore, updatedAt, seqs: [...seqs], opened: { ...opened, externalAccountId } });
        this.#opened.add(caseId);
      }
    }
  }

  /** The writer folded these (committed): their rows exist and list these events. */
  folded(cases: readonly FoldedCase[]): void {
    for (const [caseId, seqs] of cases) {
      const waiting = this.#cases.get(caseId);
      if (waiting === undefined) continue;
      waiting.opened = null;
      this.#opened.delete(caseId);
      const done = new Set(seqs);
      const left = waiting.seqs.filter((seq) => !done.has(seq));
      if (left.length === 0) this.#cases.delete(caseId);
      else waiting.seqs.splice(0, waiting.seqs.length, ...left);
    }
  }

  /** The case's row was written with every event of it known here (by a change to the case or an erasure, committed). */
  forget(caseId: string): void {
    this.#cases.delete(caseId);
    this.#opened.delete(caseId);
  }

  get(caseId: string): UnfoldedCase | undefined {
    return this.#cases.get(caseId);
  }

  /**
   * The cases whose waiting events pass `test` (a time or a score above a bound): their row's
   * updated_at and risk_score may not, since the case's are the maxima of both (GET /v1/cases).
   */
  *idsWhere(test: (waiting: UnfoldedCase) => boolean): IterableIterator<string> {
    for (const [caseId, waiting] of this.#cases.entries()) if (test(waiting)) yield caseId;
  }

  /** The cases not written yet, with what they opened with. */
  *openedCases(): IterableIterator<[string, UnfoldedCase & { opened: OpenedCase }]> {
    for (const caseId of this.#opened) yield [caseId, this.#cases.get(caseId) as UnfoldedCase & { opened: OpenedCase }];
  }
}
