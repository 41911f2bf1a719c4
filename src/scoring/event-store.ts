// Events, score results and everything one scored event writes (schema: migrations 003–005, 013).
// A result is stored in its compact form (result-layout.ts) and expanded when read.
//
// Reads run on the read-only connection. Writes are work functions for the group-commit Writer:
// synchronous, run inside the batch's transaction, and written not to throw for expected outcomes.
import type { Statement } from 'better-sqlite3';
import { decodeSeqs, encodeSeqs, kOpenSeqsBytes } from '../accounts/event-seqs.js';
import type { Environment } from '../auth/api-keys.js';
import { newId, newSortableId } from '../shared/ids.js';
import type { Db } from '../store/database.js';
import { undoOnRollback } from '../store/transaction-undo.js';
import { EventIdRunWriter } from './event-id-runs.js';
import type { EventIds } from './event-ids.js';
import { LoadedRulesets } from './loaded-rulesets.js';
import { SeqSet, SeqSetsByProject } from './seq-set.js';
import { ScoredSinceStamp } from './scored-since-stamp.js';
import { payloadText, storedPayload } from './stored-payload.js';
import { webhookJsonForAccount, type Decision } from './score-result.js';

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
      return { seq, state, payload: payloadText(payload), body_hash, received_at, result: row.result === null ? null : this.#expand(projectId, eventId, row) };
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

/** An event's account as the hot state saw it when the event was scored. */
export interface RecordAccount {
  /** Its acc_ id: the stored one, or a new one for an account with no row yet (`isNew`). */
  readonly accountId: string;
  readonly externalId: string;
  /** The hot state had no such account: the event's transaction creates its row. */
  readonly isNew: boolean;
  /** The account was not used from this project before: the event's transaction adds it. */
  readonly newProject: boolean;
}

export interface ScoredEventRecord {
  readonly projectId: string;
  readonly tenantId: string;
  readonly environment: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly receivedAt: number;
  readonly payload: string;
  readonly account: RecordAccount | null;
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
   * Stored at row `seq`, the `order`-th event scored (events.scored_order); accountId is the
   * account the event was linked to (the stored one, if two new ids raced); webhookQueued: a
   * decision webhook message went into the outbox with it; openedCase: the case the event opened,
   * extendedCase: the account's open case it joined — written or listed when the writer folds
   * them in (foldCaseEvents).
   */
  | {
    readonly kind: 'stored'; readonly seq: number; readonly order: number; readonly accountId: string | null; readonly webhookQueued: boolean;
    readonly openedCase: string | null; readonly extendedCase: string | null;
    /** A label put on the event while it was pending now names its account (whose label counts change). */
    readonly labelNamesAccount: boolean;
  }
  /** An async event that something else scored first: nothing written. */
  | { readonly kind: 'already_scored' };

/**
 * The rows that follow from scored events (docs/pipeline.md, "Derived rows"), made by the owner
 * of the hot state and written in bulk: absolute counts and upserts, so that writing a row twice
 * changes nothing. `order`: every scored event up to this scored_order is in them.
 */
export interface DerivedRowBatch {
  readonly order: number;
  /**
   * Set when parts of the same bulk write follow this one (BatchParts): the earliest last_seen
   * among the batch's link rows (ms). Until the last part is written, a start mends the links
   * seen since then that are stored in one direction only (derived_stamp.parts_open, migration 23).
   */
  readonly linksOpenSince?: number;
  /**
   * account_id, last_seen_at, events, blocks, reviews, counted_order (the last event the counts
   * include; -1: the row brings seqs only), the seqs of its events stored since its last row
   */
  readonly accounts: ReadonlyArray<readonly [string, number, number, number, number, number, readonly number[]]>;
  /**
   * tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen_s (whole
   * seconds, as memory keeps it: part of the key since migration 26), last_seen
   */
  readonly signals: ReadonlyArray<readonly [string, string, string, string, string, string, number, number]>;
  /** account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen */
  readonly links: ReadonlyArray<readonly [string, string, string, string, string, string, number, number]>;
  /** account_id, signal_type, other_account_id, other_projects: the other account's projects changed */
  readonly linkProjects: ReadonlyArray<readonly [string, string, string, string]>;
}

/** A case and the seqs of its events folded into its row, written now if it was new (foldCaseEvents). */
export type FoldedCase = readonly [caseId: string, seqs: readonly number[]];

/** What foldCaseEvents did: the cases folded, those that could not be (with why), how many still wait, and whether one of them is due. */
export interface CaseFolds {
  readonly folded: readonly FoldedCase[];
  readonly failed: ReadonlyArray<readonly [caseId: string, message: string]>;
  readonly waiting: number;
  readonly due: boolean;
}

/** Which cases a foldCaseEvents writes: at most `limit`, new ones and those whose events have waited `waitedMs` (0: every one). */
export interface CaseFoldRequest {
  readonly limit: number;
  readonly waitedMs: number;
}

/**
 * The events that joined an open case since its row was last written, with their highest score
 * and latest time; `opened`: the case's row is not written yet (the first event opened it).
 */
interface CaseEventsToFold {
  riskScore: number;
  updatedAt: number;
  readonly seqs: number[];
  opened: OpenedCase | null;
  /** When the first of these events was scored (ms; 0 for those a start found): how long they have waited. */
  readonly since: number;
}

interface OpenedCase {
  readonly projectId: string;
  readonly accountId: string | null;
  readonly createdAt: number;
}

/** The length in bytes of an account's open list of seqs after an append. */
interface SeqsLength {
  readonly length: number;
}

/**
 * The writer's count of scored events (events.scored_order), and the seq of each event scored
 * since the last stamp: the next stamp's from_seq must not pass any of them.
 */
interface ScoringOrder {
  last: number;
  readonly sinceStamp: ScoredSinceStamp;
}

interface Statements {
  insertPending: Statement;
  insertScored: Statement;
  markScored: Statement;
  setEventAccount: Statement;
  labelAccount: Statement;
  setEventCase: Statement;
  insertAccount: Statement<unknown[], { account_id: string }>;
  accountProject: Statement;
  openCase: Statement<[string, string], { case_id: string }>;
  insertCase: Statement;
  caseSeqs: Statement<[string], Buffer>;
  foldCase: Statement<unknown[], SeqsLength>;
  moveCaseSeqs: Statement<[string]>;
  clearCaseSeqs: Statement<[string]>;
  hasWebhook: Statement<[string], { present: number }>;
  insertOutbox: Statement;
  updateAccount: Statement<unknown[], SeqsLength>;
  appendAccountSeqs: Statement<[Buffer, string], SeqsLength>;
  moveAccountSeqs: Statement<[string]>;
  clearAccountSeqs: Statement<[string]>;
  upsertSignal: Statement;
  upsertLink: Statement;
  setOtherProjects: Statement;
  /** The async events stored and still pending, by project (no index of the log holds them: migration 22). */
  readonly pending: SeqSetsByProject;
  lastSeq: Statement<[], number | null>;
  writeStamp: Statement;
  writeFromSeqs: Statement;
  lowerFromSeq: Statement<[number]>;
  /** The stamp's from_seq as stored (undone with its rollbacks): a pending event scored below it moves it down. */
  readonly stored: { fromSeq: number };
  order: ScoringOrder;
  /**
   * By case id, in the order they first waited: the cases opened and the events that joined an
   * open case, not on its row yet (foldCaseEvents writes them in bulk). Rolled back with their
   * transaction.
   */
  readonly unfolded: Map<string, CaseEventsToFold>;
  /** The seqs of the events in `unfolded`: the stamp's from_seq must not pass them, and cases may wait long. */
  readonly unfoldedSeqs: SeqSet;
  /** The open case of (project, account) whose row is not written yet (openCase finds the others). */
  readonly openedByAccount: Map<string, string>;
  caseExists: Statement<[string], number>;
  caseProject: Statement<[string], string>;
  /** The runs of event ids beside the log (null: no install secret, so no event is stored yet). */
  runs: EventIdRunWriter | null;
}

const kStatements = new WeakMap<Db, Statements>();

function statements(db: Db): Statements {
  let prepared = kStatements.get(db);
  if (prepared !== undefined) return prepared;
  const caseExists = db.prepare('SELECT 1 FROM cases WHERE case_id = ?').pluck() as Statement<[string], number>;
  prepared = {
    insertPending: db.prepare(
      `INSERT INTO events (project_id, event_id, event_type, received_at, state, payload) VALUES (?, ?, ?, ?, 'pending', ?)`,
    ),
    insertScored: db.prepare(
      `INSERT INTO events (project_id, event_id, event_type, account_id, received_at, state, payload, ruleset_version, decision, risk_score, result, shadow, signals, scored_at, scored_order)
       VALUES (?, ?, ?, ?, ?, 'scored', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    markScored: db.prepare(
      `UPDATE events SET state = 'scored', account_id = ?, ruleset_version = ?, decision = ?, risk_score = ?, result = ?, shadow = ?, signals = ?, scored_at = ?, scored_order = ?
       WHERE seq = ? AND state = 'pending'`,
    ),
    setEventAccount: db.prepare('UPDATE events SET account_id = ? WHERE seq = ?'),
    labelAccount: db.prepare('UPDATE event_labels SET account_id = ? WHERE project_id = ? AND event_id = ? AND account_id IS NULL'),
    setEventCase: db.prepare('UPDATE events SET case_id = ? WHERE seq = ?'),
    // Counts start at 0: the account's derived row (applyDerivedRows) counts its events. A second
    // new id for the same account (two first events in flight) gets the stored one back.
    insertAccount: db.prepare(
      `INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews)
       VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0)
       ON CONFLICT (tenant_id, environment, external_account_id) DO UPDATE SET external_account_id = excluded.external_account_id
       RETURNING account_id`,
    ),
    accountProject: db.prepare('INSERT OR IGNORE INTO account_projects (account_id, project_id, first_seen_at) VALUES (?, ?, ?)'),
    openCase: db.prepare(`SELECT case_id FROM cases WHERE project_id = ? AND account_id = ? AND status = 'open'`),
    // A case lists its events' seqs on its row (migration 18), as an account does (below).
    insertCase: db.prepare(
      `INSERT INTO cases (case_id, project_id, status, resolution, account_id, decision, risk_score, assignee, created_at, updated_at, event_seqs)
       VALUES (?, ?, 'open', NULL, ?, ?, ?, NULL, ?, ?, ?)`,
    ),
    caseSeqs: db.prepare('SELECT event_seqs FROM cases WHERE case_id = ?').pluck() as Statement<[string], Buffer>,
    foldCase: db.prepare(
      `UPDATE cases SET risk_score = max(risk_score, ?), updated_at = max(updated_at, ?), event_seqs = CAST(event_seqs || ? AS BLOB)
       WHERE case_id = ? RETURNING length(event_seqs) AS length`,
    ),
    moveCaseSeqs: db.prepare('INSERT INTO case_event_seqs (case_id, chunk, seqs) SELECT case_id, seq_chunks, event_seqs FROM cases WHERE case_id = ?'),
    clearCaseSeqs: db.prepare("UPDATE cases SET event_seqs = x'', seq_chunks = seq_chunks + 1 WHERE case_id = ?"),
    hasWebhook: db.prepare('SELECT 1 AS present FROM webhooks WHERE project_id = ?'),
    insertOutbox: db.prepare(
      `INSERT INTO webhook_outbox (message_id, project_id, event_id, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    // event_seqs: varints appended (|| makes text of blobs; the CAST keeps bytes and byte length).
    updateAccount: db.prepare(
      `UPDATE accounts SET last_seen_at = ?, events = ?, blocks = ?, reviews = ?, counted_order = ?, event_seqs = CAST(event_seqs || ? AS BLOB)
       WHERE account_id = ? RETURNING length(event_seqs) AS length`,
    ),
    appendAccountSeqs: db.prepare('UPDATE accounts SET event_seqs = CAST(event_seqs || ? AS BLOB) WHERE account_id = ? RETURNING length(event_seqs) AS length'),
    moveAccountSeqs: db.prepare('INSERT INTO account_event_seqs (account_id, chunk, seqs) SELECT account_id, seq_chunks, event_seqs FROM accounts WHERE account_id = ?'),
    clearAccountSeqs: db.prepare("UPDATE accounts SET event_seqs = x'', seq_chunks = seq_chunks + 1 WHERE account_id = ?"),
    upsertSignal: db.prepare(
      `INSERT INTO account_signals (tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen_s, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (first_seen_s, account_id, signal_type, signal_hash) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)`,
    ),
    upsertLink: db.prepare(
      `INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, signal_type, other_account_id) DO UPDATE SET
         last_seen = max(last_seen, excluded.last_seen), masked = excluded.masked, other_projects = excluded.other_projects`,
    ),
    setOtherProjects: db.prepare('UPDATE account_links SET other_projects = ? WHERE account_id = ? AND signal_type = ? AND other_account_id = ?'),
    pending: loadPendingSeqs(db),
    lastSeq: db.prepare('SELECT max(seq) FROM events').pluck() as unknown as Statement<[], number | null>,
    // parts_open: 0 once a bulk write's last part is written; else the earliest time from which
    // links may be stored one way, kept across parts (and across a failed bulk write and the next).
    writeStamp: db.prepare(
      `UPDATE derived_stamp SET scored_order = @order, from_seq = @fromSeq, pending_from_seq = @pendingFromSeq,
         parts_open = CASE WHEN @since IS NULL THEN 0 WHEN parts_open = 0 THEN @since ELSE min(parts_open, @since) END WHERE id = 1`,
    ),
    writeFromSeqs: db.prepare('UPDATE derived_stamp SET from_seq = @fromSeq, pending_from_seq = @pendingFromSeq WHERE id = 1'),
    lowerFromSeq: db.prepare('UPDATE derived_stamp SET from_seq = ? WHERE id = 1') as Statement<[number]>,
    stored: { fromSeq: db.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get() as number },
    order: loadScoringOrder(db),
    ...loadUnfoldedCaseEvents(db, caseExists),
    caseExists,
    caseProject: db.prepare('SELECT project_id FROM cases WHERE case_id = ?').pluck() as Statement<[string], string>,
    runs: EventIdRunWriter.forDatabase(db),
  };
  kStatements.set(db, prepared);
  return prepared;
}

/** An accepted async event, waiting for the background scorer. */
export function insertPendingEvent(db: Db, record: PendingEventRecord): number {
  const s = statements(db);
  const seq = Number(s.insertPending.run(record.projectId, record.eventId, record.eventType, record.receivedAt, storedPayload(record.payload)).lastInsertRowid);
  s.runs?.stored(seq);
  undoOnRollback(s.pending.add(record.projectId, seq));
  return seq;
}

/**
 * The pending events a start finds, as [seq, project] pairs, ascending: every one has seq ≥ the
 * stamp's pending_from_seq (which stays at or below the lowest pending one; migrations 22 and 27
 * made it so for those stored before), so the end of the log is read, not all of it. An event that
 * stays pending holds this bound only, not from_seq (migration 27).
 */
export function pendingEventsOfLog(db: Db): Array<[seq: number, projectId: string]> {
  return db.prepare(`SELECT seq, project_id FROM events WHERE seq >= (SELECT pending_from_seq FROM derived_stamp WHERE id = 1) AND state = 'pending' ORDER BY seq`).raw().all() as Array<[number, string]>;
}

function loadPendingSeqs(db: Db): SeqSetsByProject {
  return new SeqSetsByProject(pendingEventsOfLog(db));
}

/**
 * Write command that writes nothing: the pending events' seqs of each environment, ascending, for
 * the background scorers at start — the writer found them in the log when it opened (one pass over
 * the log from pending_from_seq; a second and a third, for each scorer, cost a start as much again).
 */
export function pendingSeqsByEnvironment(db: Db): Record<Environment, number[]> {
  const projectsOf = db.prepare('SELECT project_id FROM projects WHERE environment = ?').pluck();
  const pending = statements(db).pending;
  return { live: pending.valuesOf(projectsOf.all('live') as string[]), sandbox: pending.valuesOf(projectsOf.all('sandbox') as string[]) };
}

/** The pending events of `projectIds`, ascending (an erasure reads their rows). */
export function pendingEventSeqs(db: Db, projectIds: Iterable<string>): number[] {
  return statements(db).pending.valuesOf(projectIds);
}

/** The pending event of `projectId` at row `seq` was erased (its state is 'erased' now, in this transaction). */
export function pendingEventErased(db: Db, projectId: string, seq: number): void {
  undoOnRollback(statements(db).pending.remove(projectId, seq));
}

/** The stamp of the derived rows (migration 013), and the last scored_order given. */
function loadScoringOrder(db: Db): ScoringOrder {
  const stamp = db.prepare('SELECT scored_order, from_seq FROM derived_stamp WHERE id = 1').get() as { scored_order: number; from_seq: number };
  // Every event scored after the stamp has seq ≥ from_seq: the end of the log holds the last one.
  const last = db.prepare('SELECT max(scored_order) FROM events WHERE seq >= ?').pluck().get(stamp.from_seq) as number | null;
  // The events scored after the stamp, whose rows the start replays: until a stamp passes them,
  // from_seq must not (a fold before the start's first bulk write succeeds would have moved it).
  const sinceStamp = new ScoredSinceStamp();
  const scored = db.prepare('SELECT scored_order, seq FROM events WHERE seq >= ? AND scored_order > ? ORDER BY scored_order').raw();
  for (const [order, seq] of scored.iterate(stamp.from_seq, stamp.scored_order) as Iterable<[number, number]>) sinceStamp.scored(order, seq);
  return { last: Math.max(stamp.scored_order, last ?? 0), sinceStamp };
}

/**
 * The cases and case events a stop left unfolded: every event with a case from the stamp's
 * from_seq on (which stays at or below the oldest unfolded one). A case with no row is written
 * from its events (opened by the first, with its project and account); events already on their
 * case's row are skipped when folded; one whose row's list has since moved to case_event_seqs (a
 * crash between the fold and the next stamp) may be listed twice, which readers take once
 * (case-events.ts).
 */
function loadUnfoldedCaseEvents(
  db: Db, caseExists: Statement<[string], number>,
): { unfolded: Map<string, CaseEventsToFold>; unfoldedSeqs: SeqSet; openedByAccount: Map<string, string> } {
  const fromSeq = db.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get() as number;
  const rows = db.prepare(
    'SELECT case_id, seq, risk_score, scored_at, project_id, account_id FROM events WHERE seq >= ? AND case_id IS NOT NULL ORDER BY seq',
  ).raw().all(fromSeq) as Array<[string, number, number, number, string, string | null]>;
  const unfolded = new Map<string, CaseEventsToFold>();
  const openedByAccount = new Map<string, string>();
  for (const [caseId, seq, riskScore, scoredAt, projectId, accountId] of rows) {
    const waiting = unfolded.get(caseId);
    if (waiting !== undefined) {
      joinWaiting(waiting, riskScore, scoredAt, seq);
      // Created when its first event was scored: an async event that joined it keeps an earlier seq.
      if (waiting.opened !== null && scoredAt < waiting.opened.createdAt) waiting.opened = { ...waiting.opened, createdAt: scoredAt };
      continue;
    }
    const written = caseExists.get(caseId) !== undefined;
    unfolded.set(caseId, { riskScore, updatedAt: scoredAt, seqs: [seq], opened: written ? null : { projectId, accountId, createdAt: scoredAt }, since: 0 });
    if (!written && accountId !== null) openedByAccount.set(openKey(projectId, accountId), caseId);
  }
  return { unfolded, unfoldedSeqs: new SeqSet(rows.map((row) => row[1])), openedByAccount };
}

/** The event at row `seq`, scored `riskScore` at `at`, joins the waiting case; returns how to take it out again. */
function joinWaiting(waiting: CaseEventsToFold, riskScore: number, at: number, seq: number): () => void {
  const before = { riskScore: waiting.riskScore, updatedAt: waiting.updatedAt };
  waiting.riskScore = Math.max(waiting.riskScore, riskScore);
  waiting.updatedAt = Math.max(waiting.updatedAt, at);
  waiting.seqs.push(seq);
  return () => {
    waiting.riskScore = before.riskScore;
    waiting.updatedAt = before.updatedAt;
    waiting.seqs.pop();
  };
}

function openKey(projectId: string, accountId: string): string {
  return `${projectId}\u0000${accountId}`;
}

/**
 * A scored event: a new sync event (`pendingSeq` null) or the pending async event at row
 * `pendingSeq` being completed. Rows are addressed by seq: lookups by event id go through memory
 * (event-ids.ts), and the events table has no index on it. The event's transaction writes only
 * what must be found at once: the event, a new account's row and its project (cases, labels and
 * GET /v1/events join them), cases and the webhook message; the rows that follow from it
 * (counts, signals, links) come later with many others (applyDerivedRows).
 */
export function persistScoredEvent(db: Db, record: ScoredEventRecord, pendingSeq: number | null): PersistOutcome {
  const s = statements(db);
  const account = record.account;
  const provisionalAccountId = account?.accountId ?? null;
  const order = s.order.last + 1;
  let seq: number;
  if (pendingSeq !== null) {
    const changed = s.markScored.run(
      provisionalAccountId, record.rulesetVersion, record.decision, record.riskScore, record.result, record.shadow, record.signals, record.scoredAt, order,
      pendingSeq,
    ).changes;
    if (changed === 0) return { kind: 'already_scored' };
    seq = pendingSeq;
    undoOnRollback(s.pending.remove(record.projectId, seq));
    // Pending since before the stamp (set aside, say): from here on it is an event scored after
    // the stamp, which a start replays from from_seq on.
    if (seq < s.stored.fromSeq) {
      s.lowerFromSeq.run(seq);
      keepStoredFromSeq(s, seq);
    }
  } else {
    seq = Number(s.insertScored.run(
      record.projectId, record.eventId, record.eventType, provisionalAccountId, record.receivedAt, storedPayload(record.payload),
      record.rulesetVersion, record.decision, record.riskScore, record.result, record.shadow, record.signals, record.scoredAt, order,
    ).lastInsertRowid);
    s.runs?.stored(seq);
  }
  s.order.last = order;
  s.order.sinceStamp.scored(order, seq);
  let accountId: string | null = null;
  if (account !== null) {
    accountId = account.accountId;
    if (account.isNew) {
      accountId = s.insertAccount.get(accountId, record.tenantId, record.environment, account.externalId, record.scoredAt, record.scoredAt)!.account_id;
      if (accountId !== provisionalAccountId) s.setEventAccount.run(accountId, seq);
    }
    if (account.isNew || account.newProject) s.accountProject.run(accountId, record.projectId, record.scoredAt);
  }
  let openedCase: string | null = null;
  let extendedCase: string | null = null;
  if (record.decision === 'review') {
    const eventCase = openOrExtendCase(s, record, accountId, seq);
    s.setEventCase.run(eventCase.caseId, seq);
    if (eventCase.opened) openedCase = eventCase.caseId;
    else extendedCase = eventCase.caseId;
  }
  const webhookQueued = record.webhookPayload !== null && s.hasWebhook.get(record.projectId) !== undefined;
  if (webhookQueued) {
    // The message names the account as the scorer knew it; stored under another id, it names that.
    const payload = accountId !== provisionalAccountId && accountId !== null && provisionalAccountId !== null
      ? webhookJsonForAccount(record.webhookPayload!, provisionalAccountId, accountId)
      : record.webhookPayload;
    s.insertOutbox.run(newId('msg'), record.projectId, record.eventId, payload, record.scoredAt, record.scoredAt);
  }
  // A pending event has no account yet: a label put on it then named none, and counted for none.
  const labelNamesAccount = pendingSeq !== null && accountId !== null && s.labelAccount.run(accountId, record.projectId, record.eventId).changes > 0;
  return { kind: 'stored', seq, order, accountId, webhookQueued, openedCase, extendedCase, labelNamesAccount };
}

/**
 * Write command: the derived rows of a batch of scored events, and the stamp that says how far
 * they go. The rows come in key order (BatchParts, accounts/derived-rows.ts), so that neighbours
 * share pages; a link's project change comes after the link.
 */
export function applyDerivedRows(db: Db, batch: DerivedRowBatch): void {
  const s = statements(db);
  for (const row of batch.accounts) {
    const seqs = encodeSeqs(row[6]);
    const stored = row[5] < 0 ? s.appendAccountSeqs.get(seqs, row[0]) : s.updateAccount.get(row[1], row[2], row[3], row[4], row[5], seqs, row[0]);
    // A full list leaves the account's row (whose page each batch writes) for a row of its own.
    if (stored !== undefined && stored.length > kOpenSeqsBytes) {
      s.moveAccountSeqs.run(row[0]);
      s.clearAccountSeqs.run(row[0]);
    }
  }
  for (const row of batch.signals) s.upsertSignal.run(...row);
  for (const row of batch.links) s.upsertLink.run(...row);
  for (const row of batch.linkProjects) s.setOtherProjects.run(row[3], row[0], row[1], row[2]);
  // A stamp that rolls back leaves those events counted (a start after it must still replay them).
  undoOnRollback(s.order.sinceStamp.stamped(batch.order));
  const bounds = boundsNow(s);
  s.writeStamp.run({ order: batch.order, ...bounds, since: batch.linksOpenSince ?? null });
  keepStoredFromSeq(s, bounds.fromSeq);
}

/** The stamp's two bounds as the log and the writer's memory stand now. */
function boundsNow(s: Statements): { fromSeq: number; pendingFromSeq: number } {
  const next = (s.lastSeq.get() ?? 0) + 1;
  return { fromSeq: fromSeqNow(s, next), pendingFromSeq: pendingFromSeqNow(s, next) };
}

/**
 * The stamp's from_seq: the lowest seq from which a start reads the log back and an erasure looks
 * for the account's newest events — an event scored after the stamp and not yet in the rows, an
 * event not yet folded into its case, or the next appended (`next`). Not a pending event: those
 * have a bound of their own (migration 27), since one may stay pending for days.
 */
function fromSeqNow(s: Statements, next: number): number {
  let fromSeq = next;
  const scored = s.order.sinceStamp.lowestSeq;
  if (scored !== null && scored < fromSeq) fromSeq = scored;
  const unfolded = s.unfoldedSeqs.lowest();
  if (unfolded !== null && unfolded < fromSeq) fromSeq = unfolded;
  return fromSeq;
}

/** The stamp's pending_from_seq: the lowest pending event, or the next appended (`next`). */
function pendingFromSeqNow(s: Statements, next: number): number {
  const pending = s.pending.lowest();
  return pending !== null && pending < next ? pending : next;
}

/** The stored from_seq is `fromSeq` now, in this transaction. */
function keepStoredFromSeq(s: Statements, fromSeq: number): void {
  const before = s.stored.fromSeq;
  s.stored.fromSeq = fromSeq;
  undoOnRollback(() => {
    s.stored.fromSeq = before;
  });
}

/** A case waiting to be written in bulk, as the writer holds it: what it opened with (null: its row exists), and the events not on its row yet. */
export type WaitingCase = readonly [
  caseId: string,
  opened: { readonly projectId: string; readonly accountId: string | null; readonly createdAt: number } | null,
  riskScore: number,
  updatedAt: number,
  seqs: readonly number[],
];

/**
 * Write command that writes nothing: the cases and case events the writer holds to be written in
 * bulk. A start whose first bulk write of cases failed shows them from the HTTP thread's memory
 * (UnfoldedCases), as it shows those of events scored since.
 */
export function waitingCases(db: Db): WaitingCase[] {
  const waiting: WaitingCase[] = [];
  for (const [caseId, entry] of statements(db).unfolded) {
    const opened = entry.opened === null ? null : { projectId: entry.opened.projectId, accountId: entry.opened.accountId, createdAt: entry.opened.createdAt };
    waiting.push([caseId, opened, entry.riskScore, entry.updatedAt, [...entry.seqs]]);
  }
  return waiting;
}

/** Cases folded per foldCaseEvents while serving: a few milliseconds of the writer, as a part of derived rows. */
export const kFoldCases = 250;

/**
 * Write command: the cases opened, and the events that joined open cases since their rows were
 * last written if the first of them has waited `waitedMs`, folded in (at most `limit` cases, in
 * the order they began to wait, written in key order so that neighbours share pages): one write
 * of a case's row for all of its new events, where each event rewrote the row at its random key,
 * and new cases appended together, where each commit rewrote the last pages of cases and
 * cases_by_project (docs/pipeline.md, "Cases"). The stamp's from_seq moves up past them.
 */
export function foldCaseEvents(db: Db, request: CaseFoldRequest): CaseFolds {
  const s = statements(db);
  const dueBefore = Date.now() - request.waitedMs;
  const caseIds: string[] = [];
  let due = false;
  // Every waiting case looked at: ~120 µs at 20,000 (the harsh mix's peak), a few commands per flush.
  for (const [caseId, waiting] of s.unfolded) {
    if (request.waitedMs > 0 && waiting.opened === null && waiting.since > dueBefore) continue;
    if (caseIds.length === request.limit) {
      due = true;
      break;
    }
    caseIds.push(caseId);
  }
  caseIds.sort();
  const folded: FoldedCase[] = [];
  const failed: Array<[string, string]> = [];
  for (const caseId of caseIds) {
    try {
      folded.push([caseId, foldCase(s, caseId)]);
    } catch (error) {
      // A statement that fails undoes only itself; the others go on, and the case waits again
      // (foldCase put it back last), reported. Not a failure of the whole transaction: then
      // SQLite has rolled it back, and so does the writer.
      if (!db.inTransaction) throw error;
      failed.push([caseId, (error as Error).message]);
    }
  }
  if (folded.length > 0) {
    const bounds = boundsNow(s);
    s.writeFromSeqs.run(bounds);
    keepStoredFromSeq(s, bounds.fromSeq);
  }
  return { folded, failed, waiting: s.unfolded.size, due };
}

function openedKeyOf(waiting: CaseEventsToFold): string | null {
  const opened = waiting.opened;
  return opened === null || opened.accountId === null ? null : openKey(opened.projectId, opened.accountId);
}

/**
 * The case written now if new, and its events not yet on its row folded in (a change to the case
 * must see all of them: labels, changeCase in cases/cases-service.ts). Only a case of `projectId`:
 * a request naming another project's case is refused, and a refused request writes nothing.
 * Returns whether anything was written.
 */
export function foldEventsOfCase(db: Db, projectId: string, caseId: string): boolean {
  const s = statements(db);
  const waiting = s.unfolded.get(caseId);
  if (waiting === undefined) return false;
  const owner = waiting.opened !== null ? waiting.opened.projectId : s.caseProject.get(caseId);
  if (owner !== projectId) return false;
  foldCase(s, caseId);
  return true;
}

/**
 * The open cases of the account whose rows are not written yet, written now (a reopened case must
 * find them; an erasure unlinks them). Returns their ids.
 */
export function writeOpenedCasesOf(db: Db, accountId: string): string[] {
  const s = statements(db);
  const written: string[] = [];
  for (const [caseId, waiting] of s.unfolded) if (waiting.opened?.accountId === accountId) written.push(caseId);
  for (const caseId of written) foldCase(s, caseId);
  return written;
}

/**
 * Takes the case out of memory and writes it; if a statement fails, or the transaction rolls
 * back, the case waits again (behind the others, so that it holds none back).
 */
function foldCase(s: Statements, caseId: string): readonly number[] {
  const waiting = s.unfolded.get(caseId)!;
  const key = openedKeyOf(waiting);
  const openFor = key !== null && s.openedByAccount.get(key) === caseId;
  s.unfolded.delete(caseId);
  const seqsBack = waiting.seqs.map((seq) => s.unfoldedSeqs.remove(seq));
  if (openFor) s.openedByAccount.delete(key!);
  // Once: a failed statement puts the case back, and a rollback after it must not again.
  let back = false;
  const putBack = (): void => {
    if (back) return;
    back = true;
    s.unfolded.set(caseId, waiting);
    for (const undo of seqsBack) undo();
    if (openFor) s.openedByAccount.set(key!, caseId);
  };
  undoOnRollback(putBack);
  try {
    return writeCase(s, caseId, waiting);
  } catch (error) {
    putBack();
    throw error;
  }
}

/** The case's row: inserted with its events if new, else its new events appended (those not listed yet). */
function writeCase(s: Statements, caseId: string, waiting: CaseEventsToFold): readonly number[] {
  const opened = waiting.opened;
  if (opened !== null && s.caseExists.get(caseId) === undefined) {
    const seqs = encodeSeqs(waiting.seqs);
    s.insertCase.run(caseId, opened.projectId, opened.accountId, 'review', waiting.riskScore, opened.createdAt, waiting.updatedAt, seqs);
    if (seqs.length > kOpenSeqsBytes) {
      s.moveCaseSeqs.run(caseId);
      s.clearCaseSeqs.run(caseId);
    }
    return waiting.seqs;
  }
  const listed = s.caseSeqs.get(caseId);
  if (listed === undefined) return waiting.seqs;
  // An event already listed (loaded again at start from the log) is not listed twice.
  const already = new Set(decodeSeqs(listed));
  const seqs = waiting.seqs.filter((seq) => !already.has(seq));
  if (seqs.length === 0) return waiting.seqs;
  const stored = s.foldCase.get(waiting.riskScore, waiting.updatedAt, encodeSeqs(seqs), caseId)!;
  // A full list leaves the case's row for a row of its own.
  if (stored.length > kOpenSeqsBytes) {
    s.moveCaseSeqs.run(caseId);
    s.clearCaseSeqs.run(caseId);
  }
  return waiting.seqs;
}

/**
 * The case the review decision `record` (stored at row `seq`) goes to: its account's open case,
 * or a new one. Neither case's row is written now: the event waits to be folded in
 * (foldCaseEvents) — a new case with it — and the event's case_id says where it goes.
 */
function openOrExtendCase(s: Statements, record: ScoredEventRecord, accountId: string | null, seq: number): { caseId: string; opened: boolean } {
  const key = accountId === null ? null : openKey(record.projectId, accountId);
  const caseId = key === null ? undefined : s.openedByAccount.get(key) ?? s.openCase.get(record.projectId, accountId!)?.case_id;
  if (caseId === undefined) {
    const newCaseId = newSortableId('case');
    s.unfolded.set(newCaseId, {
      riskScore: record.riskScore, updatedAt: record.scoredAt, seqs: [seq], opened: { projectId: record.projectId, accountId, createdAt: record.scoredAt }, since: record.scoredAt,
    });
    undoOnRollback(s.unfoldedSeqs.add(seq));
    if (key !== null) s.openedByAccount.set(key, newCaseId);
    undoOnRollback(() => {
      s.unfolded.delete(newCaseId);
      if (key !== null) s.openedByAccount.delete(key);
    });
    return { caseId: newCaseId, opened: true };
  }
  const waiting = s.unfolded.get(caseId);
  if (waiting === undefined) {
    s.unfolded.set(caseId, { riskScore: record.riskScore, updatedAt: record.scoredAt, seqs: [seq], opened: null, since: record.scoredAt });
    undoOnRollback(() => s.unfolded.delete(caseId));
  } else {
    undoOnRollback(joinWaiting(waiting, record.riskScore, record.scoredAt, seq));
  }
  undoOnRollback(s.unfoldedSeqs.add(seq));
  return { caseId, opened: false };
}

