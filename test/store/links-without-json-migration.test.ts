// Migration 16 (store/migrations/016-links-without-json.ts): account_links loses the JSON column
// that nothing read; every row keeps every other column, in key order, under the same key.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';

test('every link row survives with its columns; the JSON column is gone', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 15));
  const insert = db.prepare(
    'INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const rows = [
    ['acc_2', 'email', 'acc_1', 'user-1', ',prj_a,', 'a***@x.com', 1, 5],
    ['acc_1', 'ip_24h', 'acc_2', 'user-2', ',prj_a,prj_b,', '203.0.113.x', 2, 6],
    ['acc_1', 'email', 'acc_2', 'user-2', ',prj_a,prj_b,', 'a***@x.com', 1, 5],
    ['acc_3', 'card', 'acc_1', 'user-1', ',prj_c,', '411111******0000', 4, 8],
  ] as const;
  for (const row of rows) insert.run(...row);
  t.true((db.prepare('SELECT entry FROM account_links').pluck().all() as string[]).every((entry) => JSON.parse(entry).account_public_id !== undefined), 'before: the JSON was there');

  migrate(db);

  const columns = 'account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen';
  const after = db.prepare(`SELECT ${columns} FROM account_links`).raw().all();
  t.deepEqual(after, [rows[2], rows[1], rows[0], rows[3]].map((row) => [...row]), 'in the order of (account, type, other account)');
  const names = (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('account_links') as string[]);
  t.deepEqual(names, columns.split(', '));
  t.throws(() => insert.run('acc_1', 'email', 'acc_2', 'x', ',', 'm', 9, 9), { any: true, code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
});
