// Events, score results and everything one scored event writes (schema: migrations 003–005).
// A result is stored in its compact form (result-layout.ts) and expanded when read.
//
// Reads run on the read-only connection. Writes are work functions for the group-commit Writer:
// synchronous, run inside the batch's transaction, and written not to throw for expected outcomes.
import type { Statement } from 'better-sqlite3';
import type { StoredIdentifier } from '../signals/stored-identifiers.js';
import { newId } from '../shared/ids.js';
import type { Db } from '../store/database.js';
import type { EventIds } from './event-ids.js';
import { LoadedRulesets } from './loaded-rulesets.js';
import type { Decision } from './score-result.js';

export interface StoredEvent {
  readonly seq: number;
  /** 'erased': accepted as async, then its account was erased before it was scored; never scored. */
  readonly state: 'pending' | 'scored' | 'erased';
  readonly payload: string;
  readonly body_hash: string | null;
  /** A scored event's result as GET /v1/scores answers it (expanded from its compact form). */
  readonly result: string | null;
  readonly received_at: number;
}

interface EventRow {
  readonly seq: number;
  readonly project_id: string;
  readonly event_id: string;
  readonly state: StoredEvent['state'];
  readonly payload: string;
  readonly body_hash: string | null;
  readonly result: string | null;
  readonly received_at: number;
  readonly ruleset_version: number | null;
  readonly decision: Decision | null;
  readonly risk_score: number | null;
}

/**
 * Reads stored events by (project, event id): the in-memory EventIds say which rows may hold it
 * (none, for a new event id: no read at all), and each is read by its rowid.
 */
export class EventReader {
  readonly #bySeq: Statement<[number], EventRow>;
  readonly #ids: EventIds;
  readonly #rulesets: LoadedRulesets;

  constructor(readDb: Db, ids: EventIds) {
    this.#bySeq = readDb.prepare(
      'SELECT seq, project_id, event_id, state, payload, body_hash, result, received_at, ruleset_version, decision, risk_score FROM events WHERE seq = ?',
    );
    this.#ids = ids;
    this.#rulesets = new LoadedRulesets(readDb);
  }

  find(projectId: string, eventId: string): StoredEvent | null {
    for (const seq of this.#ids.candidates(projectId, eventId)) {
      const row = this.#bySeq.get(seq);
      if (row === undefined || row.project_id !== projectId || row.event_id !== eventId) continue;
      const { state, payload, body_hash, received_at } = row;
      return { seq, state, payload, body_hash, received_at, result: row.result === null ? null : this.#expand(projectId, eventId, row) };
    }
    return null;
  }

  /** The writer committed (project, event id) at row `seq`. */
  stored(projectId: string, eventId: string, seq: number): void {
    this.#ids.add(projectId, eventId, seq);
  }

  #expand(projectId: string, eventId: string, row: EventRow): string {
    if (!row.result!.startsWith('[')) return row.result!; // stored in full before compact results
    const loaded = this.#rulesets.get(projectId, row.ruleset_version!);
    if (typeof loaded === 'string') throw new Error(`the result of event ${eventId} cannot be read: ${loaded}`);
    return loaded.layout.expand(row.result!, { eventId, decision: row.decision!, riskScore: row.risk_score!, rulesetVersion: row.ruleset_version! });
  }
}

export interface PendingEventRecord {
  readonly projectId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly receivedAt: number;
  readonly payload: string;
}

export interface ScoredEventRecord {
  readonly projectId: string;
  readonly tenantId: string;
  readonly environment: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly receivedAt: number;
  readonly payload: string;
  readonly account: { readonly accountId: string; readonly externalId: string } | null;
  readonly identifiers: readonly StoredIdentifier[];
  readonly rulesetVersion: number;
  readonly decision: Decision;
  readonly riskScore: number;
  readonly result: string;
  readonly shadow: string;
  /** What the rules read from the service's state (recorded-signals.ts). */
  readonly signals: string;
  readonly scoredAt: number;
  /** For async events: the decision webhook body, queued when the project has a webhook. */
  readonly webhookPayload: string | null;
}

export type PersistOutcome =
  /**
   * Stored at row `seq`; accountId is the account the event was linked to (the stored one, if ids
   * raced).
   */
  | { readonly kind: 'stored'; readonly seq: number; readonly accountId: string | null }
  /** An async event that something else scored first: nothing written. */
  | { readonly kind: 'already_scored' };

/** Signals of an account are re-written (last_seen, links) at most this often. */
export const kSignalRefreshMs = 60 * 60_000;
/** Other accounts linked per signal value when a signal is first seen or refreshed. */
export const kMaxLinksPerSignal = 100;
const kDayMs = 86_400_000;

