// One backtest, start to end, on the connection it is given (the backtest thread's read-only one):
// every event of the project that arrived in the range and was scored when the backtest started,
// in arrival order, up to the limit, judged again by the candidate and compared with what was
// stored (docs/backtests.md). Synchronous: it runs on a thread of its own (backtest-worker.ts).
//
// "When the backtest started" is one moment, the snapshot taken before the first chunk is read
// (event-range.ts snapshotRange): the events it includes, and the lists in_list() reads, are
// those of that moment, however long the chunks then take.
import { loadRuleset } from '../../compiler/load.js';
import type { Decision, Thresholds } from '../scoring/score-result.js';
import { decide } from '../scoring/score-result.js';
import type { Db } from '../store/database.js';
import { BacktestTally, type CandidateRule } from './backtest-report.js';
import { EventChunks, snapshotRange } from './event-range.js';
import { labelsOf } from './labels.js';
import { replayInput, type SignalGroups } from './replay.js';
import { readStoredOutcome, StoredVersions } from './stored-outcomes.js';
import { payloadText } from '../scoring/stored-payload.js';
import { ListsClock } from '../lists/lists-clock.js';
import { userCountry, WorkerLists } from '../lists/worker-lists.js';

/** Events read per statement: large enough to amortise the query, small enough to keep each read short. */
export const kBacktestChunk = 2_000;

export interface BacktestCandidate {
  /** The compiled ruleset's source (a published version's, or the drafts compiled for this run). */
  readonly source: string;
  readonly reads: SignalGroups;
  readonly rules: readonly CandidateRule[];
  readonly policy: Thresholds;
}

export interface BacktestJob {
  readonly backtestId: string;
  readonly projectId: string;
  /** Epoch ms: events that arrived from `from` (inclusive) to `to` (exclusive). */
  readonly from: number;
  readonly to: number;
  readonly limit: number;
  readonly candidate: BacktestCandidate;
}

/**
 * Shared with the thread that started the run: [0] cancel (1 = stop), [1] events scanned, [2]
 * progress in millionths, [3] pace: the share of time the run may work, in thousandths (1000 = all
 * of it; the rest it waits between chunks; backtest-runner.ts sets it from live load), [4] go: 1
 * once the run may read past its snapshot (set before the thread starts unless a test holds it).
 */
export type ProgressCells = Int32Array;
export const kCancel = 0;
export const kScanned = 1;
export const kProgress = 2;
export const kPace = 3;
export const kGo = 4;
export const kCells = 5;

export class BacktestCancelled extends Error {}

/** Waits until the thread that started the run lets it go on (kGo), or stops it. */
export function waitToGo(cells: ProgressCells): void {
  while (Atomics.load(cells, kGo) === 0) {
    if (Atomics.load(cells, kCancel) !== 0) throw new BacktestCancelled('cancelled');
    Atomics.wait(cells, kGo, 0, 50);
  }
}

/** What runBacktest needs from outside the store. */
export interface BacktestHooks {
  /** The clock: read once, at the snapshot (the moment in_list() judges expiry at). */
  readonly now: () => number;
  /**
   * Called once the snapshot is taken, before the first chunk is read. The backtest thread waits
   * there while a test holds it (backtest-worker.ts, FAULT_INJECTION=hold_points).
   */
  readonly snapshotTaken: () => void;
}

const kNoHooks: BacktestHooks = { now: Date.now, snapshotTaken: () => undefined };

/**
 * Between chunks: stops when asked to, and keeps to the pace — after `workedMs` of work at pace p
 * (thousandths), waits workedMs × (1000 / p − 1). Waiting on the cancel cell, so a stop ends the
 * wait at once.
 */
function pause(cells: ProgressCells, workedMs: number): void {
  const pace = Atomics.load(cells, kPace);
  if (pace > 0 && pace < 1000) Atomics.wait(cells, kCancel, 0, workedMs * (1000 / pace - 1));
  if (Atomics.load(cells, kCancel) !== 0) throw new BacktestCancelled('cancelled');
}

