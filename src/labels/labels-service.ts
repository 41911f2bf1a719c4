// PUT and DELETE /v1/events/{event_id}/label and GET /v1/events/{event_id} (DESIGN §8;
// docs/events.md, "Labels" and "The event behind a case"): label an event or take its label back,
// and show an analyst what was stored of it — its input (after an erasure, what is left), its
// result, its label, its account and cases.
//
// An event is found, and its result read, only through the scoring pipeline's EventReader — the
// reader GET /v1/scores/{event_id} answers from: the stored form of results and the way events
// are looked up by id belong to the pipeline. The result is embedded as the reader gives it; the
// rest of the row is read by its rowid.
import type { Statement } from 'better-sqlite3';
import type { EventReader } from '../scoring/event-store.js';
import { externalAccountIdOf } from '../signals/identifiers.js';
import type { EventInput } from '../validation/event-input.js';
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { readLabel, type LabelChange, type LabelRecord } from './labels-store.js';

export type LabelAnswer = { readonly ok: true; readonly body: object } | { readonly ok: false; readonly error: ApiError };
export type EventAnswer = { readonly ok: true; readonly json: string } | { readonly ok: false; readonly error: ApiError };

export interface LabelsServiceOptions {
  readonly readDb: Db;
  readonly writer: AppWriter;
  /** The reader of EventService (and so of GET /v1/scores/{event_id}). */
  readonly reader: EventReader;
  readonly now: () => number;
  /** A label of an event of this account (acc_ id) changed: account.labelled_fraud is read again. */
  readonly onAccountChanged: (accountId: string) => void;
}

interface EventRow {
  event_type: string;
  account_id: string | null;
  case_id: string | null;
  external_account_id: string | null;
}

function notFound(): ApiError {
  return apiError('NOT_FOUND', 'No event with this event_id in this project.', 'event_id');
}

function labelView(eventId: string, label: LabelRecord | null): Record<string, unknown> | null {
  return label === null ? null : { event_id: eventId, ...label };
}

export class LabelsService {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #reader: EventReader;
  readonly #now: () => number;
  readonly #onAccountChanged: (accountId: string) => void;
  readonly #event: Statement<[number], EventRow>;

  constructor(options: LabelsServiceOptions) {
    this.#readDb = options.readDb;
    this.#writer = options.writer;
    this.#reader = options.reader;
    this.#now = options.now;
    this.#onAccountChanged = options.onAccountChanged;
    this.#event = options.readDb.prepare(
      'SELECT e.event_type, e.account_id, e.case_id, a.external_account_id FROM events e LEFT JOIN accounts a ON a.account_id = e.account_id WHERE e.seq = ?',
    );
  }

  async label(projectId: string, rawEventId: string, change: LabelChange, actor: string): Promise<LabelAnswer> {
    const eventId = rawEventId.toLowerCase();
    const stored = this.#reader.find(projectId, eventId);
    if (stored === null) return { ok: false, error: notFound() };
    let outcome;
    try {
      outcome = await this.#writer.call('putLabel', projectId, eventId, stored.seq, change, actor, this.#now());
    } catch (error) {
      return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The label could not be stored; nothing was changed. Retry the request.'), error) };
    }
    if (outcome.kind === 'not_found') return { ok: false, error: notFound() };
    this.#labelChanged(stored.seq);
    return { ok: true, body: labelView(eventId, outcome.record)! };
  }

  /** DELETE /v1/events/{event_id}/label: the API label taken back; the answer says what label the event has now. */
  async unlabel(projectId: string, rawEventId: string, actor: string): Promise<LabelAnswer> {
    const eventId = rawEventId.toLowerCase();
    const stored = this.#reader.find(projectId, eventId);
    if (stored === null) return { ok: false, error: notFound() };
    let outcome;
    try {
      outcome = await this.#writer.call('removeLabel', projectId, eventId, stored.seq, actor, this.#now());
    } catch (error) {
      return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The label could not be removed; nothing was changed. Retry the request.'), error) };
    }
    if (outcome.kind === 'not_found') return { ok: false, error: notFound() };
    if (outcome.kind === 'case_label') {
      return {
        ok: false,
        error: apiError('VALIDATION_ERROR', `The event's label is the resolution of case ${outcome.caseId}: reopen the case or resolve it otherwise (PATCH /v1/cases/${outcome.caseId}), or PUT a label of the event's own.`, 'event_id'),
      };
    }
    if (outcome.removed) this.#labelChanged(stored.seq);
    return { ok: true, body: { event_id: eventId, removed: outcome.removed, label: labelView(eventId, outcome.record) } };
  }

  /** The label of the event at row `seq` changed: its account's fraud labels are read again. */
  #labelChanged(seq: number): void {
    const accountId = this.#event.get(seq)?.account_id ?? null;
    if (accountId !== null) this.#onAccountChanged(accountId);
  }

  /** The answer's data as JSON text (the result embedded as the event reader gives it). */
  read(projectId: string, rawEventId: string): EventAnswer {
    const eventId = rawEventId.toLowerCase();
    // One read transaction: the event, its result, label and cases as of one moment.
    return this.#readDb.transaction((): EventAnswer => {
      const stored = this.#reader.find(projectId, eventId);
      const row = stored === null ? undefined : this.#event.get(stored.seq);
      if (stored === null || row === undefined) return { ok: false, error: notFound() };
      let input: unknown;
      try {
        input = JSON.parse(stored.payload);
      } catch {
        input = null;
      }
      const head = {
        event_id: eventId,
        event_type: row.event_type,
        state: stored.state,
        received_at: new Date(stored.received_at).toISOString(),
        account_public_id: row.account_id,
        // A pending event has no account yet (it joins one when scored): the id it was sent with.
        // Erasure takes the id out of the stored input too.
        external_account_id: row.external_account_id ?? sentExternalId(input),
        // An event is scored once, so it is in at most one case (events.case_id, migration 14).
        case_ids: row.case_id === null ? [] : [row.case_id],
        label: labelView(eventId, readLabel(this.#readDb, projectId, eventId)),
        input,
      };
      const json = JSON.stringify(head);
      const result = stored.state === 'scored' && stored.result !== null ? stored.result : 'null';
      return { ok: true, json: `${json.slice(0, -1)},"result":${result}}` };
    })();
  }
}

/** The external account id an event body names, if it is an object that names one. */
function sentExternalId(input: unknown): string | null {
  if (typeof input !== 'object' || input === null) return null;
  return externalAccountIdOf(input as EventInput);
}
