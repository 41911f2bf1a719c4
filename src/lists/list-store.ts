// Lists and their items in SQLite (schema: migrations/009-lists-labels-audit.ts; docs/lists.md).
//
// Reads run on the read-only connection. Writes are commands of the group-commit writer
// (write-commands.ts): each records its audit entry and the membership changes the rule workers
// apply (list_changes, advancing list_clock) in the same transaction, and returns the new clock so
// that the HTTP thread can advance the shared lists clock (lists-clock.ts) before it answers.
import type { Statement } from 'better-sqlite3';
import { kSystemActor, recordAudit } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';
import type { ListKind } from './list-kinds.js';

/** Lists a project may hold. */
export const kMaxListsPerProject = 1000;
/** Items added or removed by one request. */
export const kMaxItemsPerRequest = 10_000;
/** How long list_changes rows are kept for rule workers that are behind (then they reload). */
export const kListChangeRetentionMs = 10 * 60_000;
/** Rows the background sweep deletes per round (expired items, items of deleted lists). */
export const kSweepBatch = 10_000;

export interface ListRow {
  readonly lid: number;
  readonly project_id: string;
  readonly list_id: string;
  readonly kind: ListKind;
  readonly description: string;
  readonly item_count: number;
  readonly created_at: number;
  readonly created_by: string;
  readonly updated_at: number;
}

export interface ItemRow {
  readonly value: string;
  readonly note: string | null;
  readonly expires_at: number | null;
  readonly added_at: number;
  readonly added_by: string;
}

/** An item to store: its value already normalised by the list's kind. */
export interface NewItem {
  readonly value: string;
  readonly note: string | null;
  readonly expiresAt: number | null;
}

const kListColumns = 'lid, project_id, list_id, kind, description, item_count, created_at, created_by, updated_at';

// ---------------------------------------------------------------------------
// Reads

export function listLists(db: Db, projectId: string): ListRow[] {
  return db.prepare(`SELECT ${kListColumns} FROM lists WHERE project_id = ? AND deleted_at IS NULL ORDER BY list_id`).all(projectId) as ListRow[];
}

export function findList(db: Db, projectId: string, listId: string): ListRow | null {
  return (db.prepare(`SELECT ${kListColumns} FROM lists WHERE project_id = ? AND list_id = ? AND deleted_at IS NULL`).get(projectId, listId) as ListRow | undefined) ?? null;
}

/** The ids of the project's lists (what a rule's in_list may name). */
export function projectListIds(db: Db, projectId: string): string[] {
  return db.prepare('SELECT list_id FROM lists WHERE project_id = ? AND deleted_at IS NULL ORDER BY list_id').pluck().all(projectId) as string[];
}

/** Items in value order after `after`; items past their expiry are left out (they match nothing). */
export function listItems(db: Db, lid: number, after: string | null, limit: number, now: number): ItemRow[] {
  return db.prepare(
    `SELECT value, note, expires_at, added_at, added_by FROM list_items
     WHERE lid = ? AND value > ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY value LIMIT ?`,
  ).all(lid, after ?? '', now, limit) as ItemRow[];
}

/** The rules that read a list: draft rules (any status), and rules of the published ruleset. */
export function listUses(db: Db, projectId: string, listId: string): { drafts: string[]; published: string[] } {
  const drafts = db.prepare('SELECT rule_id FROM rule_lists WHERE project_id = ? AND list_id = ? ORDER BY rule_id').pluck().all(projectId, listId) as string[];
  const live = db.prepare('SELECT lists FROM rulesets WHERE project_id = ? ORDER BY version DESC LIMIT 1').pluck().get(projectId) as string | undefined;
  const published = live === undefined ? [] : ((JSON.parse(live) as Record<string, string[]>)[listId] ?? []);
  return { drafts, published: [...published].sort() };
}

// ---------------------------------------------------------------------------
// The change log

