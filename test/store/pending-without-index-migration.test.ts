// Migration 22 (store/migrations/022-pending-without-index.ts): the index events_pending goes, and
// the stamp's from_seq moves down to an event left pending below it (possible for events accepted
// before migration 13), so that the start, which reads the log from there, finds every one.
import test from 'ava';
import Database from 'better-sqlite3';
import { pendingEventsOfLog } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';

function eventsBefore22(t: { teardown(fn: () => void): void }, fromSeq: number): Database.Database {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 21));
  const event = db.prepare(`INSERT INTO events (seq, project_id, event_id, event_type, received_at, state, payload) VALUES (?, 'prj', ?, 'login', 1, ?, '{}')`);
  event.run(3, 'e3', 'scored');
  event.run(5, 'e5', 'pending');
  event.run(8, 'e8', 'erased');
  event.run(12, 'e12', 'pending');
  event.run(20, 'e20', 'scored');
  db.prepare('UPDATE derived_stamp SET from_seq = ? WHERE id = 1').run(fromSeq);
  return db;
}

test('a pending event below the stamp\'s from_seq moves it down to its seq; the index goes', (t) => {
  const db = eventsBefore22(t, 10);
  migrate(db);
  t.is(db.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get(), 5);
  t.is(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'events_pending'").pluck().get(), 0);
  t.deepEqual(pendingEventsOfLog(db).map(([seq]) => seq), [5, 12]);
});

test('with every pending event at or after from_seq, from_seq stays', (t) => {
  const db = eventsBefore22(t, 4);
  migrate(db);
  t.is(db.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get(), 4);
  t.deepEqual(pendingEventsOfLog(db).map(([seq]) => seq), [5, 12]);
});
