// The seal that ties a start snapshot (scoring/start-snapshot.ts) to the database it was taken
// from: a random token in start_snapshot (migration 19) and in the file. A clean stop seals, after
// the last write; the next start claims, before its first: it reads the token and deletes it, so
// a file is used by one start at most, and a crash after the claim loads from the tables again.
// While the server is stopped, triggers on every table the snapshot's state comes from delete the
// token at any change (the command line, a restore of rows, a hand-made fix in the sqlite3 shell):
// the file is then not used. The triggers live only between a stop and the next start, so they
// cost nothing while serving; the start claims before it migrates, so migrations never fire them
// (a migration's changes are caught by the schema version the file names: scoring/start-snapshot.ts).
import { randomBytes } from 'node:crypto';
import type { Db } from './database.js';

/** The tables the snapshot's state is loaded from when there is no snapshot. */
const kGuardedTables = ['events', 'projects', 'accounts', 'account_projects', 'account_signals', 'account_links', 'event_labels', 'derived_stamp'] as const;
const kOperations = ['INSERT', 'UPDATE', 'DELETE'] as const;

const triggerName = (table: string, operation: string): string => `start_snapshot_guard_${table}_${operation.toLowerCase()}`;

/** A new token for a snapshot about to be written. */
export function newSnapshotToken(): string {
  return randomBytes(16).toString('hex');
}

/** Seals the database to the snapshot written with `token`, and guards it until the next start. */
export function sealSnapshot(db: Db, token: string, now: number): void {
  db.transaction(() => {
    db.prepare('INSERT OR REPLACE INTO start_snapshot (id, token, sealed_at) VALUES (1, ?, ?)').run(token, now);
    for (const table of kGuardedTables) {
      for (const operation of kOperations) {
        db.exec(`CREATE TRIGGER IF NOT EXISTS ${triggerName(table, operation)} AFTER ${operation} ON ${table} BEGIN DELETE FROM start_snapshot; END`);
      }
    }
  })();
}

/**
 * The token of the last seal, if nothing changed since; the seal and its guards are gone after
 * (whatever the start then does with the file).
 */
export function claimSnapshot(db: Db): string | null {
  // A database older than migration 19 (or a new one) has no seal, so no guards either.
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'start_snapshot'").get() === undefined) return null;
  return db.transaction(() => {
    const row = db.prepare('SELECT token FROM start_snapshot WHERE id = 1').get() as { token: string } | undefined;
    db.prepare('DELETE FROM start_snapshot').run();
    for (const table of kGuardedTables) {
      for (const operation of kOperations) db.exec(`DROP TRIGGER IF EXISTS ${triggerName(table, operation)}`);
    }
    return row?.token ?? null;
  })();
}
