// Links stored in one direction only, mended at start (migration 23). The two rows of a link go in
// the parts of a bulk write of their two accounts (derived-rows.ts, BatchParts): a crash between
// those parts, or a part that failed before the second, leaves one row — the smaller account's,
// written first. The start's replay does not write the other (its events' values are held
// already). Memory still has the link (a start loads it from that row), but the tables do not
// say it both ways, and an erasure of the other account, which found a link's rows from its own
// (before it also took them from memory), left the stored one, which names it. Each row alone gets
// its other direction back, from the accounts and their projects, and a row that names an account
// no longer there (erased) goes. This runs only when derived_stamp.parts_open says a bulk write
// stopped between parts, and looks up only the rows last seen since the earliest link of that
// write (both rows of a link carry the same times; older rows were written whole): a scan of the
// table with a cheap filter. Migration 23 asks for all rows once.
import type { Db } from '../store/database.js';

/** What a start mended: rows written for their other direction, rows naming an erased account removed. */
export interface MendedLinks {
  readonly written: number;
  readonly removed: number;
}

/** The page cache while mending (KiB). */
const kMendCacheKib = 262_144;

/** Mends the rows of account_links when a bulk write was left open (else does nothing). */
export function mendLinkHalves(db: Db): MendedLinks {
  const since = db.prepare('SELECT parts_open FROM derived_stamp WHERE id = 1').pluck().get() as number | undefined;
  if (since === undefined || since === 0) return { written: 0, removed: 0 };
  // A lookup at a random key per row looked at: a larger page cache for the pass (a third faster
  // over two million rows), given back after it.
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  db.pragma(`cache_size = ${kMendCacheKib * -1}`);
  try {
    return mend(db, since);
  } finally {
    db.pragma(`cache_size = ${cacheSize}`);
  }
}

function mend(db: Db, since: number): MendedLinks {
  return db.transaction(() => {
    const removed = db.prepare('DELETE FROM account_links WHERE last_seen >= ? AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = account_links.other_account_id)').run(since).changes;
    const written = db.prepare(
      `INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
       SELECT l.other_account_id, l.signal_type, l.account_id, (SELECT a.external_account_id FROM accounts a WHERE a.account_id = l.account_id),
              ',' || coalesce((SELECT group_concat(p.project_id, ',' ORDER BY p.project_id) FROM account_projects p WHERE p.account_id = l.account_id), '') || ',',
              l.masked, l.first_seen, l.last_seen
       FROM account_links l
       WHERE l.last_seen >= ?
         AND NOT EXISTS (SELECT 1 FROM account_links r WHERE r.account_id = l.other_account_id AND r.signal_type = l.signal_type AND r.other_account_id = l.account_id)
         AND EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = l.account_id)`,
    ).run(since).changes;
    db.prepare('UPDATE derived_stamp SET parts_open = 0 WHERE id = 1').run();
    return { written, removed };
  })();
}
