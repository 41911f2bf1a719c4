// Migration 17 (store/migrations/017-account-event-seqs.ts): the seqs of the events each account's
// row counts go into a row of account_event_seqs, and the index events_by_account goes.
import test from 'ava';
import Database from 'better-sqlite3';
import { decodeSeqs } from '../../src/accounts/event-seqs.js';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';

test('every stored event of an account is listed with it, also past its counted_order; pending and erased ones are not', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 16));
  const account = db.prepare(
    `INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews, counted_order)
     VALUES (?, 'ten', 'live', ?, 1, 1, 0, 0, 0, ?)`,
  );
  account.run('acc_1', 'one', 5);
  account.run('acc_2', 'two', 0);
  account.run('acc_3', 'three', 9);
  const event = db.prepare(
    `INSERT INTO events (seq, project_id, event_id, event_type, account_id, received_at, state, payload, scored_order)
     VALUES (?, 'prj', ?, 'login', ?, 1, ?, '{}', ?)`,
  );
  event.run(1, 'e1', 'acc_1', 'scored', null); // scored before migration 13: no scored_order
  event.run(2, 'e2', 'acc_2', 'scored', null);
  event.run(3, 'e3', 'acc_1', 'scored', 4);
  event.run(4, 'e4', 'acc_1', 'scored', 7); // past acc_1's counted_order: listed here, and again by the replay
  event.run(5, 'e5', null, 'pending', null);
  event.run(6, 'e6', null, 'erased', 3);
  event.run(200, 'e200', 'acc_1', 'scored', 5);
  t.true(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'events_by_account'").pluck().get() === 1, 'before: the index');

  migrate(db);

  const listed = db.prepare('SELECT account_id, chunk, seqs FROM account_event_seqs ORDER BY account_id, chunk').raw().all() as Array<[string, number, Buffer]>;
  t.deepEqual(listed.map(([id, chunk, seqs]) => [id, chunk, decodeSeqs(seqs).sort((a, b) => a - b)]), [['acc_1', 0, [1, 3, 4, 200]], ['acc_2', 0, [2]]]);
  const rows = db.prepare('SELECT account_id, seq_chunks, length(event_seqs) FROM accounts ORDER BY account_id').raw().all();
  t.deepEqual(rows, [['acc_1', 1, 0], ['acc_2', 1, 0], ['acc_3', 0, 0]], 'the next list of an account goes to its next chunk');
  t.is(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'events_by_account'").pluck().get(), 0, 'the index is gone');
});
