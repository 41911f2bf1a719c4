// Rebuilds the in-memory velocity windows from the store at start: every scored event of the last
// 24 hours is counted again, so a restart does not reset velocity. Events are in arrival order by
// seq, so the last 24 hours are one seq range, found by binary search on received_at.
import { logSeqBounds } from '../analysis/event-range.js';
import type { Db } from '../store/database.js';
import { readAheadTables } from '../store/read-ahead.js';
import { externalAccountIdOf, velocityIdentifiers } from '../signals/identifiers.js';
import type { VelocityWindows } from '../signals/velocity.js';
import type { EventInput } from '../validation/event-input.js';
import { payloadText } from './stored-payload.js';

const kDayMs = 86_400_000;

/**
 * Counts again the events of the last 24 hours into `velocity`. `databaseFd`: a descriptor of the
 * database file the main thread keeps open, for the read-ahead on a worker (store/read-ahead.ts).
 */
export function rebuildVelocity(db: Db, velocity: VelocityWindows, now: number, databaseFd: number | null = null): number {
  const since = now - kDayMs;
  const bounds = logSeqBounds(db);
  if (bounds.low === null || bounds.high === null) return 0;
  const receivedAt = db.prepare('SELECT received_at FROM events WHERE seq >= ? ORDER BY seq LIMIT 1');
  // First seq whose event arrived at or after `since` (arrival time grows with seq).
  let low = bounds.low;
  let high = bounds.high + 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const row = receivedAt.get(middle) as { received_at: number } | undefined;
    if (row !== undefined && row.received_at < since) low = middle + 1;
    else high = middle;
  }
  // Read in file order first: from disk, the scan below would wait for each page in turn.
  readAheadTables(db, [{ table: 'events', fromRowid: low }], databaseFd ?? db.name);
  const rows = db.prepare(
    `SELECT project_id, account_id, payload, received_at FROM events WHERE seq >= ? AND state = 'scored' AND received_at >= ?`,
  ).iterate(low, since) as IterableIterator<{ project_id: string; account_id: string | null; payload: string; received_at: number }>;
  let counted = 0;
  for (const row of rows) {
    let event: EventInput;
    try {
      event = JSON.parse(payloadText(row.payload)) as EventInput;
    } catch {
      continue; // a scrubbed payload of an erased account: nothing left to count
    }
    const ids = velocityIdentifiers(event);
    const accountId = externalAccountIdOf(event) === null ? null : row.account_id;
    velocity.record(row.project_id, { cardToken: ids.cardToken, ip: ids.ip, accountId, email: ids.email, fp: ids.fp }, ids.amountCents, row.received_at);
    counted++;
  }
  return counted;
}