interface EventRow {
  seq: number;
  event_id: string;
  state: string;
  payload: string;
  scored_at: number | null;
  scored_order: number | null;
  ruleset_version: number | null;
  decision: Decision | null;
  risk_score: number | null;
  result: string | null;
  shadow: string | null;
  signals: string | null;
}

const kColumns = 'event_id, state, payload, scored_at, scored_order, ruleset_version, decision, risk_score, result, shadow, signals';

export function runBacktest(db: Db, job: BacktestJob, progress: ProgressCells, hooks: BacktestHooks = kNoHooks): Record<string, unknown> {
  const started = performance.now();
  const evaluate = loadRuleset(job.candidate.source);
  const versions = new StoredVersions(db);
  const { range, scoredThrough } = snapshotRange(db, job.from, job.to);
  const snapshotAt = hooks.now();
  hooks.snapshotTaken();
  const labels = labelsOf(db, job.projectId, range, job.from, job.to);
  const tally = new BacktestTally(job.candidate.rules, labels !== null);
  const chunks = new EventChunks<EventRow>(db, kColumns, job.projectId, job.from, job.to, range, kBacktestChunk);
  const { reads, policy } = job.candidate;
  // in_list() reads the project's lists as they are when the backtest starts (docs/backtests.md),
  // through the reader the rule workers use; its clock never moves, so each list is read once, when
  // first used. Expiry is judged at the snapshot too, not at each event's time: an item past its
  // expires_at is off the list (the sweep deletes it within a minute), and judging it at the event's
  // time would make the answer depend on whether the sweep had run yet.
  const lists = new WorkerLists(db, new ListsClock());
  let chunkStarted = performance.now();
  scan: for (let rows = chunks.next(); rows.length > 0; rows = chunks.next()) {
    pause(progress, performance.now() - chunkStarted);
    chunkStarted = performance.now();
    for (const row of rows) {
      // Not scored at the snapshot: still pending (async), or scored since; an event erased while
      // pending was never scored.
      const pendingAtSnapshot = row.state === 'pending' || (row.state === 'scored' && row.scored_order !== null && row.scored_order > scoredThrough);
      // Past the limit, only whether a scored event is left to say so (truncated): the pending
      // events there were not among those looked at.
      if (tally.scanned === job.limit) {
        if (row.state === 'scored' && !pendingAtSnapshot) {
          tally.truncated = true;
          break scan;
        }
        continue;
      }
      if (pendingAtSnapshot) {
        tally.pending++;
        continue;
      }
      if (row.state !== 'scored') continue;
      tally.scanned++;
      try {
        judge(row);
      } catch (error) {
        // A row that cannot be read is damage, not a finding: the backtest fails and says where.
        throw new Error(`event ${row.event_id} (seq ${row.seq}) cannot be judged again: ${(error as Error).message}`);
      }
    }
    Atomics.store(progress, kScanned, tally.scanned);
    Atomics.store(progress, kProgress, Math.floor(chunks.fraction * 1_000_000));
  }
  Atomics.store(progress, kProgress, 1_000_000);
  return { ...tally.report(), duration_ms: Math.round(performance.now() - started) };

  function judge(row: EventRow): void {
    const replay = replayInput(payloadText(row.payload), row.signals, row.scored_at!, reads);
    if (!replay.ok) {
      tally.notReplayable(replay.reason, replay.reason === 'signals_not_recorded' ? replay.groups : []);
      return;
    }
    const listView = lists.forEvent(job.projectId, snapshotAt, userCountry(replay.input.event));
    const outcome = evaluate({ ...replay.input, lists: listView });
    // As the rule workers do: no verdict from rules that could not read a list.
    if (listView.failure !== null) throw new Error(`lists could not be read: ${listView.failure}`);
    if (outcome.over_budget) {
      tally.overBudget++;
      return;
    }
    const judged = decide(outcome, policy);
    const stored = readStoredOutcome(versions.get(job.projectId, row.ruleset_version!), row.result!, row.shadow);
    tally.replayed({
      eventId: row.event_id,
      label: labels?.get(row.event_id),
      storedDecision: row.decision!,
      storedScore: row.risk_score!,
      stored,
      candidateDecision: judged.decision,
      candidateScore: judged.risk_score,
      candidate: outcome,
    });
  }
}
