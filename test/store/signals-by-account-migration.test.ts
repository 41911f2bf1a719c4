// Migration 15 (store/migrations/015-signals-by-account.ts): account_signals is keyed by account;
// every row keeps every column.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';

test('every signal row survives with its columns, now in account order', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 14));
  const insert = db.prepare('INSERT INTO account_signals (tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const rows = [
    ['ten_a', 'live', 'email', 'hash-z', 'acc_2', 'a***@x.com', 1, 5],
    ['ten_a', 'live', 'ip', 'hash-a', 'acc_2', '203.0.113.x', 2, 6],
    ['ten_a', 'live', 'email', 'hash-z', 'acc_1', 'a***@x.com', 3, 7],
    ['ten_b', 'sandbox', 'card', 'hash-m', 'acc_3', '411111******0000', 4, 8],
  ] as const;
  for (const row of rows) insert.run(...row);

  migrate(db, kMigrations.filter((migration) => migration.version <= 15));

  const columns = 'tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen';
  const after = db.prepare(`SELECT ${columns} FROM account_signals`).raw().all();
  t.deepEqual(after, [rows[2], rows[0], rows[1], rows[3]].map((row) => [...row]), 'in the order of (account, type, hash)');
  t.throws(() => insert.run('ten_a', 'live', 'email', 'hash-z', 'acc_1', 'other', 9, 9), { any: true, code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
});
