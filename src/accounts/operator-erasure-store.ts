// The rows of operator_erasures (migration 29): the command line's requests to erase an account,
// and the server's answers. Pure SQL over a connection; the command line writes a request and
// reads its answer, the server (accounts/operator-erasures.ts) takes requests and answers them
// through its writer.
import type { Db } from '../store/database.js';
import type { ErasureSummary } from './accounts-service.js';

/** What the server answered: the DELETE's summary, or the refusal with the API's code. */
export type OperatorErasureAnswer =
  | { readonly ok: true; readonly body: ErasureSummary }
  | { readonly ok: false; readonly code: string; readonly message: string };

export interface OpenOperatorErasure {
  readonly requestId: number;
  readonly projectId: string;
  readonly requestedAt: number;
  readonly aliveAt: number;
  /** Taken by a server that stopped before it answered: the id given is no longer stored. */
  readonly taken: boolean;
}

/** Answered requests nobody collected (the command gave up waiting) are kept this long. */
const kAnsweredKeptMs = 24 * 3600 * 1000;

/**
 * How long the command waits for its answer; a request not taken by then is done by no one (the
 * server answers it EXPIRED): a command that was killed leaves no erasure for a later start.
 */
export const kOperatorErasureWaitMs = 120_000;
/** The waiting command says it still waits this often; a server takes a request only while it does. */
export const kOperatorAliveIntervalMs = 1_000;
/** A request whose command has not said so for this long is not taken (it may be busy: it is not expired either). */
export const kOperatorAliveMs = 10_000;

/** The command line's request; returns its id. */
export function requestOperatorErasure(db: Db, projectId: string, accountRef: string, now: number): number {
  return Number(db.prepare('INSERT INTO operator_erasures (project_id, account_ref, requested_at, alive_at) VALUES (?, ?, ?, ?)').run(projectId, accountRef, now, now).lastInsertRowid);
}

/** The command line: it still waits for the answer. */
export function stillWaiting(db: Db, requestId: number, now: number): void {
  db.prepare('UPDATE operator_erasures SET alive_at = ? WHERE request_id = ? AND taken_at IS NULL').run(now, requestId);
}

/** The requests not yet answered, oldest first. */
export function openOperatorErasures(db: Db): OpenOperatorErasure[] {
  const rows = db.prepare('SELECT request_id, project_id, requested_at, alive_at, taken_at FROM operator_erasures WHERE answered_at IS NULL ORDER BY request_id').all() as Array<{ request_id: number; project_id: string; requested_at: number; alive_at: number; taken_at: number | null }>;
  return rows.map((row) => ({ requestId: row.request_id, projectId: row.project_id, requestedAt: row.requested_at, aliveAt: row.alive_at, taken: row.taken_at !== null }));
}

/**
 * Writer command: the server takes a request, and the id it names leaves the row in the same
 * transaction — before the erasure's checkpoint empties the WAL, so that no file keeps it.
 * null: already taken (or gone).
 */
export function takeOperatorErasure(db: Db, request: { readonly requestId: number; readonly now: number }): string | null {
  const row = db.prepare('SELECT account_ref FROM operator_erasures WHERE request_id = ? AND taken_at IS NULL').get(request.requestId) as { account_ref: string | null } | undefined;
  if (row === undefined || row.account_ref === null) return null;
  db.prepare('UPDATE operator_erasures SET account_ref = NULL, taken_at = ? WHERE request_id = ?').run(request.now, request.requestId);
  return row.account_ref;
}

/** Writer command: the server's answer; answers nobody collected for a day go. */
export function answerOperatorErasure(db: Db, request: { readonly requestId: number; readonly answer: OperatorErasureAnswer; readonly now: number }): void {
  db.prepare('UPDATE operator_erasures SET account_ref = NULL, answered_at = ?, answer = ? WHERE request_id = ?').run(request.now, JSON.stringify(request.answer), request.requestId);
  dropOldAnswers(db, request.now);
}

/** Writer command (at each start too): answers nobody collected for a day go. */
export function dropOldAnswers(db: Db, now: number): void {
  db.prepare('DELETE FROM operator_erasures WHERE answered_at < ?').run(now - kAnsweredKeptMs);
}

/** The command line: the answer to its request, if there is one yet; the row goes once read. */
export function collectOperatorAnswer(db: Db, requestId: number): OperatorErasureAnswer | null {
  const row = db.prepare('SELECT answer FROM operator_erasures WHERE request_id = ? AND answered_at IS NOT NULL').get(requestId) as { answer: string } | undefined;
  if (row === undefined) return null;
  db.prepare('DELETE FROM operator_erasures WHERE request_id = ?').run(requestId);
  return JSON.parse(row.answer) as OperatorErasureAnswer;
}

/** Whether a server has taken the request (it answers it, even when it stops meanwhile). */
export function operatorErasureTaken(db: Db, requestId: number): boolean {
  return db.prepare('SELECT taken_at IS NOT NULL FROM operator_erasures WHERE request_id = ?').pluck().get(requestId) === 1;
}

/** The command line gave up waiting before the server took the request: withdrawn, unless taken. */
export function withdrawOperatorErasure(db: Db, requestId: number): boolean {
  return db.prepare('DELETE FROM operator_erasures WHERE request_id = ? AND taken_at IS NULL').run(requestId).changes === 1;
}
