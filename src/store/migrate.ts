import type { Db } from './database.js';
import { kMigrations, type Migration } from './migrations/index.js';

export class SchemaTooNewError extends Error {}

/**
 * Brings the schema to the newest version. Safe to call from several processes at once: each
 * step takes the write lock (BEGIN IMMEDIATE) and re-reads the version inside it.
 */
export function migrate(db: Db, migrations: readonly Migration[] = kMigrations): number {
  const newest = migrations.at(-1)?.version ?? 0;
  for (const migration of migrations) {
    const step = db.transaction(() => {
      const current = db.pragma('user_version', { simple: true }) as number;
      if (current >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    step.immediate();
  }
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > newest) {
    throw new SchemaTooNewError(`the database schema is version ${version}, newer than this build knows (${newest})`);
  }
  return version;
}