interface Statements {
  insertPending: Statement;
  insertScored: Statement;
  markScored: Statement;
  setEventAccount: Statement;
  upsertAccount: Statement<unknown[], { account_id: string }>;
  accountProject: Statement;
  findSignal: Statement<[string, string, string, string, string], { last_seen: number }>;
  insertSignal: Statement;
  touchSignal: Statement;
  otherHolders: Statement<[string, string, string, string, string, number], { account_id: string; external_account_id: string; projects: string }>;
  upsertLink: Statement;
  projectsOf: Statement<[string], { projects: string }>;
  linksOf: Statement<[string], { signal_type: string; other_account_id: string }>;
  setOtherProjects: Statement;
  openCase: Statement<[string, string], { case_id: string }>;
  insertCase: Statement;
  extendCase: Statement;
  addCaseEvent: Statement;
  hasWebhook: Statement<[string], { present: number }>;
  insertOutbox: Statement;
}

const kStatements = new WeakMap<Db, Statements>();

function statements(db: Db): Statements {
  let prepared = kStatements.get(db);
  if (prepared !== undefined) return prepared;
  prepared = {
    insertPending: db.prepare(
      `INSERT INTO events (project_id, event_id, event_type, received_at, state, payload) VALUES (?, ?, ?, ?, 'pending', ?)`,
    ),
    insertScored: db.prepare(
      `INSERT INTO events (project_id, event_id, event_type, account_id, received_at, state, payload, ruleset_version, decision, risk_score, result, shadow, signals, scored_at)
       VALUES (?, ?, ?, ?, ?, 'scored', ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    markScored: db.prepare(
      `UPDATE events SET state = 'scored', account_id = ?, ruleset_version = ?, decision = ?, risk_score = ?, result = ?, shadow = ?, signals = ?, scored_at = ?
       WHERE seq = ? AND state = 'pending'`,
    ),
    setEventAccount: db.prepare('UPDATE events SET account_id = ? WHERE seq = ?'),
    upsertAccount: db.prepare(
      `INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews)
       VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (tenant_id, environment, external_account_id) DO UPDATE SET
         last_seen_at = max(last_seen_at, excluded.last_seen_at), events = events + 1,
         blocks = blocks + excluded.blocks, reviews = reviews + excluded.reviews
       RETURNING account_id`,
    ),
    accountProject: db.prepare('INSERT OR IGNORE INTO account_projects (account_id, project_id, first_seen_at) VALUES (?, ?, ?)'),
    findSignal: db.prepare('SELECT last_seen FROM account_signals WHERE tenant_id = ? AND environment = ? AND signal_type = ? AND signal_hash = ? AND account_id = ?'),
    insertSignal: db.prepare(
      `INSERT INTO account_signals (tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    touchSignal: db.prepare(
      'UPDATE account_signals SET last_seen = ? WHERE tenant_id = ? AND environment = ? AND signal_type = ? AND signal_hash = ? AND account_id = ?',
    ),
    otherHolders: db.prepare(
      `SELECT s.account_id, a.external_account_id,
         (SELECT ',' || group_concat(project_id, ',') || ',' FROM account_projects WHERE account_id = s.account_id) AS projects
       FROM account_signals s JOIN accounts a ON a.account_id = s.account_id
       WHERE s.tenant_id = ? AND s.environment = ? AND s.signal_type = ? AND s.signal_hash = ? AND s.account_id != ? AND s.last_seen >= ?
       ORDER BY s.last_seen DESC LIMIT ${kMaxLinksPerSignal}`,
    ),
    upsertLink: db.prepare(
      `INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, signal_type, other_account_id) DO UPDATE SET
         last_seen = max(last_seen, excluded.last_seen), masked = excluded.masked, other_projects = excluded.other_projects`,
    ),
    projectsOf: db.prepare(`SELECT ',' || group_concat(project_id, ',') || ',' AS projects FROM account_projects WHERE account_id = ?`),
    linksOf: db.prepare('SELECT signal_type, other_account_id FROM account_links WHERE account_id = ?'),
    setOtherProjects: db.prepare('UPDATE account_links SET other_projects = ? WHERE account_id = ? AND signal_type = ? AND other_account_id = ?'),
    openCase: db.prepare(`SELECT case_id FROM cases WHERE project_id = ? AND account_id = ? AND status = 'open'`),
    insertCase: db.prepare(
      `INSERT INTO cases (case_id, project_id, status, resolution, account_id, decision, risk_score, assignee, created_at, updated_at)
       VALUES (?, ?, 'open', NULL, ?, ?, ?, NULL, ?, ?)`,
    ),
    extendCase: db.prepare('UPDATE cases SET risk_score = max(risk_score, ?), updated_at = ? WHERE case_id = ?'),
    addCaseEvent: db.prepare('INSERT OR IGNORE INTO case_events (case_id, event_id, added_at) VALUES (?, ?, ?)'),
    hasWebhook: db.prepare('SELECT 1 AS present FROM webhooks WHERE project_id = ?'),
    insertOutbox: db.prepare(
      `INSERT INTO webhook_outbox (message_id, project_id, event_id, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
  };
  kStatements.set(db, prepared);
  return prepared;
}

/** An accepted async event, waiting for the background scorer. */
export function insertPendingEvent(db: Db, record: PendingEventRecord): number {
  const info = statements(db).insertPending.run(record.projectId, record.eventId, record.eventType, record.receivedAt, record.payload);
  return Number(info.lastInsertRowid);
}

/**
 * A scored event: a new sync event (`pendingSeq` null) or the pending async event at row
 * `pendingSeq` being completed. Rows are addressed by seq: lookups by event id go through memory
 * (event-ids.ts), and the events table has no index on it.
 */
export function persistScoredEvent(db: Db, record: ScoredEventRecord, pendingSeq: number | null): PersistOutcome {
  const s = statements(db);
  const provisionalAccountId = record.account?.accountId ?? null;
  let seq: number;
  if (pendingSeq !== null) {
    const changed = s.markScored.run(
      provisionalAccountId, record.rulesetVersion, record.decision, record.riskScore, record.result, record.shadow, record.signals, record.scoredAt,
      pendingSeq,
    ).changes;
    if (changed === 0) return { kind: 'already_scored' };
    seq = pendingSeq;
  } else {
    seq = Number(s.insertScored.run(
      record.projectId, record.eventId, record.eventType, provisionalAccountId, record.receivedAt, record.payload,
      record.rulesetVersion, record.decision, record.riskScore, record.result, record.shadow, record.signals, record.scoredAt,
    ).lastInsertRowid);
  }
  let accountId: string | null = null;
  if (record.account !== null) {
    const blocks = record.decision === 'block' ? 1 : 0;
    const reviews = record.decision === 'review' ? 1 : 0;
    accountId = s.upsertAccount.get(
      record.account.accountId, record.tenantId, record.environment, record.account.externalId, record.scoredAt, record.scoredAt, blocks, reviews,
    )!.account_id;
    // Two new ids for one external id can only race when the directory's cache evicted one; the
    // stored account wins.
    if (accountId !== provisionalAccountId) s.setEventAccount.run(accountId, seq);
    if (s.accountProject.run(accountId, record.projectId, record.scoredAt).changes > 0) announceProjects(s, accountId);
    for (const identifier of record.identifiers) recordSignal(s, record, accountId, identifier);
  }
  if (record.decision === 'review') openOrExtendCase(s, record, accountId);
  if (record.webhookPayload !== null && s.hasWebhook.get(record.projectId) !== undefined) {
    s.insertOutbox.run(newId('msg'), record.projectId, record.eventId, record.webhookPayload, record.scoredAt, record.scoredAt);
  }
  return { kind: 'stored', seq, accountId };
}

/**
 * Stores that the account used a signal value, and links the account with the other accounts that
 * used it (an IP only within 24 hours of each other). Repeated use within kSignalRefreshMs writes
 * nothing: that bounds the writes of a busy account to one per signal per refresh interval.
 */
function recordSignal(s: Statements, record: ScoredEventRecord, accountId: string, identifier: StoredIdentifier): void {
  const { tenantId, environment, scoredAt: now } = record;
  const externalId = record.account!.externalId;
  const existing = s.findSignal.get(tenantId, environment, identifier.type, identifier.hash, accountId);
  if (existing === undefined) {
    s.insertSignal.run(tenantId, environment, identifier.type, identifier.hash, accountId, identifier.masked, now, now);
  } else if (now - existing.last_seen >= kSignalRefreshMs) {
    s.touchSignal.run(now, tenantId, environment, identifier.type, identifier.hash, accountId);
  } else {
    return;
  }
  const since = identifier.type === 'ip' ? now - kDayMs : 0;
  const linkType = identifier.type === 'ip' ? 'ip_24h' : identifier.type;
  const others = s.otherHolders.all(tenantId, environment, identifier.type, identifier.hash, accountId, since);
  if (others.length === 0) return;
  const ownProjects = s.projectsOf.get(accountId)!.projects;
  for (const other of others) {
    s.upsertLink.run(accountId, linkType, other.account_id, other.external_account_id, other.projects, identifier.masked, now, now);
    s.upsertLink.run(other.account_id, linkType, accountId, externalId, ownProjects, identifier.masked, now, now);
  }
}

/** An account was used in a project for the first time: the links that point at it say so. */
function announceProjects(s: Statements, accountId: string): void {
  const links = s.linksOf.all(accountId);
  if (links.length === 0) return;
  const projects = s.projectsOf.get(accountId)!.projects;
  for (const link of links) s.setOtherProjects.run(projects, link.other_account_id, link.signal_type, accountId);
}

function openOrExtendCase(s: Statements, record: ScoredEventRecord, accountId: string | null): void {
  const open = accountId === null ? undefined : s.openCase.get(record.projectId, accountId);
  let caseId: string;
  if (open === undefined) {
    caseId = newId('case');
    s.insertCase.run(caseId, record.projectId, accountId, record.decision, record.riskScore, record.scoredAt, record.scoredAt);
  } else {
    caseId = open.case_id;
    s.extendCase.run(record.riskScore, record.scoredAt, caseId);
  }
  s.addCaseEvent.run(caseId, record.eventId, record.scoredAt);
}

