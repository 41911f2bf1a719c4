import type { Db } from './database.js';
import { kMigrations, type Migration } from './migrations/index.js';

export class SchemaTooNewError extends Error {}

/**
 * Applies every migration not yet applied, in version order, each in its own transaction, and
 * records it in schema_migrations. Recording each version (rather than one high-water mark) means a
 * migration numbered below one already applied still runs. Safe to call from several processes at
 * once: each step takes the write lock (BEGIN IMMEDIATE) and re-checks inside it.
 */
export function migrate(db: Db, migrations: readonly Migration[] = kMigrations): number {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const step = db.transaction(() => {
      if (isApplied.get(migration.version) !== undefined) return;
      db.exec(migration.sql);
      migration.run?.(db);
      if (migration.sqlAfter !== undefined) db.exec(migration.sqlAfter);
      record.run(migration.version, migration.name, Date.now());
    });
    step.immediate();
  }
  const known = new Set(migrations.map((migration) => migration.version));
  const unknown = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).filter((row) => !known.has(row.version));
  if (unknown.length > 0) {
    throw new SchemaTooNewError(`the database has schema migrations this build does not know (${unknown.map((row) => row.version).join(', ')}): it was used by a newer build`);
  }
  const newest = migrations.reduce((max, migration) => Math.max(max, migration.version), 0);
  db.pragma(`user_version = ${newest}`);
  return newest;
}

export interface SchemaStatus {
  /** False when the file has no schema_migrations table: nothing ever set it up. */
  readonly initialised: boolean;
  /** Versions this build has and the database has not applied yet. */
  readonly pending: readonly number[];
  /** Versions the database has applied that this build does not know (a newer build's). */
  readonly unknown: readonly number[];
}

/** Where the database's schema stands against this build's migrations, without changing anything. */
export function schemaStatus(db: Db, migrations: readonly Migration[] = kMigrations): SchemaStatus {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (table === undefined) return { initialised: false, pending: migrations.map((migration) => migration.version), unknown: [] };
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((row) => row.version));
  const known = new Set(migrations.map((migration) => migration.version));
  return {
    initialised: true,
    pending: migrations.map((migration) => migration.version).filter((version) => !applied.has(version)).sort((a, b) => a - b),
    unknown: [...applied].filter((version) => !known.has(version)).sort((a, b) => a - b),
  };
}
