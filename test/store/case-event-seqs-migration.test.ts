// Migration 18 (store/migrations/018-case-event-seqs.ts): a case's events, listed by case_events
// until now, become seqs kept with the case; case_events goes.
import test from 'ava';
import Database from 'better-sqlite3';
import { caseEventIds } from '../../src/cases/case-events.js';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

test('every case lists the events it had, in the order they were added; events of no case are in none', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 17));
  const { live, sandbox } = provisionTenant(db, 'shop', 1_000);
  const event = db.prepare(`INSERT INTO events (seq, project_id, event_id, event_type, received_at, state, payload, decision, risk_score, result, shadow, scored_at, case_id)
    VALUES (?, ?, ?, 'payment', 1, 'scored', '{}', ?, 50, '[]', '[]', ?, ?)`);
  const kase = db.prepare(`INSERT INTO cases (case_id, project_id, status, account_id, decision, risk_score, created_at, updated_at)
    VALUES (?, ?, 'open', NULL, 'review', 50, 1, 1)`);
  const member = db.prepare('INSERT INTO case_events (case_id, event_id, added_at) VALUES (?, ?, ?)');
  kase.run('case_a', live.project_id);
  kase.run('case_b', sandbox.project_id);
  kase.run('case_empty', live.project_id);
  // The same event id in both projects; case_a's events added at 30, 10 and 20 (seqs 3, 1, 2).
  for (const [seq, projectId, eventId, at, caseId] of [
    [1, live.project_id, 'e-first', 10, 'case_a'], [2, live.project_id, 'e-second', 20, 'case_a'], [3, live.project_id, 'e-third', 30, 'case_a'],
    [4, sandbox.project_id, 'e-first', 15, 'case_b'], [5, live.project_id, 'e-allowed', 40, null],
  ] as const) {
    event.run(seq, projectId, eventId, caseId === null ? 'allow' : 'review', at, caseId);
    if (caseId !== null) member.run(caseId, eventId, at);
  }

  migrate(db);

  t.deepEqual(caseEventIds(db, 'case_a'), ['e-first', 'e-second', 'e-third']);
  t.deepEqual(caseEventIds(db, 'case_b'), ['e-first']);
  t.deepEqual(caseEventIds(db, 'case_empty'), []);
  t.deepEqual(db.prepare('SELECT case_id, seq_chunks, length(event_seqs) FROM cases ORDER BY case_id').raw().all(), [['case_a', 1, 0], ['case_b', 1, 0], ['case_empty', 0, 0]]);
  t.is(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'case_events'").pluck().get(), 0, 'case_events is gone');
});
