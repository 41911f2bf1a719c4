// Sightings of fp_ids per tenant: a write command of the group-commit writer (write-commands.ts).
//
// One statement counts a sighting and returns the row as committed: INSERT ... ON CONFLICT DO
// UPDATE ... RETURNING. Reading the row back on the read-only connection after the commit would
// race: two sightings of one device in the same group commit would both read seen_count 2, and the
// first caller would be told about a visit that came after its own. RETURNING gives each caller
// the row as its own statement left it, inside the same transaction.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';

export interface Sighting {
  readonly fp_id: string;
  /** Epoch milliseconds. */
  readonly first_seen: number;
  /** Epoch milliseconds; never moves backwards, even if the clock does. */
  readonly last_seen: number;
  readonly seen_count: number;
}

type UpsertParams = [tenantId: string, environment: string, fpId: string, firstSeen: number, lastSeen: number];

const kUpsertSql = `
INSERT INTO fingerprints (tenant_id, environment, fp_id, first_seen, last_seen, seen_count) VALUES (?, ?, ?, ?, ?, 1)
ON CONFLICT (tenant_id, environment, fp_id) DO UPDATE SET
  last_seen  = max(last_seen, excluded.last_seen),
  seen_count = seen_count + 1
RETURNING fp_id, first_seen, last_seen, seen_count`;

const kUpserts = new WeakMap<Db, Statement<UpsertParams, Sighting>>();

/** Write command: counts one sighting of `fpId` in the tenant's environment at `at` (epoch ms). */
export function recordFingerprintSighting(db: Db, tenantId: string, environment: string, fpId: string, at: number): Sighting {
  let upsert = kUpserts.get(db);
  if (upsert === undefined) {
    upsert = db.prepare<UpsertParams, Sighting>(kUpsertSql);
    kUpserts.set(db, upsert);
  }
  return upsert.get(tenantId, environment, fpId, at, at)!;
}

/**
 * Inside an erasure's transaction: forgets the sightings of the devices the erased account's
 * events named (their fp_ids are its values, as its `fp` list items are: accounts-service.ts).
 * Another account's later collect on the same device starts its count again. Returns the rows deleted.
 */
export function eraseFingerprintSightings(db: Db, tenantId: string, environment: string, fpIds: ReadonlySet<string>): number {
  if (fpIds.size === 0) return 0;
  return db.prepare('DELETE FROM fingerprints WHERE tenant_id = ? AND environment = ? AND fp_id IN (SELECT value FROM json_each(?))')
    .run(tenantId, environment, JSON.stringify([...fpIds])).changes;
}
