// Per-project webhook configuration and the delivery outbox (schema: migrations/003-events.ts).
import type { Db } from '../store/database.js';

export interface WebhookConfig {
  readonly project_id: string;
  readonly url: string;
  readonly secret: string;
  readonly created_at: number;
  readonly updated_at: number;
}

export function setWebhook(db: Db, projectId: string, url: string, secret: string, now: number): WebhookConfig {
  db.prepare(
    `INSERT INTO webhooks (project_id, url, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (project_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, updated_at = excluded.updated_at`,
  ).run(projectId, url, secret, now, now);
  return findWebhook(db, projectId)!;
}

export function findWebhook(db: Db, projectId: string): WebhookConfig | null {
  return (db.prepare('SELECT project_id, url, secret, created_at, updated_at FROM webhooks WHERE project_id = ?').get(projectId) as WebhookConfig | undefined) ?? null;
}

export function removeWebhook(db: Db, projectId: string): boolean {
  return db.prepare('DELETE FROM webhooks WHERE project_id = ?').run(projectId).changes > 0;
}

export interface OutboxMessage {
  readonly seq: number;
  readonly message_id: string;
  readonly project_id: string;
  readonly payload: string;
  readonly created_at: number;
  readonly attempts: number;
}

export function dueMessages(db: Db, now: number, limit: number): OutboxMessage[] {
  return db.prepare(
    `SELECT seq, message_id, project_id, payload, created_at, attempts FROM webhook_outbox
     WHERE delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?`,
  ).all(now, limit) as OutboxMessage[];
}

export function markDelivered(db: Db, seq: number, now: number): void {
  db.prepare('UPDATE webhook_outbox SET delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE seq = ?').run(now, seq);
}

export function markFailed(db: Db, seq: number, error: string, nextAttemptAt: number | null, now: number): void {
  if (nextAttemptAt === null) {
    db.prepare('UPDATE webhook_outbox SET attempts = attempts + 1, last_error = ?, abandoned_at = ? WHERE seq = ?').run(error, now, seq);
  } else {
    db.prepare('UPDATE webhook_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE seq = ?').run(error, nextAttemptAt, seq);
  }
}

/** Drops finished messages older than `before`. */
export function pruneFinished(db: Db, before: number): number {
  return db.prepare('DELETE FROM webhook_outbox WHERE (delivered_at IS NOT NULL OR abandoned_at IS NOT NULL) AND created_at < ?').run(before).changes;
}
