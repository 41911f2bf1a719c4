// PUT /v1/events/{event_id}/label and GET /v1/events/{event_id} (DESIGN §8; docs/events.md,
// "Labels" and "The event behind a case"): label an event, and show an analyst what was stored of
// it — its input (after an erasure, what is left), its result, its label, its account and cases.
//
// The result is read only through EventService.read, as GET /v1/scores/{event_id} reads it: its
// stored form belongs to the scoring pipeline, and is embedded here as that function gives it.
import type { Statement } from 'better-sqlite3';
import type { EventService } from '../scoring/event-service.js';
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { readLabel, type LabelChange, type LabelRecord } from './labels-store.js';

export type LabelAnswer = { readonly ok: true; readonly body: object } | { readonly ok: false; readonly error: ApiError };
export type EventAnswer = { readonly ok: true; readonly json: string } | { readonly ok: false; readonly error: ApiError };

export interface LabelsServiceOptions {
  readonly readDb: Db;
  readonly writer: AppWriter;
  readonly events: EventService;
  readonly now: () => number;
}

interface EventRow {
  event_type: string;
  account_id: string | null;
  external_account_id: string | null;
  payload: string;
  received_at: number;
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
  readonly #events: EventService;
  readonly #now: () => number;
  readonly #event: Statement<[string, string], EventRow>;
  readonly #cases: Statement<[string, string], string>;

  constructor(options: LabelsServiceOptions) {
    this.#readDb = options.readDb;
    this.#writer = options.writer;
    this.#events = options.events;
    this.#now = options.now;
    this.#event = options.readDb.prepare(
      `SELECT e.event_type, e.account_id, a.external_account_id, e.payload, e.received_at
       FROM events e LEFT JOIN accounts a ON a.account_id = e.account_id WHERE e.project_id = ? AND e.event_id = ?`,
    );
    this.#cases = options.readDb.prepare(
      'SELECT ce.case_id FROM case_events ce JOIN cases c ON c.case_id = ce.case_id WHERE c.project_id = ? AND ce.event_id = ? ORDER BY ce.case_id',
    ).pluck() as unknown as Statement<[string, string], string>;
  }

  async label(projectId: string, rawEventId: string, change: LabelChange, actor: string): Promise<LabelAnswer> {
    const eventId = rawEventId.toLowerCase();
    let outcome;
    try {
      outcome = await this.#writer.call('putLabel', projectId, eventId, change, actor, this.#now());
    } catch (error) {
      return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The label could not be stored; nothing was changed. Retry the request.'), error) };
    }
    if (outcome.kind === 'not_found') return { ok: false, error: notFound() };
    return { ok: true, body: labelView(eventId, outcome.record)! };
  }

  /** The answer's data as JSON text (the result embedded as EventService.read gives it). */
  read(projectId: string, rawEventId: string): EventAnswer {
    const eventId = rawEventId.toLowerCase();
    // One read transaction: the event, its result, label and cases as of one moment.
    return this.#readDb.transaction((): EventAnswer => {
      const stored = this.#events.read(projectId, eventId);
      const row = this.#event.get(projectId, eventId);
      if (stored === null || row === undefined) return { ok: false, error: notFound() };
      let input: unknown;
      try {
        input = JSON.parse(row.payload);
      } catch {
        input = null;
      }
      const state = stored.kind === 'stored' ? 'scored' : (stored.body as { state: string }).state;
      const head = {
        event_id: eventId,
        event_type: row.event_type,
        state,
        received_at: new Date(row.received_at).toISOString(),
        account_public_id: row.account_id,
        external_account_id: row.external_account_id,
        case_ids: this.#cases.all(projectId, eventId),
        label: labelView(eventId, readLabel(this.#readDb, projectId, eventId)),
        input,
      };
      const json = JSON.stringify(head);
      return { ok: true, json: `${json.slice(0, -1)},"result":${stored.kind === 'stored' ? stored.json : 'null'}}` };
    })();
  }
}
