// The audit trail in SQLite (schema: migrations/009-lists-labels-audit.ts; docs/audit.md): one
// record per change made through the API or the command line, written in the same transaction as
// the change itself, so that a change without its record (or a record without its change) cannot
// be committed. Records are never changed; the background purge deletes those past retention.
import type { Statement } from 'better-sqlite3';
import { newId } from '../shared/ids.js';
import type { Db } from '../store/database.js';

/** Every action the trail records (docs/audit.md lists what each summary holds). */
export const kAuditActions = [
  'rule.create', 'rule.replace', 'policy.replace', 'ruleset.publish', 'ruleset.restore',
  'list.create', 'list.delete', 'list.items_add', 'list.items_remove', 'list.items_expire', 'list.items_erase',
  'case.change', 'event.label', 'event.unlabel', 'account.erase',
  'key.create', 'key.revoke',
  'webhook.set', 'webhook.rotate_secret', 'webhook.remove', 'webhook.redeliver',
  'project.create', 'tenant.create',
] as const;
export type AuditAction = (typeof kAuditActions)[number];

/** Who made a change: an API key's id (key_…), `cli` for the command line, `system` for the server's own jobs. */
export type AuditActor = string;
export const kCliActor = 'cli';
export const kSystemActor = 'system';

export interface AuditEntry {
  /** The project the change belongs to; null for a tenant-wide change (tenants create). */
  readonly projectId: string | null;
  /** Set when there is no project; otherwise taken from the project. */
  readonly tenantId?: string | null;
  readonly actor: AuditActor;
  readonly action: AuditAction;
  /** What was changed: `rule:<rule_id>`, `list:<list_id>`, `event:<event_id>`, `key:<key_id>`, … */
  readonly target: string;
  /**
   * What changed, as plain data. Never a key, a secret, a list value or anything an account
   * erasure would have to remove: ids, counts, versions, kinds and statuses only.
   */
  readonly summary: Readonly<Record<string, unknown>>;
  readonly at: number;
}

export interface AuditRecord {
  readonly audit_id: string;
  readonly project_id: string | null;
  readonly actor: string;
  readonly action: AuditAction;
  readonly target: string;
  readonly summary: Record<string, unknown>;
  readonly created_at: string;
}

const kInsert = new WeakMap<Db, Statement>();

/** Appends one record; call it inside the transaction that makes the change. */
export function recordAudit(db: Db, entry: AuditEntry): void {
  let insert = kInsert.get(db);
  if (insert === undefined) {
    insert = db.prepare(
      `INSERT INTO audit_log (audit_id, tenant_id, project_id, actor, action, target, summary, created_at)
       VALUES (?, coalesce(?, (SELECT tenant_id FROM projects WHERE project_id = ?)), ?, ?, ?, ?, ?, ?)`,
    );
    kInsert.set(db, insert);
  }
  insert.run(newId('aud'), entry.tenantId ?? null, entry.projectId, entry.projectId, entry.actor, entry.action, entry.target, JSON.stringify(entry.summary), entry.at);
}

/** Records deleted per purge round: a long backlog is purged in rounds, never one huge transaction. */
export const kAuditPurgeBatch = 10_000;

/**
 * Write command: deletes records older than `before` (epoch ms), at most kAuditPurgeBatch of
 * them; returns how many. The caller repeats while a whole batch went.
 */
export function purgeAudit(db: Db, before: number): number {
  return db.prepare(
    `DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log WHERE created_at < ? ORDER BY created_at LIMIT ${kAuditPurgeBatch})`,
  ).run(before).changes;
}

export interface AuditFilter {
  readonly projectId: string;
  readonly action: AuditAction | null;
  readonly target: string | null;
  readonly actor: string | null;
  /** Exclusive bounds, epoch ms. */
  readonly after: number | null;
  readonly before: number | null;
  /** Records with seq below this (the cursor), newest first. */
  readonly beforeSeq: number | null;
  readonly limit: number;
}

interface AuditRow {
  seq: number;
  audit_id: string;
  project_id: string | null;
  actor: string;
  action: AuditAction;
  target: string;
  summary: string;
  created_at: number;
}

/** A page of the project's records, newest first, and the seq to continue below (null: the last page). */
export function listAudit(db: Db, filter: AuditFilter): { records: AuditRecord[]; next: number | null } {
  const where = ['project_id = ?'];
  const args: Array<string | number> = [filter.projectId];
  if (filter.action !== null) {
    where.push('action = ?');
    args.push(filter.action);
  }
  if (filter.target !== null) {
    where.push('target = ?');
    args.push(filter.target);
  }
  if (filter.actor !== null) {
    where.push('actor = ?');
    args.push(filter.actor);
  }
  if (filter.after !== null) {
    where.push('created_at > ?');
    args.push(filter.after);
  }
  if (filter.before !== null) {
    where.push('created_at < ?');
    args.push(filter.before);
  }
  if (filter.beforeSeq !== null) {
    where.push('seq < ?');
    args.push(filter.beforeSeq);
  }
  // One row more than the page tells whether another page follows.
  const rows = db.prepare(
    `SELECT seq, audit_id, project_id, actor, action, target, summary, created_at FROM audit_log
     WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`,
  ).all(...args, filter.limit + 1) as AuditRow[];
  const page = rows.slice(0, filter.limit);
  const last = page.at(-1);
  return {
    records: page.map((row) => ({
      audit_id: row.audit_id,
      project_id: row.project_id,
      actor: row.actor,
      action: row.action,
      target: row.target,
      summary: JSON.parse(row.summary) as Record<string, unknown>,
      created_at: new Date(row.created_at).toISOString(),
    })),
    next: rows.length > filter.limit && last !== undefined ? last.seq : null,
  };
}
