// Sightings of fp_ids per tenant, written through the group-commit Writer.
//
// One statement counts a sighting and returns the row as committed: INSERT ... ON CONFLICT DO
// UPDATE ... RETURNING. Reading the row back on the read-only connection after the commit would
// race: two sightings of one device in the same group commit would both read seen_count 2, and the
// first caller would be told about a visit that came after its own. RETURNING gives each caller
// the row as its own statement left it, inside the same transaction.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import type { Writer } from '../store/writer.js';

export interface Sighting {
  readonly fp_id: string;
  /** Epoch milliseconds. */
  readonly first_seen: number;
  /** Epoch milliseconds; never moves backwards, even if the clock does. */
  readonly last_seen: number;
  readonly seen_count: number;
}

type UpsertParams = [tenantId: string, fpId: string, firstSeen: number, lastSeen: number];

const kUpsertSql = `
INSERT INTO fingerprints (tenant_id, fp_id, first_seen, last_seen, seen_count) VALUES (?, ?, ?, ?, 1)
ON CONFLICT (tenant_id, fp_id) DO UPDATE SET
  last_seen  = max(last_seen, excluded.last_seen),
  seen_count = seen_count + 1
RETURNING fp_id, first_seen, last_seen, seen_count`;

export class FingerprintStore {
  readonly #writer: Writer;
  /** Prepared on first use, on the connection the writer hands to its work (always the same one). */
  #upsert: Statement<UpsertParams, Sighting> | null = null;

  constructor(writer: Writer) {
    this.#writer = writer;
  }

  /** Counts one sighting of `fpId` in the tenant at `at` (epoch ms); resolves once committed. */
  recordSighting(tenantId: string, fpId: string, at: number): Promise<Sighting> {
    return this.#writer.run((db) => this.#statement(db).get(tenantId, fpId, at, at)!);
  }

  #statement(db: Db): Statement<UpsertParams, Sighting> {
    this.#upsert ??= db.prepare<UpsertParams, Sighting>(kUpsertSql);
    return this.#upsert;
  }
}
