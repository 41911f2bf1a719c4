// Migration 26 (store/migrations/026-signals-by-first-seen.ts): account_signals is keyed by
// (first seen in whole seconds, account, type, hash); every row keeps its other columns.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';

test('every signal row survives, first seen in whole seconds, in the order of (first seen, account, type, hash)', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 25));
  const insert = db.prepare('INSERT INTO account_signals (tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const rows = [
    ['ten_a', 'live', 'email', 'hash-z', 'acc_1', 'a***@x.com', 1_700_000_005_999, 1_700_000_009_000],
    ['ten_a', 'live', 'ip', 'hash-a', 'acc_1', '203.0.113.x', 1_700_000_001_000, 1_700_000_006_000],
    ['ten_a', 'live', 'card', 'hash-c', 'acc_2', '411111******0000', 1_700_000_005_001, 1_700_000_007_000],
    ['ten_b', 'sandbox', 'email', 'hash-z', 'acc_3', 'a***@x.com', 1_700_000_001_500, 1_700_000_008_000],
  ] as const;
  for (const row of rows) insert.run(...row);

  migrate(db);

  const after = db.prepare('SELECT first_seen_s, account_id, signal_type, signal_hash, tenant_id, environment, masked, last_seen FROM account_signals').raw().all();
  const expected = (row: typeof rows[number]): unknown[] => [Math.floor(row[6] / 1000), row[4], row[2], row[3], row[0], row[1], row[5], row[7]];
  t.deepEqual(after, [rows[1], rows[3], rows[0], rows[2]].map(expected), 'by first seen (seconds, rounded down), then account');
  // The key: a holder's row is found by its first seen, and it is one row per (account, type, hash) as before.
  const upsert = db.prepare(
    `INSERT INTO account_signals (tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen_s, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (first_seen_s, account_id, signal_type, signal_hash) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)`,
  );
  upsert.run('ten_a', 'live', 'email', 'hash-z', 'acc_1', 'other', 1_700_000_005, 1_700_000_099_000);
  t.is(db.prepare('SELECT count(*) FROM account_signals').pluck().get(), 4, 'the refresh found the row');
  t.deepEqual(db.prepare("SELECT masked, last_seen FROM account_signals WHERE account_id = 'acc_1' AND signal_type = 'email'").raw().get(), ['a***@x.com', 1_700_000_099_000]);
});
