// Webhook deliveries for operators and API callers: list a project's messages (failed and
// abandoned ones first of all) and ask for one to be delivered again. GET
// /v1/webhooks/deliveries and POST /v1/webhooks/deliveries/{message_id}/redeliver (docs/webhooks.md).
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import { decodeCursor, encodeCursor, parsePageSize, unknownOrRepeatedParameter } from '../shared/query.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { findWebhook, kDeliveryFilters, listDeliveries, type Delivery, type DeliveryFilter } from './webhook-store.js';

export interface DeliveryQuery {
  readonly status: DeliveryFilter | null;
  readonly before: number | null;
  readonly limit: number;
}

type Checked<T> = { ok: true; value: T } | { ok: false; error: ApiError };

const kParameters = new Set(['status', 'limit', 'cursor']);

/** Cursors of the webhook deliveries of `projectId`. */
function deliveryCursorScope(projectId: string): string {
  return `deliveries ${projectId}`;
}

/** The query string of GET /v1/webhooks/deliveries of `projectId`: status, limit, cursor. Pure. */
export function parseDeliveryQuery(query: string, projectId: string): Checked<DeliveryQuery> {
  const params = new URLSearchParams(query);
  const unknown = unknownOrRepeatedParameter(params, kParameters);
  if (unknown !== null) return { ok: false, error: unknown };
  const status = params.get('status');
  if (status !== null && !(kDeliveryFilters as readonly string[]).includes(status)) {
    return { ok: false, error: apiError('VALIDATION_ERROR', `status must be one of ${kDeliveryFilters.join(', ')}.`, 'status') };
  }
  const limit = parsePageSize(params.get('limit'));
  if (typeof limit !== 'number') return { ok: false, error: limit };
  const cursor = params.get('cursor');
  let before: number | null = null;
  if (cursor !== null) {
    const position = decodeCursor(deliveryCursorScope(projectId), cursor, 1);
    if (position === null || !Number.isSafeInteger(position[0]) || (position[0] as number) < 1) {
      return { ok: false, error: apiError('VALIDATION_ERROR', 'cursor is not a cursor this API returned.', 'cursor') };
    }
    before = position[0] as number;
  }
  return { ok: true, value: { status: status as DeliveryFilter | null, before, limit } };
}

export class DeliveriesService {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #poke: () => void;
  readonly #now: () => number;

  /** `poke`: tells the deliverer that a message became due. */
  constructor(readDb: Db, writer: AppWriter, poke: () => void, now: () => number) {
    this.#readDb = readDb;
    this.#writer = writer;
    this.#poke = poke;
    this.#now = now;
  }

  list(projectId: string, query: DeliveryQuery): { deliveries: Delivery[]; next_cursor: string | null } {
    const page = listDeliveries(this.#readDb, projectId, query.status, query.before, query.limit);
    return { deliveries: page.deliveries, next_cursor: page.next === null ? null : encodeCursor(deliveryCursorScope(projectId), [page.next]) };
  }

  async redeliver(projectId: string, messageId: string, actor: string): Promise<Checked<Delivery>> {
    if (findWebhook(this.#readDb, projectId) === null) {
      return { ok: false, error: apiError('NOT_FOUND', 'This project has no webhook to deliver to; set one with fraud-scorer webhook set.') };
    }
    let delivery: Delivery | null;
    try {
      delivery = await this.#writer.call('redeliver', projectId, messageId, this.#now(), actor);
    } catch (error) {
      return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The redelivery could not be recorded; nothing was changed. Retry the request.'), error) };
    }
    if (delivery === null) return { ok: false, error: apiError('NOT_FOUND', 'No webhook message with this id in this project.', 'message_id') };
    this.#poke();
    return { ok: true, value: delivery };
  }
}