interface LogStatements {
  clock: Statement<[], { seq: number }>;
  setClock: Statement<[number]>;
  insert: Statement<[number, number, string, string | null, number | null, number]>;
}

const kLogStatements = new WeakMap<Db, LogStatements>();

function logStatements(db: Db): LogStatements {
  let s = kLogStatements.get(db);
  if (s === undefined) {
    s = {
      clock: db.prepare('SELECT seq FROM list_clock WHERE id = 1'),
      setClock: db.prepare('UPDATE list_clock SET seq = ? WHERE id = 1'),
      insert: db.prepare('INSERT INTO list_changes (seq, lid, op, value, expires_at, at) VALUES (?, ?, ?, ?, ?, ?)'),
    };
    kLogStatements.set(db, s);
  }
  return s;
}

type Change = readonly [op: 'create' | 'drop' | 'add' | 'remove' | 'reload', value: string | null, expiresAt: number | null];

/** Appends membership changes of list `lid`; returns the clock after them. */
export function logListChanges(db: Db, lid: number, changes: readonly Change[], now: number): number {
  const s = logStatements(db);
  let seq = s.clock.get()!.seq;
  for (const [op, value, expiresAt] of changes) s.insert.run(++seq, lid, op, value, expiresAt, now);
  s.setClock.run(seq);
  return seq;
}

export function listClock(db: Db): number {
  return logStatements(db).clock.get()!.seq;
}

// ---------------------------------------------------------------------------
// Write commands

export type CreateListOutcome =
  | { readonly kind: 'created'; readonly list: ListRow; readonly seq: number }
  | { readonly kind: 'exists' }
  | { readonly kind: 'limit'; readonly limit: number };

export function createList(
  db: Db, projectId: string, spec: { list_id: string; kind: ListKind; description: string }, actor: string, now: number,
): CreateListOutcome {
  if (findList(db, projectId, spec.list_id) !== null) return { kind: 'exists' };
  const { n } = db.prepare('SELECT count(*) AS n FROM lists WHERE project_id = ? AND deleted_at IS NULL').get(projectId) as { n: number };
  if (n >= kMaxListsPerProject) return { kind: 'limit', limit: kMaxListsPerProject };
  const lid = Number(db.prepare(
    `INSERT INTO lists (project_id, list_id, kind, description, item_count, created_at, created_by, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?)`,
  ).run(projectId, spec.list_id, spec.kind, spec.description, now, actor, now).lastInsertRowid);
  const seq = logListChanges(db, lid, [['create', null, null]], now);
  recordAudit(db, { projectId, actor, action: 'list.create', target: `list:${spec.list_id}`, summary: { kind: spec.kind }, at: now });
  return { kind: 'created', list: findList(db, projectId, spec.list_id)!, seq };
}

export type DeleteListOutcome =
  | { readonly kind: 'deleted'; readonly items: number; readonly seq: number }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'in_use'; readonly drafts: string[]; readonly published: string[] };

/**
 * Deletes a list no rule uses (a draft rule of any status, or the published ruleset): it is gone
 * at once for the API and the rules; its items are purged in the background (sweepLists).
 */
export function deleteList(db: Db, projectId: string, listId: string, actor: string, now: number): DeleteListOutcome {
  const list = findList(db, projectId, listId);
  if (list === null) return { kind: 'not_found' };
  const uses = listUses(db, projectId, listId);
  if (uses.drafts.length > 0 || uses.published.length > 0) return { kind: 'in_use', ...uses };
  db.prepare('UPDATE lists SET deleted_at = ?, updated_at = ? WHERE lid = ?').run(now, now, list.lid);
  const seq = logListChanges(db, list.lid, [['drop', null, null]], now);
  recordAudit(db, { projectId, actor, action: 'list.delete', target: `list:${listId}`, summary: { kind: list.kind, items: list.item_count }, at: now });
  return { kind: 'deleted', items: list.item_count, seq };
}

