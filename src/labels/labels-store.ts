// Labels of events in SQLite (schema: migrations/009-lists-labels-audit.ts; docs/events.md
// "Labels"): what an event turned out to be. A label never touches the event's stored result;
// rules read an account's count of fraud labels (account.labelled_fraud).
//
// Two sources: PUT /v1/events/{event_id}/label (source 'api'), and a case resolved as fraud or
// legitimate, which labels the case's events (source 'case:<case_id>', reason manual_review). A
// label set through the API is the analyst's word on that one event (a chargeback, say): a case
// resolution never overwrites it. Reopening a case, or resolving it otherwise, takes back or
// replaces the labels that case gave.
import type { Statement } from 'better-sqlite3';
import { recordAudit } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';
import { caseEventIds } from '../cases/case-events.js';

export const kLabels = ['fraud', 'legitimate'] as const;
export type Label = (typeof kLabels)[number];
export const kLabelReasons = ['chargeback', 'manual_review', 'customer_report', 'other'] as const;
export type LabelReason = (typeof kLabelReasons)[number];

/** A label's source when a case's resolution gave it: 'case:<case_id>'. */
const kCaseSourcePrefix = 'case:';

function caseSource(caseId: string): string {
  return `${kCaseSourcePrefix}${caseId}`;
}

export interface LabelChange {
  readonly label: Label;
  readonly reason: LabelReason;
  readonly note: string | null;
}

export interface LabelRecord {
  readonly label: Label;
  readonly reason: LabelReason;
  readonly note: string | null;
  /** 'api', or 'case:<case_id>'. */
  readonly source: string;
  readonly labelled_at: string;
  readonly labelled_by: string;
}

interface LabelRow {
  label: Label;
  reason: LabelReason;
  note: string | null;
  source: string;
  labelled_at: number;
  labelled_by: string;
}

const kRead = new WeakMap<Db, Statement<[string, string], LabelRow>>();

export function readLabel(db: Db, projectId: string, eventId: string): LabelRecord | null {
  let read = kRead.get(db);
  if (read === undefined) {
    read = db.prepare('SELECT label, reason, note, source, labelled_at, labelled_by FROM event_labels WHERE project_id = ? AND event_id = ?');
    kRead.set(db, read);
  }
  const row = read.get(projectId, eventId);
  return row === undefined ? null : { ...row, labelled_at: new Date(row.labelled_at).toISOString() };
}

function upsert(db: Db, projectId: string, eventId: string, accountId: string | null, change: LabelChange, source: string, actor: string, now: number): void {
  db.prepare(
    `INSERT INTO event_labels (project_id, event_id, account_id, label, reason, note, source, labelled_at, labelled_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, event_id) DO UPDATE SET account_id = excluded.account_id, label = excluded.label, reason = excluded.reason,
       note = excluded.note, source = excluded.source, labelled_at = excluded.labelled_at, labelled_by = excluded.labelled_by`,
  ).run(projectId, eventId, accountId, change.label, change.reason, change.note, source, now, actor);
}

interface StoredEvent {
  readonly account_id: string | null;
  readonly case_id: string | null;
}

/** The event at row `seq` (found by the caller through the event reader), if it is `eventId` of the project. */
function storedEventAt(db: Db, projectId: string, eventId: string, seq: number): StoredEvent | null {
  const event = db.prepare('SELECT project_id, event_id, account_id, case_id FROM events WHERE seq = ?').get(seq) as
    | (StoredEvent & { project_id: string; event_id: string })
    | undefined;
  return event === undefined || event.project_id !== projectId || event.event_id !== eventId ? null : event;
}

/** The label a case's resolution gives each of its events without one of their own. */
function resolutionLabel(resolution: Label): LabelChange {
  return { label: resolution, reason: 'manual_review', note: null };
}

export type PutLabelOutcome = { readonly kind: 'labelled'; readonly record: LabelRecord } | { readonly kind: 'not_found' };

/**
 * Write command: sets the label of the stored event of the project at row `seq` (found by the
 * caller through the event reader: the events table is read by rowid, never searched by event id),
 * in any state, with its audit record.
 */
