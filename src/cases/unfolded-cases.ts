// The events that joined open cases and are not on the cases' rows yet (the writer folds them in
// bulk: foldCaseEvents in scoring/event-store.ts), as the HTTP thread learns of them from each
// commit (Scorer) and forgets them once folded (DerivedFlusher, CasesService.change): GET
// /v1/cases reads a case's row with these on top, so a case lists an event as soon as it is
// committed. Pure.
import type { FoldedCase } from '../scoring/event-store.js';
import { TransientMap } from '../state/transient-map.js';

export interface UnfoldedCase {
  /** The highest score and latest time of these events (the row keeps the maxima). */
  riskScore: number;
  updatedAt: number;
  readonly seqs: number[];
}

export class UnfoldedCases {
  /** An entry lives a few seconds, one per case extended meanwhile: a TransientMap (src/state/transient-map.ts says why). */
  readonly #cases = new TransientMap<string, UnfoldedCase>();

  /** Cases with events waiting (for /metrics). */
  get size(): number {
    return this.#cases.size;
  }

  /** The event at row `seq`, scored `riskScore` at `at`, joined the open case (committed). */
  added(caseId: string, riskScore: number, at: number, seq: number): void {
    const waiting = this.#cases.get(caseId);
    if (waiting === undefined) this.#cases.set(caseId, { riskScore, updatedAt: at, seqs: [seq] });
    else {
      waiting.riskScore = Math.max(waiting.riskScore, riskScore);
      waiting.updatedAt = Math.max(waiting.updatedAt, at);
      waiting.seqs.push(seq);
    }
  }

  /** The writer folded these (committed): their rows list them now. */
  folded(cases: readonly FoldedCase[]): void {
    for (const [caseId, seqs] of cases) {
      const waiting = this.#cases.get(caseId);
      if (waiting === undefined) continue;
      const done = new Set(seqs);
      const left = waiting.seqs.filter((seq) => !done.has(seq));
      if (left.length === 0) this.#cases.delete(caseId);
      else waiting.seqs.splice(0, waiting.seqs.length, ...left);
    }
  }

  /** Every event of the case known here was folded in (by a change to the case, committed). */
  forget(caseId: string): void {
    this.#cases.delete(caseId);
  }

  get(caseId: string): UnfoldedCase | undefined {
    return this.#cases.get(caseId);
  }
}