export type ItemsOutcome =
  | { readonly kind: 'changed'; readonly list: ListRow; readonly added: number; readonly updated: number; readonly removed: number; readonly absent: number; readonly seq: number }
  /** The list is gone (deleted, or deleted and created again) since the request read it. */
  | { readonly kind: 'not_found' };

/** The list `lid` of the project, if it is still the live list of that id. */
function liveList(db: Db, projectId: string, lid: number): ListRow | null {
  return (db.prepare(`SELECT ${kListColumns} FROM lists WHERE lid = ? AND project_id = ? AND deleted_at IS NULL`).get(lid, projectId) as ListRow | undefined) ?? null;
}

/**
 * Adds items (values already normalised by the list's kind); an item already on the list gets the
 * new note and expiry. Later duplicates in `items` win.
 */
export function addListItems(db: Db, projectId: string, lid: number, items: readonly NewItem[], actor: string, now: number): ItemsOutcome {
  const list = liveList(db, projectId, lid);
  if (list === null) return { kind: 'not_found' };
  const unique = new Map<string, NewItem>();
  for (const item of items) {
    unique.delete(item.value);
    unique.set(item.value, item);
  }
  const insert = db.prepare('INSERT OR IGNORE INTO list_items (lid, value, note, expires_at, added_at, added_by) VALUES (?, ?, ?, ?, ?, ?)');
  // An item past its expiry is on the list for nobody (not listed, matches nothing) until the sweep
  // deletes it: adding it again is an add, by this key, now; its row (already counted) is reused.
  const revive = db.prepare(
    'UPDATE list_items SET note = ?, expires_at = ?, added_at = ?, added_by = ? WHERE lid = ? AND value = ? AND expires_at IS NOT NULL AND expires_at <= ?',
  );
  const update = db.prepare('UPDATE list_items SET note = ?, expires_at = ? WHERE lid = ? AND value = ?');
  let inserted = 0;
  let revived = 0;
  let updated = 0;
  const changes: Change[] = [];
  for (const item of unique.values()) {
    if (insert.run(lid, item.value, item.note, item.expiresAt, now, actor).changes > 0) inserted++;
    else if (revive.run(item.note, item.expiresAt, now, actor, lid, item.value, now).changes > 0) revived++;
    else {
      update.run(item.note, item.expiresAt, lid, item.value);
      updated++;
    }
    changes.push(['add', item.value, item.expiresAt]);
  }
  const added = inserted + revived;
  db.prepare('UPDATE lists SET item_count = item_count + ?, updated_at = ? WHERE lid = ?').run(inserted, now, lid);
  const seq = logListChanges(db, lid, changes, now);
  recordAudit(db, { projectId, actor, action: 'list.items_add', target: `list:${list.list_id}`, summary: { added, updated }, at: now });
  return { kind: 'changed', list: liveList(db, projectId, lid)!, added, updated, removed: 0, absent: 0, seq };
}

/** Removes items by value (already normalised); values not on the list are counted as absent. */
export function removeListItems(db: Db, projectId: string, lid: number, values: readonly string[], actor: string, now: number): ItemsOutcome {
  const list = liveList(db, projectId, lid);
  if (list === null) return { kind: 'not_found' };
  const remove = db.prepare<[number, string], { expires_at: number | null }>('DELETE FROM list_items WHERE lid = ? AND value = ? RETURNING expires_at');
  let removed = 0;
  let absent = 0;
  let deleted = 0;
  const changes: Change[] = [];
  for (const value of new Set(values)) {
    const row = remove.get(lid, value);
    if (row === undefined) {
      absent++;
      continue;
    }
    // An expired item was not on the list any more (it matched nothing and was not listed): its
    // row goes, as the sweep would have deleted it, but it is reported as not on the list.
    if (row.expires_at !== null && row.expires_at <= now) absent++;
    else removed++;
    deleted++;
    changes.push(['remove', value, null]);
  }
  db.prepare('UPDATE lists SET item_count = item_count - ?, updated_at = ? WHERE lid = ?').run(deleted, now, lid);
  const seq = changes.length === 0 ? listClock(db) : logListChanges(db, lid, changes, now);
  recordAudit(db, { projectId, actor, action: 'list.items_remove', target: `list:${list.list_id}`, summary: { removed, not_on_list: absent }, at: now });
  return { kind: 'changed', list: liveList(db, projectId, lid)!, added: 0, updated: 0, removed, absent, seq };
}

