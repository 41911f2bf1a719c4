// Per-project webhook configuration and the delivery outbox (schema: migrations/003-events.ts,
// 008-operations.ts).
import type { Statement } from 'better-sqlite3';
import { recordAudit } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';

export interface WebhookConfig {
  readonly project_id: string;
  readonly url: string;
  readonly secret: string;
  /** The secret replaced by the last rotation, still signing until previous_secret_until. */
  readonly previous_secret: string | null;
  readonly previous_secret_until: number | null;
  readonly created_at: number;
  readonly updated_at: number;
}

const kConfigColumns = 'project_id, url, secret, previous_secret, previous_secret_until, created_at, updated_at';

// The changes below run with their audit record in one transaction, taken IMMEDIATE: the command
// line calls them while a server writes, and a transaction that starts by reading and then writes
// cannot wait for the server's write lock (SQLite answers SQLITE_BUSY at once), where one that takes
// the lock first waits up to the busy timeout. Inside the writer's own transaction (redeliver) they
// are a savepoint.

/**
 * The part of a webhook URL the audit trail may hold: its origin. A path or query may carry a
 * token of the receiver's, which the trail must not keep.
 */
function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** Sets the URL and the secret; the new secret alone signs from now on (no overlap). `actor`: for the audit trail. */
export function setWebhook(db: Db, projectId: string, url: string, secret: string, now: number, actor: string): WebhookConfig {
  return db.transaction(() => {
    const before = findWebhook(db, projectId);
    db.prepare(
      `INSERT INTO webhooks (project_id, url, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (project_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, updated_at = excluded.updated_at,
         previous_secret = NULL, previous_secret_until = NULL`,
    ).run(projectId, url, secret, now, now);
    recordAudit(db, {
      projectId, actor, action: 'webhook.set', target: 'webhook',
      summary: { url_origin: urlOrigin(url), url_changed: before === null || before.url !== url, secret_replaced: true, first: before === null },
      at: now,
    });
    return findWebhook(db, projectId)!;
  }).immediate();
}

/**
 * Replaces the secret. The old one goes on signing beside the new one for `overlapMs` (0: not at
 * all), so receivers can switch without dropping a message. A secret that was still overlapping
 * from an earlier rotation stops signing now. null when the project has no webhook.
 */
export function rotateWebhookSecret(db: Db, projectId: string, secret: string, overlapMs: number, now: number, actor: string): WebhookConfig | null {
  return db.transaction(() => {
    const changed = db.prepare(
      `UPDATE webhooks SET previous_secret = CASE WHEN ? > 0 THEN secret END, previous_secret_until = CASE WHEN ? > 0 THEN ? END,
         secret = ?, updated_at = ? WHERE project_id = ?`,
    ).run(overlapMs, overlapMs, now + overlapMs, secret, now, projectId).changes;
    if (changed === 0) return null;
    recordAudit(db, { projectId, actor, action: 'webhook.rotate_secret', target: 'webhook', summary: { overlap_seconds: overlapMs / 1000 }, at: now });
    return findWebhook(db, projectId);
  }).immediate();
}

export function findWebhook(db: Db, projectId: string): WebhookConfig | null {
  return (db.prepare(`SELECT ${kConfigColumns} FROM webhooks WHERE project_id = ?`).get(projectId) as WebhookConfig | undefined) ?? null;
}

/** The last error of a message whose project has no webhook (removed): nowhere to send it. */
export const kNoWebhook = 'the project has no webhook any more';

export function removeWebhook(db: Db, projectId: string, now: number, actor: string): boolean {
  return db.transaction(() => {
    const removed = db.prepare('DELETE FROM webhooks WHERE project_id = ?').run(projectId).changes > 0;
    if (!removed) return false;
    // Nowhere to send them: its queued messages end here (redeliverable once a webhook is set again).
    const abandoned = db.prepare(
      'UPDATE webhook_outbox SET abandoned_at = ?, last_error = ? WHERE project_id = ? AND delivered_at IS NULL AND abandoned_at IS NULL',
    ).run(now, kNoWebhook, projectId).changes;
    recordAudit(db, { projectId, actor, action: 'webhook.remove', target: 'webhook', summary: { abandoned }, at: now });
    return true;
  }).immediate();
}

export interface OutboxMessage {
  readonly seq: number;
  readonly message_id: string;
  readonly project_id: string;
  readonly payload: string;
  readonly created_at: number;
  /** Start of the retry window: the decision, or the last redelivery request. */
  readonly retry_from: number;
  readonly attempts: number;
  /** Attempts since `retry_from`: what the backoff counts (a redelivery starts it over). */
  readonly window_attempts: number;
}