export function putLabel(db: Db, projectId: string, eventId: string, seq: number, change: LabelChange, actor: string, now: number): PutLabelOutcome {
  const event = storedEventAt(db, projectId, eventId, seq);
  if (event === null) return { kind: 'not_found' };
  const previous = readLabel(db, projectId, eventId);
  // The same label again (a retry whose answer was lost): nothing changes, nothing is audited.
  if (previous !== null && previous.source === 'api' && previous.label === change.label && previous.reason === change.reason && previous.note === change.note) {
    return { kind: 'labelled', record: previous };
  }
  upsert(db, projectId, eventId, event.account_id, change, 'api', actor, now);
  recordAudit(db, {
    projectId, actor, action: 'event.label', target: `event:${eventId}`,
    // The note is the analyst's free text: it stays with the label, not in the trail.
    summary: { label: change.label, reason: change.reason, note: change.note !== null, previous: previous === null ? null : { label: previous.label, reason: previous.reason, source: previous.source } },
    at: now,
  });
  return { kind: 'labelled', record: readLabel(db, projectId, eventId)! };
}

export type RemoveLabelOutcome =
  | { readonly kind: 'removed'; readonly removed: boolean; readonly record: LabelRecord | null }
  | { readonly kind: 'case_label'; readonly caseId: string }
  | { readonly kind: 'not_found' };

/**
 * Write command: takes back the label set through the API on the stored event of the project at
 * row `seq`, with its audit record. If the event's case is resolved, the case's label takes its
 * place, as if the API label had never been set. A label a case gave is not removed here (the
 * case's resolution is what to change). An event without a label: nothing changes, nothing is
 * audited (a retry whose answer was lost).
 */
export function removeLabel(db: Db, projectId: string, eventId: string, seq: number, actor: string, now: number): RemoveLabelOutcome {
  const event = storedEventAt(db, projectId, eventId, seq);
  if (event === null) return { kind: 'not_found' };
  const previous = readLabel(db, projectId, eventId);
  if (previous === null) return { kind: 'removed', removed: false, record: null };
  if (previous.source !== 'api') return { kind: 'case_label', caseId: previous.source.slice(kCaseSourcePrefix.length) };
  db.prepare('DELETE FROM event_labels WHERE project_id = ? AND event_id = ?').run(projectId, eventId);
  // A resolved case has its row (changeCase wrote it); an open one, written or not, gives no label.
  const resolution = event.case_id === null
    ? null
    : ((db.prepare('SELECT resolution FROM cases WHERE project_id = ? AND case_id = ?').pluck().get(projectId, event.case_id) as Label | null | undefined) ?? null);
  if (resolution !== null) upsert(db, projectId, eventId, event.account_id, resolutionLabel(resolution), caseSource(event.case_id!), actor, now);
  recordAudit(db, {
    projectId, actor, action: 'event.unlabel', target: `event:${eventId}`,
    summary: { previous: { label: previous.label, reason: previous.reason }, case_label: resolution === null ? null : { label: resolution, source: caseSource(event.case_id!) } },
    at: now,
  });
  return { kind: 'removed', removed: true, record: readLabel(db, projectId, eventId) };
}

/**
 * Inside changeCase: the labels a case's resolution gives its events. The labels this case gave
 * before are taken back; with a resolution, every event of the case without a label of its own
 * (set through the API) is labelled with it, reason manual_review, for the case's account (a case
 * is one account's, or one event's without an account). Returns the events labelled, and those
 * whose label from this case was taken back (for the audit trail).
 */
export function labelCaseEvents(db: Db, projectId: string, caseId: string, accountId: string | null, resolution: Label | null, actor: string, now: number): { labelled: number; unlabelled: number } {
  const source = caseSource(caseId);
  const caseEvents = caseEventIds(db, caseId);
  const taken = db.prepare('DELETE FROM event_labels WHERE project_id = ? AND source = ? AND event_id = ?');
  let unlabelled = 0;
  for (const eventId of caseEvents) unlabelled += taken.run(projectId, source, eventId).changes;
  if (resolution === null) return { labelled: 0, unlabelled };
  const labelled = db.prepare('SELECT 1 FROM event_labels WHERE project_id = ? AND event_id = ?').pluck();
  const events = caseEvents.filter((eventId) => labelled.get(projectId, eventId) === undefined);
  for (const eventId of events) upsert(db, projectId, eventId, accountId, resolutionLabel(resolution), source, actor, now);
  return { labelled: events.length, unlabelled };
}