export interface SweepOutcome {
  /** The lists clock after the sweep. */
  readonly seq: number;
  readonly expired: number;
  readonly purged: number;
  /** True when a round was full: sweep again. */
  readonly more: boolean;
}

/**
 * Write command of the background sweep: deletes items past their expiry (they already match
 * nothing; the audit trail records how many per list, as the system), purges the items of deleted
 * lists, and prunes change-log rows older than kListChangeRetentionMs. Each part does at most
 * kSweepBatch rows per call.
 */
export function sweepLists(db: Db, now: number): SweepOutcome {
  const expiredRows = db.prepare('SELECT lid, value FROM list_items WHERE expires_at <= ? ORDER BY expires_at LIMIT ?').all(now, kSweepBatch) as Array<{ lid: number; value: string }>;
  const byList = new Map<number, string[]>();
  for (const row of expiredRows) {
    const values = byList.get(row.lid) ?? [];
    values.push(row.value);
    byList.set(row.lid, values);
  }
  const remove = db.prepare('DELETE FROM list_items WHERE lid = ? AND value = ?');
  for (const [lid, values] of byList) {
    for (const value of values) remove.run(lid, value);
    const list = db.prepare('SELECT project_id, list_id, deleted_at FROM lists WHERE lid = ?').get(lid) as { project_id: string; list_id: string; deleted_at: number | null } | undefined;
    if (list === undefined || list.deleted_at !== null) continue;
    db.prepare('UPDATE lists SET item_count = item_count - ? WHERE lid = ?').run(values.length, lid);
    logListChanges(db, lid, values.map((value): Change => ['remove', value, null]), now);
    recordAudit(db, { projectId: list.project_id, actor: kSystemActor, action: 'list.items_expire', target: `list:${list.list_id}`, summary: { expired: values.length }, at: now });
  }

  let purged = 0;
  const deleted = db.prepare('SELECT lid FROM lists WHERE deleted_at IS NOT NULL').pluck().all() as number[];
  for (const lid of deleted) {
    if (purged >= kSweepBatch) break;
    purged += db.prepare('DELETE FROM list_items WHERE lid = ? AND value IN (SELECT value FROM list_items WHERE lid = ? LIMIT ?)').run(lid, lid, kSweepBatch - purged).changes;
    if (db.prepare('SELECT 1 FROM list_items WHERE lid = ? LIMIT 1').get(lid) === undefined) {
      db.prepare('DELETE FROM lists WHERE lid = ?').run(lid);
      // Its logged values go with it: an erasure finds values by the lists that exist (and a worker
      // behind needs only the list's 'drop', which holds no value).
      db.prepare('DELETE FROM list_changes WHERE lid = ? AND value IS NOT NULL').run(lid);
    }
  }

  // The log is in seq order and its times follow it: the oldest rows are the stale ones, so only
  // they are looked at (a bounded scan along the rowid), never the whole log.
  const stale = db.prepare(`SELECT max(seq) AS seq FROM (SELECT seq, at FROM list_changes ORDER BY seq LIMIT ${kSweepBatch * 10}) WHERE at < ?`)
    .get(now - kListChangeRetentionMs) as { seq: number | null };
  if (stale.seq !== null) {
    db.prepare('DELETE FROM list_changes WHERE seq <= ?').run(stale.seq);
    db.prepare('UPDATE list_clock SET pruned_through = max(pruned_through, ?) WHERE id = 1').run(stale.seq);
  }
  return { seq: listClock(db), expired: expiredRows.length, purged, more: expiredRows.length === kSweepBatch || purged >= kSweepBatch };
}