const kDueMessages = new WeakMap<Db, Statement<[string, number, number], OutboxMessage>>();

/**
 * The project's messages due by `now`, oldest due first (the due index leads with the project).
 * Prepared once per connection: the deliverer asks often.
 */
export function dueMessages(db: Db, projectId: string, now: number, limit: number): OutboxMessage[] {
  let statement = kDueMessages.get(db);
  if (statement === undefined) {
    statement = db.prepare(
      `SELECT seq, message_id, project_id, payload, created_at, coalesce(retry_from, created_at) AS retry_from, attempts, window_attempts FROM webhook_outbox
       WHERE project_id = ? AND delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?`,
    ) as Statement<[string, number, number], OutboxMessage>;
    kDueMessages.set(db, statement);
  }
  return statement.all(projectId, now, limit);
}

// An attempt's outcome is written only if the message is still in the retry window the attempt
// was made in (`retryFrom`, as the deliverer read it). A redelivery asked for while the attempt was
// under way opened a new window and made the message due now: the outcome must not undo that (a
// failure would set it back by the backoff, or abandon it at the end of the old window); it is
// only counted, and the message is sent again, as the redelivery said.
const kInWindow = 'WHERE seq = ? AND coalesce(retry_from, created_at) = ?';

/** The receiver answered 2xx: delivered, even if its webhook was removed while it was being sent. */
export function markDelivered(db: Db, seq: number, retryFrom: number, now: number): void {
  const written = db.prepare(`UPDATE webhook_outbox SET delivered_at = ?, abandoned_at = NULL, attempts = attempts + 1, window_attempts = window_attempts + 1, last_error = NULL ${kInWindow}`).run(now, seq, retryFrom).changes;
  if (written === 0) countAttempt(db, seq, null);
}

/** A failed attempt: due again at `nextAttemptAt`, or abandoned (null). */
export function markFailed(db: Db, seq: number, retryFrom: number, error: string, nextAttemptAt: number | null, now: number): void {
  const written = nextAttemptAt === null
    ? db.prepare(`UPDATE webhook_outbox SET attempts = attempts + 1, window_attempts = window_attempts + 1, last_error = ?, abandoned_at = ? ${kInWindow} AND abandoned_at IS NULL`).run(error, now, seq, retryFrom).changes
    : db.prepare(`UPDATE webhook_outbox SET attempts = attempts + 1, window_attempts = window_attempts + 1, last_error = ?, next_attempt_at = ? ${kInWindow} AND abandoned_at IS NULL`).run(error, nextAttemptAt, seq, retryFrom).changes;
  if (written === 0) countAttempt(db, seq, error);
}

/**
 * An attempt made before a redelivery, or while its webhook was removed: counted, and nothing else
 * changed. Its error is kept only on a message still due (an abandoned one keeps why it was).
 */
function countAttempt(db: Db, seq: number, error: string | null): void {
  db.prepare('UPDATE webhook_outbox SET attempts = attempts + 1, last_error = CASE WHEN abandoned_at IS NULL THEN ? ELSE last_error END WHERE seq = ?').run(error, seq);
}

/**
 * Drops messages finished (delivered or abandoned) before `before`: counted from when they
 * finished, not from when they were made, so that one abandoned after a long retry window, or
 * delivered after a redelivery, is still there to see and redeliver for the whole week.
 */
export function pruneFinished(db: Db, before: number): number {
  return db.prepare('DELETE FROM webhook_outbox WHERE coalesce(delivered_at, abandoned_at) < ?').run(before).changes;
}

// ---- Deliveries as the operator and the API see them -------------------------------------------

/**
 * pending: not tried yet; retrying: tried, to be tried again (failed, or redelivered); delivered: the receiver
 * answered 2xx; abandoned: retries ran out (or the project's webhook was removed).
 */
export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'abandoned';
/** The statuses a listing can ask for; `failed` is retrying or abandoned. */
export const kDeliveryFilters = ['pending', 'retrying', 'delivered', 'abandoned', 'failed'] as const;
export type DeliveryFilter = (typeof kDeliveryFilters)[number];

const kFilterSql: Record<DeliveryFilter, string> = {
  pending: 'delivered_at IS NULL AND abandoned_at IS NULL AND attempts = 0',
  retrying: 'delivered_at IS NULL AND abandoned_at IS NULL AND attempts > 0',
  delivered: 'delivered_at IS NOT NULL',
  abandoned: 'abandoned_at IS NOT NULL',
  failed: 'delivered_at IS NULL AND (abandoned_at IS NOT NULL OR attempts > 0)',
};

