// The review queue over HTTP (DESIGN §4): list, read and change cases of the key's project.
// Cases are opened by the scorer (scoring/event-store.ts) when an event is decided `review`.
import type { Environment } from '../auth/api-keys.js';
import type { Statement } from 'better-sqlite3';
import { apiError, type ApiError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { recordAudit } from '../audit/audit-store.js';
import { labelCaseEvents } from '../labels/labels-store.js';
import { foldEventsOfCase, writeOpenedCasesOf } from '../scoring/event-store.js';
import { caseEventIds } from './case-events.js';
import { compareListed, encodeCursor, type CaseChange, type CaseCursor, type CaseListQuery } from './cases-query.js';
import type { OpenedCase, UnfoldedCase, UnfoldedCases } from './unfolded-cases.js';

export interface CaseNote {
  readonly note_id: string;
  readonly kind: 'note' | 'change';
  readonly author_key_id: string;
  readonly body: string;
  readonly created_at: string;
}

export interface CaseRecord {
  readonly case_id: string;
  readonly project_id: string;
  readonly status: 'open' | 'closed';
  readonly resolution: 'fraud' | 'legitimate' | null;
  readonly account_public_id: string | null;
  readonly external_account_id: string | null;
  readonly event_ids: string[];
  readonly decision: string;
  readonly risk_score: number;
  readonly assignee: string | null;
  readonly notes: CaseNote[];
  readonly created_at: string;
  readonly updated_at: string;
}

interface CaseRow {
  case_id: string;
  project_id: string;
  status: 'open' | 'closed';
  resolution: 'fraud' | 'legitimate' | null;
  account_id: string | null;
  external_account_id: string | null;
  decision: string;
  risk_score: number;
  assignee: string | null;
  created_at: number;
  updated_at: number;
}

const kCaseColumns = `c.case_id, c.project_id, c.status, c.resolution, c.account_id, a.external_account_id, c.decision, c.risk_score,
  c.assignee, c.created_at, c.updated_at FROM cases c LEFT JOIN accounts a ON a.account_id = c.account_id`;
const kOneCase = `SELECT ${kCaseColumns} WHERE c.project_id = ? AND c.case_id = ?`;
const kNotesOfCase = 'SELECT note_id, kind, author_key_id, body, created_at FROM case_notes WHERE case_id = ? ORDER BY seq';

export type CaseAnswer = { ok: true; body: object } | { ok: false; error: ApiError };

type NoteRow = { note_id: string; kind: 'note' | 'change'; author_key_id: string; body: string; created_at: number };

/**
 * What changeCase did: its refusal, if any, the cases whose rows it wrote with all their events,
 * and the case as this change left it (read in its transaction: changes committed in the same
 * group commit after it are not in its answer).
 */
export interface CaseChangeOutcome {
  readonly refusal: ApiError | null;
  readonly written: readonly string[];
  readonly changed: { readonly row: CaseRow; readonly notes: NoteRow[] } | null;
}

/** The acc_ id of the account a path or query id names for a project, or null (accounts-service.ts). */
export type AccountNamed = (tenantId: string, environment: Environment, projectId: string, id: string) => string | null;

export class CasesService {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #unfolded: UnfoldedCases;
  readonly #now: () => number;
  readonly #onAccountChanged: (accountId: string) => void;
  readonly #one: Statement<[string, string], CaseRow>;
  readonly #notes: Statement<[string], NoteRow>;
  readonly #accountNamed: AccountNamed;
  /**
   * The listing's statements by their SQL: one per combination of filters and order that was
   * asked for (1,536 at most: eight filters present or not, assigned or not or either, two orders),
   * each compiled once instead of on every request.
   */
  readonly #listStatements = new Map<string, Statement<Array<string | number>, CaseRow>>();

  /**
   * `unfolded`: events on their way into their cases' rows, read on top of them.
   * `onAccountChanged`: a case of this account (acc_ id) changed; its fraud mark and fraud labels are read again.
   * `accountNamed`: the account the listing's `account` names, as the accounts routes read it.
   */
  /** The scorer's casesSettledBefore: oldest-first listings end there. */
  readonly #settledBefore: () => number;

  constructor(readDb: Db, writer: AppWriter, unfolded: UnfoldedCases, now: () => number, onAccountChanged: (accountId: string) => void, accountNamed: AccountNamed, settledBefore: () => number) {
    this.#settledBefore = settledBefore;
    this.#readDb = readDb;
    this.#writer = writer;
    this.#unfolded = unfolded;
    this.#now = now;
    this.#onAccountChanged = onAccountChanged;
    this.#accountNamed = accountNamed;
    this.#one = readDb.prepare(kOneCase);
    this.#notes = readDb.prepare(kNotesOfCase);
  }

  list(tenantId: string, environment: Environment, query: CaseListQuery): CaseAnswer {
    const where = ['c.project_id = ?'];
    const args: Array<string | number> = [query.projectId];
    let accountId: string | null = null;
    if (query.status !== null) {
      where.push('c.status = ?');
      args.push(query.status);
    }
    if (query.account !== null) {
      // As the accounts routes read an id (an erased account's acc_ id names no account now).
      const found = this.#accountNamed(tenantId, environment, query.projectId, query.account);
      if (found === null) return { ok: true, body: { cases: [], next_cursor: null } };
      accountId = found;
      where.push('c.account_id = ?');
      args.push(accountId);
    }
    if (query.createdAfter !== null) {
      where.push('c.created_at > ?');
      args.push(query.createdAfter);
    }
    // Oldest first, the last page must hold every case created before its end: a case whose event
    // began scoring earlier but is stored later would otherwise sort before a cursor already
    // given out. Cases created from the oldest event still being scored on are listed later.
    const createdBefore = query.oldestFirst ? Math.min(query.createdBefore ?? Infinity, this.#settledBefore()) : query.createdBefore;
    if (createdBefore !== null) {
      where.push('c.created_at < ?');
      args.push(createdBefore);
    }
    // A case's updated_at and risk_score are its row's, or more for events that joined it and are
    // not on its row yet (#record): a row passes its condition, or the waiting events' test.
    const waitingTests: Array<(waiting: UnfoldedCase) => boolean> = [];
    const rowOrWaiting = (condition: string, bound: number, test: (waiting: UnfoldedCase) => boolean): void => {
      where.push(`(${condition} OR c.case_id IN (SELECT value FROM json_each(?)))`);
      args.push(bound, JSON.stringify([...this.#unfolded.idsWhere(test)]));
      waitingTests.push(test);
    };
    const { updatedAfter, minRiskScore } = query;
    if (updatedAfter !== null) rowOrWaiting('c.updated_at > ?', updatedAfter, (waiting) => waiting.updatedAt > updatedAfter);
    if (minRiskScore !== null) rowOrWaiting('c.risk_score >= ?', minRiskScore, (waiting) => waiting.riskScore >= minRiskScore);
    if (query.assignee !== null) {
      where.push('c.assignee = ?');
      args.push(query.assignee);
    }
    if (query.assigned !== null) where.push(query.assigned ? 'c.assignee IS NOT NULL' : 'c.assignee IS NULL');
    const [after, direction] = query.oldestFirst ? ['>', 'ASC'] : ['<', 'DESC'];
    if (query.cursor !== null) {
      where.push(`(c.created_at ${after} ? OR (c.created_at = ? AND c.case_id ${after} ?))`);
      args.push(query.cursor.createdAt, query.cursor.createdAt, query.cursor.caseId);
    }
    // One row more than the page tells whether another page follows.
    const sql = `SELECT ${kCaseColumns} WHERE ${where.join(' AND ')} ORDER BY c.created_at ${direction}, c.case_id ${direction} LIMIT ?`;
    let statement = this.#listStatements.get(sql);
    if (statement === undefined) {
      statement = this.#readDb.prepare(sql);
      this.#listStatements.set(sql, statement);
    }
    const rows = statement.all(...args, query.limit + 1);
    const positionOf = (row: CaseRow): CaseCursor => ({ createdAt: row.created_at, caseId: row.case_id });
    // Cases opened and not written yet, where the query would find their rows.
    const listed = new Set(rows.map((row) => row.case_id));
    const fromRows = rows.length;
    for (const [caseId, waiting] of this.#unfolded.openedCases()) {
      const opened = waiting.opened;
      // A case not written yet is open and has no assignee (a change writes it first).
      if (listed.has(caseId) || opened.projectId !== query.projectId || query.status === 'closed' || query.assignee !== null || query.assigned === true) continue;
      if (query.account !== null && opened.accountId !== accountId) continue;
      if (query.createdAfter !== null && !(opened.createdAt > query.createdAfter)) continue;
      if (createdBefore !== null && !(opened.createdAt < createdBefore)) continue;
      if (!waitingTests.every((test) => test(waiting))) continue;
      if (query.cursor !== null && compareListed(query.oldestFirst, { createdAt: opened.createdAt, caseId }, query.cursor) <= 0) continue;
      rows.push(openedRow(caseId, opened, waiting.riskScore, waiting.updatedAt));
    }
    if (rows.length > fromRows) {
      rows.sort((a, b) => compareListed(query.oldestFirst, positionOf(a), positionOf(b)));
      rows.length = Math.min(rows.length, query.limit + 1);
    }
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const nextCursor = rows.length > query.limit && last !== undefined ? encodeCursor(query.projectId, query.oldestFirst, positionOf(last)) : null;
    return { ok: true, body: { cases: page.map((row) => this.#record(row)), next_cursor: nextCursor } };
  }

  get(projectId: string, caseId: string): CaseAnswer {
    const row = this.#one.get(projectId, caseId) ?? this.#openedRow(projectId, caseId);
    return row === undefined ? { ok: false, error: notFound() } : { ok: true, body: this.#record(row) };
  }

  /** A case opened and not written yet, as its row will be. */
  #openedRow(projectId: string, caseId: string): CaseRow | undefined {
    const waiting = this.#unfolded.get(caseId);
    if (waiting?.opened == null || waiting.opened.projectId !== projectId) return undefined;
    return openedRow(caseId, waiting.opened, waiting.riskScore, waiting.updatedAt);
  }

  async change(projectId: string, caseId: string, change: CaseChange, authorKeyId: string): Promise<CaseAnswer> {
    let outcome: CaseChangeOutcome;
    try {
      outcome = await this.#writer.call('changeCase', projectId, caseId, change, authorKeyId, this.#now());
    } catch (error) {
      return { ok: false, error: apiError('INTERNAL_ERROR', `The case could not be changed: ${(error as Error).message}`) };
    }
    // changeCase wrote the case (and, reopening one, the account's new open case) first, refused or not.
    for (const written of outcome.written) this.#unfolded.forget(written);
    if (outcome.refusal !== null) return { ok: false, error: outcome.refusal };
    if (outcome.changed === null) return { ok: false, error: notFound() };
    const { row, notes } = outcome.changed;
    if (row.account_id !== null) this.#onAccountChanged(row.account_id);
    return { ok: true, body: this.#record(row, notes) };
  }

  /** `notes`: as of a change's transaction; read now if not given. */
  #record(row: CaseRow, notes: NoteRow[] = this.#notes.all(row.case_id)): CaseRecord {
    const unfolded = this.#unfolded.get(row.case_id);
    return {
      case_id: row.case_id,
      project_id: row.project_id,
      status: row.status,
      resolution: row.resolution,
      account_public_id: row.account_id,
      external_account_id: row.external_account_id,
      event_ids: caseEventIds(this.#readDb, row.case_id, unfolded?.seqs),
      decision: row.decision,
      risk_score: unfolded === undefined ? row.risk_score : Math.max(row.risk_score, unfolded.riskScore),
      assignee: row.assignee,
      notes: notes.map((note) => ({ ...note, created_at: new Date(note.created_at).toISOString() })),
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(unfolded === undefined ? row.updated_at : Math.max(row.updated_at, unfolded.updatedAt)).toISOString(),
    };
  }
}

function notFound(): ApiError {
  return apiError('NOT_FOUND', 'No such case in this project.', 'case_id');
}

function openedRow(caseId: string, opened: OpenedCase, riskScore: number, updatedAt: number): CaseRow {
  return {
    case_id: caseId, project_id: opened.projectId, status: 'open', resolution: null, account_id: opened.accountId, external_account_id: opened.externalAccountId,
    decision: 'review', risk_score: riskScore, assignee: null, created_at: opened.createdAt, updated_at: updatedAt,
  };
}

/**
 * Write command: checks the change against the current case, applies it, writes a change note per
 * changed field and the analyst's note, keeps the account's fraud mark in step with its cases
 * (fraud_confirmed while any of its cases is resolved as fraud) and the labels of its events with
 * its resolution (labels/labels-store.ts), and records the change in the audit trail. Returns the
 * refusal, if any, and the cases whose rows it wrote (new ones, or with events not folded in yet).
 */
export function changeCase(db: Db, projectId: string, caseId: string, change: CaseChange, authorKeyId: string, now: number): CaseChangeOutcome {
  // The case's row first, with every event of it: labels go to all of them, and the row is written anyway.
  const written = foldEventsOfCase(db, projectId, caseId) ? [caseId] : [];
  const refusal = applyCaseChange(db, projectId, caseId, change, authorKeyId, now, written);
  const row = refusal === null ? (db.prepare(kOneCase).get(projectId, caseId) as CaseRow | undefined) : undefined;
  const changed = row === undefined ? null : { row, notes: db.prepare(kNotesOfCase).all(caseId) as NoteRow[] };
  return { refusal, written, changed };
}

/** changeCase's checks and writes, its row written; `written` gets the cases it writes besides. */
function applyCaseChange(db: Db, projectId: string, caseId: string, change: CaseChange, authorKeyId: string, now: number, written: string[]): ApiError | null {
  const current = db.prepare('SELECT status, resolution, account_id, assignee, updated_at FROM cases WHERE project_id = ? AND case_id = ?').get(projectId, caseId) as
    | { status: 'open' | 'closed'; resolution: 'fraud' | 'legitimate' | null; account_id: string | null; assignee: string | null; updated_at: number }
    | undefined;
  if (current === undefined) return notFound();
  // Its row holds every event of the case by now (changeCase folded them in), so an event that
  // joined since the analyst's read moved it too.
  if (change.ifUpdatedAt !== undefined && change.ifUpdatedAt !== current.updated_at) {
    return apiError('VALIDATION_ERROR', `The case changed since it was read (updated_at is now ${new Date(current.updated_at).toISOString()}): read it again. Nothing was changed.`, 'updated_at');
  }
  const resolutionGiven = change.resolution !== undefined;
  const status = change.status ?? (resolutionGiven && change.resolution !== null ? 'closed' : current.status);
  const resolution = resolutionGiven ? change.resolution! : status === 'open' ? null : current.resolution;
  if (status === 'open' && resolution !== null) {
    return apiError('VALIDATION_ERROR', 'An open case has no resolution: close it, or set resolution to null.', 'resolution');
  }
  if (status === 'open' && current.status === 'closed' && current.account_id !== null) {
    // A case the account opened since, not written yet, counts.
    written.push(...writeOpenedCasesOf(db, current.account_id));
    const other = db.prepare("SELECT case_id FROM cases WHERE project_id = ? AND account_id = ? AND status = 'open'").get(projectId, current.account_id) as { case_id: string } | undefined;
    if (other !== undefined) return apiError('VALIDATION_ERROR', `The account already has an open case, ${other.case_id}.`, 'status');
  }
  const assignee = change.assignee !== undefined ? change.assignee : current.assignee;
  // A change to what the case already is changes nothing: no updated_at, no audit record.
  if (status === current.status && resolution === current.resolution && assignee === current.assignee && change.note === undefined) return null;

  const addNote = db.prepare('INSERT INTO case_notes (case_id, note_id, kind, author_key_id, body, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const describe = (value: string | null): string => (value === null ? 'none' : value);
  if (status !== current.status) addNote.run(caseId, newId('msg'), 'change', authorKeyId, `status: ${current.status} → ${status}`, now);
  if (resolution !== current.resolution) addNote.run(caseId, newId('msg'), 'change', authorKeyId, `resolution: ${describe(current.resolution)} → ${describe(resolution)}`, now);
  if (assignee !== current.assignee) addNote.run(caseId, newId('msg'), 'change', authorKeyId, `assignee: ${describe(current.assignee)} → ${describe(assignee)}`, now);
  if (change.note !== undefined) addNote.run(caseId, newId('msg'), 'note', authorKeyId, change.note, now);
  // Later than the case's last change even if the clock stepped back or did not tick: every change
  // moves updated_at, which is what a later change's updated_at check relies on.
  const updatedAt = Math.max(now, current.updated_at + 1);
  db.prepare('UPDATE cases SET status = ?, resolution = ?, assignee = ?, updated_at = ? WHERE case_id = ?').run(status, resolution, assignee, updatedAt, caseId);
  if (current.account_id !== null && resolution !== current.resolution) {
    db.prepare(
      "UPDATE accounts SET fraud_confirmed = EXISTS (SELECT 1 FROM cases WHERE account_id = ? AND resolution = 'fraud') WHERE account_id = ?",
    ).run(current.account_id, current.account_id);
  }
  const labels = resolution !== current.resolution ? labelCaseEvents(db, projectId, caseId, current.account_id, resolution, authorKeyId, now) : null;
  const summary: Record<string, unknown> = {};
  if (status !== current.status) summary.status = [current.status, status];
  if (resolution !== current.resolution) summary.resolution = [current.resolution, resolution];
  if (assignee !== current.assignee) summary.assignee = [current.assignee, assignee];
  // The note's text stays in the case (analysts' notes may name people); the trail says one was added.
  if (change.note !== undefined) summary.note_added = true;
  if (labels !== null) {
    summary.events_labelled = labels.labelled;
    // The labels a resolution gave, taken back by its change (a reopen, another resolution).
    if (labels.unlabelled > 0) summary.events_unlabelled = labels.unlabelled;
  }
  recordAudit(db, { projectId, actor: authorKeyId, action: 'case.change', target: `case:${caseId}`, summary, at: now });
  return null;
}
