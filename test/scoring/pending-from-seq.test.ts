// The stamp's two bounds (migration 27): from_seq, from which a start replays the events scored
// after the stamp and an erasure looks for an account's newest events, and pending_from_seq, from
// which a start finds the pending async events. An event that stays pending holds only the second;
// once scored it is an event scored after the stamp, and from_seq moves down to it in the same
// transaction, so that a crash before the next stamp still replays it.
import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyDerivedRows, insertPendingEvent, pendingEventsOfLog, persistScoredEvent, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';
import { transactionEnded } from '../../src/store/transaction-undo.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

interface Stamp {
  readonly scored_order: number;
  readonly from_seq: number;
  readonly pending_from_seq: number;
}

function logStore(t: { teardown(fn: () => void): void }): { file: string; db: Database.Database; record: (eventId: string) => ScoredEventRecord; projectId: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-pending-from-seq-'));
  const file = join(dir, 'db');
  const db = new Database(file);
  t.teardown(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  migrate(db);
  const { tenant, live } = provisionTenant(db, 'shop', 1_000);
  const record = (eventId: string): ScoredEventRecord => ({
    projectId: live.project_id, tenantId: tenant.tenant_id, environment: 'live', eventId, eventType: 'login', receivedAt: 5, payload: '{}',
    account: null, rulesetVersion: 1, decision: 'allow', riskScore: 1, result: '{}', shadow: '[]', signals: '[]', scoredAt: 5, webhookPayload: null,
  });
  return { file, db, record, projectId: live.project_id };
}

function committed<T>(db: Database.Database, write: () => T): T {
  const value = db.transaction(write)();
  transactionEnded(true);
  return value;
}

const stampOf = (db: Database.Database): Stamp => db.prepare('SELECT scored_order, from_seq, pending_from_seq FROM derived_stamp WHERE id = 1').get() as Stamp;
const noRows = { accounts: [], signals: [], links: [], linkProjects: [] };

test('an event that stays pending holds pending_from_seq only; scored, it moves from_seq down to it at once, and a stamp past it moves both up', (t) => {
  const { db, record, projectId } = logStore(t);
  const stuck = committed(db, () => insertPendingEvent(db, { projectId, eventId: 'evt-stuck', eventType: 'login', receivedAt: 1, payload: '{}' }));
  for (let i = 1; i <= 3; i++) committed(db, () => persistScoredEvent(db, record(`evt-${i}`), null));
  committed(db, () => applyDerivedRows(db, { order: 3, ...noRows }));
  t.deepEqual(stampOf(db), { scored_order: 3, from_seq: 5, pending_from_seq: stuck }, 'from_seq past every event; the pending one bounds only its own');
  t.deepEqual(pendingEventsOfLog(db), [[stuck, projectId]], 'a start still finds it');

  // Scored in a transaction that rolls back: nothing moves, on disk or in the writer's memory.
  db.exec('BEGIN');
  t.like(persistScoredEvent(db, record('evt-stuck'), stuck), { kind: 'stored', seq: stuck });
  t.is(stampOf(db).from_seq, stuck);
  db.exec('ROLLBACK');
  transactionEnded(false);
  t.is(stampOf(db).from_seq, 5);

  // Scored for good: from_seq is at it within that transaction (a crash now replays it)...
  t.like(committed(db, () => persistScoredEvent(db, record('evt-stuck'), stuck)), { kind: 'stored', seq: stuck });
  t.deepEqual(stampOf(db), { scored_order: 3, from_seq: stuck, pending_from_seq: stuck });
  t.deepEqual(pendingEventsOfLog(db), []);
  // ...and stays there until a stamp includes it.
  const last = committed(db, () => persistScoredEvent(db, record('evt-5'), null));
  t.deepEqual(stampOf(db), { scored_order: 3, from_seq: stuck, pending_from_seq: stuck });
  if (last.kind !== 'stored') throw new Error('not stored');
  committed(db, () => applyDerivedRows(db, { order: last.order, ...noRows }));
  t.deepEqual(stampOf(db), { scored_order: last.order, from_seq: 6, pending_from_seq: 6 });
});

test('after a restart the writer knows from_seq as stored: a pending event left below it and scored then moves it down too', (t) => {
  const { file, db, record, projectId } = logStore(t);
  const stuck = committed(db, () => insertPendingEvent(db, { projectId, eventId: 'evt-stuck', eventType: 'login', receivedAt: 1, payload: '{}' }));
  committed(db, () => persistScoredEvent(db, record('evt-1'), null));
  committed(db, () => applyDerivedRows(db, { order: 1, ...noRows }));
  db.close();
  const again = new Database(file);
  t.teardown(() => again.close());
  t.deepEqual(stampOf(again), { scored_order: 1, from_seq: 3, pending_from_seq: stuck });
  t.deepEqual(pendingEventsOfLog(again), [[stuck, projectId]]);
  t.like(committed(again, () => persistScoredEvent(again, record('evt-stuck'), stuck)), { kind: 'stored', seq: stuck });
  t.is(stampOf(again).from_seq, stuck);
});

test('a pending event at or above from_seq leaves from_seq where it is when scored', (t) => {
  const { db, record, projectId } = logStore(t);
  committed(db, () => persistScoredEvent(db, record('evt-1'), null));
  committed(db, () => applyDerivedRows(db, { order: 1, ...noRows }));
  t.is(stampOf(db).from_seq, 2);
  const pending = committed(db, () => insertPendingEvent(db, { projectId, eventId: 'evt-late', eventType: 'login', receivedAt: 1, payload: '{}' }));
  t.is(pending, 2);
  committed(db, () => persistScoredEvent(db, record('evt-late'), pending));
  t.deepEqual(stampOf(db), { scored_order: 1, from_seq: 2, pending_from_seq: 2 });
});