export interface Delivery {
  readonly message_id: string;
  readonly event_id: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly last_error: string | null;
  readonly created_at: string;
  /** When the next attempt is due; null once delivered or abandoned. */
  readonly next_attempt_at: string | null;
  readonly delivered_at: string | null;
  readonly abandoned_at: string | null;
}

interface DeliveryRow {
  seq: number;
  message_id: string;
  event_id: string;
  attempts: number;
  last_error: string | null;
  created_at: number;
  next_attempt_at: number;
  delivered_at: number | null;
  abandoned_at: number | null;
}

const kDeliveryColumns = 'seq, message_id, event_id, attempts, last_error, created_at, next_attempt_at, delivered_at, abandoned_at';

function toDelivery(row: DeliveryRow): Delivery {
  const status: DeliveryStatus = row.delivered_at !== null ? 'delivered' : row.abandoned_at !== null ? 'abandoned' : row.attempts > 0 ? 'retrying' : 'pending';
  const iso = (time: number | null): string | null => (time === null ? null : new Date(time).toISOString());
  return {
    message_id: row.message_id,
    event_id: row.event_id,
    status,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: iso(row.created_at)!,
    next_attempt_at: status === 'pending' || status === 'retrying' ? iso(row.next_attempt_at) : null,
    delivered_at: iso(row.delivered_at),
    abandoned_at: iso(row.abandoned_at),
  };
}

export interface DeliveryPage {
  readonly deliveries: Delivery[];
  /** Pass as `before` for the next page (older messages); null on the last page. */
  readonly next: number | null;
}

/** A project's messages, newest first; `before` is a position from an earlier page. */
export function listDeliveries(db: Db, projectId: string, filter: DeliveryFilter | null, before: number | null, limit: number): DeliveryPage {
  const where = ['project_id = ?', 'seq < ?'];
  if (filter !== null) where.push(`(${kFilterSql[filter]})`);
  const rows = db.prepare(`SELECT ${kDeliveryColumns} FROM webhook_outbox WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`)
    .all(projectId, before ?? Number.MAX_SAFE_INTEGER, limit + 1) as DeliveryRow[];
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { deliveries: page.map(toDelivery), next: more ? page[page.length - 1]!.seq : null };
}

export function findDelivery(db: Db, projectId: string, messageId: string): Delivery | null {
  const row = db.prepare(`SELECT ${kDeliveryColumns} FROM webhook_outbox WHERE project_id = ? AND message_id = ?`).get(projectId, messageId) as DeliveryRow | undefined;
  return row === undefined ? null : toDelivery(row);
}

/**
 * Makes a message due now, whatever its state, with a new retry window from now: delivered
 * messages are sent again (same webhook-id, so receivers still de-duplicate), abandoned ones get
 * WEBHOOK_RETRY_HOURS of retries afresh, their backoff starting over. null when the project has no
 * such message.
 */
export function redeliver(db: Db, projectId: string, messageId: string, now: number, actor: string): Delivery | null {
  return db.transaction(() => {
    const changed = db.prepare(
      'UPDATE webhook_outbox SET delivered_at = NULL, abandoned_at = NULL, next_attempt_at = ?, retry_from = ?, window_attempts = 0 WHERE project_id = ? AND message_id = ?',
    ).run(now, now, projectId, messageId).changes;
    if (changed === 0) return null;
    const delivery = findDelivery(db, projectId, messageId)!;
    recordAudit(db, { projectId, actor, action: 'webhook.redeliver', target: `message:${messageId}`, summary: { event_id: delivery.event_id }, at: now });
    return delivery;
  }).immediate();
}

/** Redelivers every abandoned message of a project (after a receiver outage); returns how many. */
export function redeliverAbandoned(db: Db, projectId: string, now: number, actor: string): number {
  return db.transaction(() => {
    const count = db.prepare(
      'UPDATE webhook_outbox SET abandoned_at = NULL, next_attempt_at = ?, retry_from = ?, window_attempts = 0 WHERE project_id = ? AND abandoned_at IS NOT NULL',
    ).run(now, now, projectId).changes;
    if (count > 0) recordAudit(db, { projectId, actor, action: 'webhook.redeliver', target: 'webhook', summary: { abandoned_redelivered: count }, at: now });
    return count;
  }).immediate();
}
