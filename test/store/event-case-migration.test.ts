// Migration 14 (store/migrations/014-event-case.ts): the case an event is in moves from an index of
// case_events by event id onto the event's row. An event id may repeat across projects; each event
// gets the case of its own project.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

test('each event gets the case of its own project; events without a case get none; the index by event id goes', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 13));
  const now = Date.now();
  const { live, sandbox } = provisionTenant(db, 'shop', now);
  const event = db.prepare(`INSERT INTO events (project_id, event_id, event_type, received_at, state, payload, decision, risk_score, result, shadow, scored_at)
    VALUES (?, ?, 'payment', ?, 'scored', '{}', ?, 50, '[]', '[]', ?)`);
  const kase = db.prepare(`INSERT INTO cases (case_id, project_id, status, account_id, decision, risk_score, created_at, updated_at)
    VALUES (?, ?, 'open', NULL, 'review', 50, ?, ?)`);
  const member = db.prepare('INSERT INTO case_events (case_id, event_id, added_at) VALUES (?, ?, ?)');
  // The same event id in both projects, each reviewed into its project's case; one event allowed.
  event.run(live.project_id, 'shared-id', now, 'review', now);
  event.run(sandbox.project_id, 'shared-id', now, 'review', now);
  event.run(live.project_id, 'allowed', now, 'allow', now);
  kase.run('case_live', live.project_id, now, now);
  kase.run('case_sandbox', sandbox.project_id, now, now);
  member.run('case_live', 'shared-id', now);
  member.run('case_sandbox', 'shared-id', now);

  migrate(db, kMigrations.filter((migration) => migration.version <= 14));

  const caseOf = (projectId: string, eventId: string): unknown =>
    (db.prepare('SELECT case_id FROM events WHERE project_id = ? AND event_id = ?').get(projectId, eventId) as { case_id: unknown }).case_id;
  t.is(caseOf(live.project_id, 'shared-id'), 'case_live');
  t.is(caseOf(sandbox.project_id, 'shared-id'), 'case_sandbox');
  t.is(caseOf(live.project_id, 'allowed'), null);
  const count = (sql: string): number => (db.prepare(sql).pluck().get() as number);
  t.is(count("SELECT count(*) FROM sqlite_schema WHERE name = 'case_events_by_event'"), 0);
  t.is(count('SELECT count(*) FROM case_events'), 2, 'a case still lists its events');
});
