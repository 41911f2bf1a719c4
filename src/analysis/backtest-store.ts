// Backtest records in SQLite (schema: migrations/011-backtests.ts). Writes are commands of the
// writer thread (write-commands.ts); reads run on the read-only connection.
//
// Retention: a project keeps its backtests for kBacktestRetentionDays after they finished, and at
// most its kBacktestRetentionCount most recent; older ones are deleted when the project starts a
// new one (reports are a few kilobytes to a few hundred, with up to 1,000 rules). Nothing else in
// the store points at a backtest.
import type { Db } from '../store/database.js';

export const kBacktestRetentionDays = 30;
export const kBacktestRetentionCount = 100;
const kDayMs = 86_400_000;

export type BacktestState = 'queued' | 'running' | 'done' | 'failed';

/** What a backtest tested: a published version, or the drafts of the moment it was asked for. */
export type CandidateRecord =
  | { readonly version: number }
  | { readonly version: null; readonly drafts: { readonly rules: Record<string, number>; readonly policy_version: number } };

export interface BacktestRecord {
  readonly backtest_id: string;
  readonly project_id: string;
  readonly state: BacktestState;
  readonly candidate: CandidateRecord;
  readonly policy: { readonly review_threshold: number; readonly block_threshold: number };
  readonly from: number;
  readonly to: number;
  readonly limit: number;
  readonly requested_by: string;
  readonly created_at: number;
  readonly started_at: number | null;
  readonly finished_at: number | null;
  /** The report (JSON text) once done. */
  readonly report: string | null;
  readonly error: string | null;
}

interface BacktestRow {
  backtest_id: string;
  project_id: string;
  state: BacktestState;
  candidate: string;
  policy: string;
  range_from: number;
  range_to: number;
  event_limit: number;
  requested_by: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  report: string | null;
  error: string | null;
}

export interface NewBacktest {
  readonly backtestId: string;
  readonly projectId: string;
  readonly candidate: CandidateRecord;
  readonly policy: { readonly review_threshold: number; readonly block_threshold: number };
  readonly from: number;
  readonly to: number;
  readonly limit: number;
  readonly requestedBy: string;
}

/** Write command: records a new backtest, queued, and prunes the project's old ones (see above). */
export function createBacktest(db: Db, backtest: NewBacktest, now: number): void {
  db.prepare(
    `DELETE FROM backtests WHERE project_id = ? AND state IN ('done', 'failed') AND (finished_at < ? OR backtest_id IN (
       SELECT backtest_id FROM backtests WHERE project_id = ? ORDER BY created_at DESC, backtest_id DESC LIMIT -1 OFFSET ?))`,
  ).run(backtest.projectId, now - kBacktestRetentionDays * kDayMs, backtest.projectId, kBacktestRetentionCount - 1);
  db.prepare(
    `INSERT INTO backtests (backtest_id, project_id, state, candidate, policy, range_from, range_to, event_limit, requested_by, created_at)
     VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    backtest.backtestId, backtest.projectId, JSON.stringify(backtest.candidate), JSON.stringify(backtest.policy),
    backtest.from, backtest.to, backtest.limit, backtest.requestedBy, now,
  );
}

/** Write command: the backtest thread started on it. */
export function startBacktest(db: Db, backtestId: string, now: number): void {
  db.prepare(`UPDATE backtests SET state = 'running', started_at = ? WHERE backtest_id = ? AND state = 'queued'`).run(now, backtestId);
}

/** Write command: its report. */
export function finishBacktest(db: Db, backtestId: string, report: string, now: number): void {
  db.prepare(`UPDATE backtests SET state = 'done', report = ?, finished_at = ? WHERE backtest_id = ? AND state IN ('queued', 'running')`).run(report, now, backtestId);
}

/** Write command: why it failed. */
export function failBacktest(db: Db, backtestId: string, error: string, now: number): void {
  db.prepare(`UPDATE backtests SET state = 'failed', error = ?, finished_at = ? WHERE backtest_id = ? AND state IN ('queued', 'running')`).run(error, now, backtestId);
}

/**
 * Write command, at start: backtests a previous run of the server left queued or running (it
 * stopped or crashed meanwhile) can never finish. Returns how many were marked failed.
 */
export function failUnfinishedBacktests(db: Db, now: number): number {
  return db.prepare(
    `UPDATE backtests SET state = 'failed', error = 'The server stopped before the backtest finished; start it again.', finished_at = ?
     WHERE state IN ('queued', 'running')`,
  ).run(now).changes;
}

export function readBacktest(db: Db, projectId: string, backtestId: string): BacktestRecord | null {
  const row = db.prepare('SELECT * FROM backtests WHERE project_id = ? AND backtest_id = ?').get(projectId, backtestId) as BacktestRow | undefined;
  if (row === undefined) return null;
  return {
    backtest_id: row.backtest_id,
    project_id: row.project_id,
    state: row.state,
    candidate: JSON.parse(row.candidate) as CandidateRecord,
    policy: JSON.parse(row.policy) as BacktestRecord['policy'],
    from: row.range_from,
    to: row.range_to,
    limit: row.event_limit,
    requested_by: row.requested_by,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    report: row.report,
    error: row.error,
  };
}

/** The compiled source of a published version. */
export function readRulesetSource(db: Db, projectId: string, version: number): string | null {
  const row = db.prepare('SELECT source FROM rulesets WHERE project_id = ? AND version = ?').get(projectId, version) as { source: string } | undefined;
  return row?.source ?? null;
}
