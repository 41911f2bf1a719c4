// Migration 25 (store/migrations/025-outbox-window-attempts.ts): the backoff counts the attempts of
// a message's retry window. A message still retrying keeps the schedule it had (its window count
// starts at its attempts so far); finished ones start at 0, as a redelivery would set them.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';
import { provisionTenant } from '../../src/tenancy/provision.js';
import { dueMessages, markFailed, redeliver } from '../../src/webhooks/webhook-store.js';

test('retrying messages keep their count; a failure in the window counts; a redelivery starts the count over', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 24));
  const { live } = provisionTenant(db, 'shop', 1_000);
  const message = db.prepare('INSERT INTO webhook_outbox (message_id, project_id, event_id, payload, created_at, next_attempt_at, attempts, delivered_at, abandoned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  message.run('msg_retrying', live.project_id, 'e1', '{}', 2_000, 2_000, 5, null, null);
  message.run('msg_abandoned', live.project_id, 'e2', '{}', 2_000, 2_000, 14, null, 9_000);
  message.run('msg_delivered', live.project_id, 'e3', '{}', 2_000, 2_000, 2, 3_000, null);
  migrate(db);
  const windowAttempts = (): unknown => db.prepare('SELECT message_id, attempts, window_attempts FROM webhook_outbox ORDER BY message_id').all();
  t.deepEqual(windowAttempts(), [
    { message_id: 'msg_abandoned', attempts: 14, window_attempts: 0 },
    { message_id: 'msg_delivered', attempts: 2, window_attempts: 0 },
    { message_id: 'msg_retrying', attempts: 5, window_attempts: 5 },
  ]);

  const [due] = dueMessages(db, live.project_id, 10_000, 10);
  t.is(due?.window_attempts, 5);
  markFailed(db, due!.seq, due!.retry_from, 'HTTP 500', 20_000, 10_000);
  t.not(redeliver(db, live.project_id, 'msg_abandoned', 11_000, 'cli'), null);
  t.deepEqual(windowAttempts(), [
    { message_id: 'msg_abandoned', attempts: 14, window_attempts: 0 },
    { message_id: 'msg_delivered', attempts: 2, window_attempts: 0 },
    { message_id: 'msg_retrying', attempts: 6, window_attempts: 6 },
  ]);
  // An attempt's outcome that lands after a redelivery opened a new window counts in the total only.
  const [redelivered] = dueMessages(db, live.project_id, 11_000, 10).filter((m) => m.message_id === 'msg_abandoned');
  t.is(redelivered?.window_attempts, 0);
  t.not(redeliver(db, live.project_id, 'msg_abandoned', 12_000, 'cli'), null);
  markFailed(db, redelivered!.seq, redelivered!.retry_from, 'HTTP 500', 30_000, 12_500);
  t.like((windowAttempts() as Array<{ message_id: string }>)[0], { message_id: 'msg_abandoned', attempts: 15, window_attempts: 0 });
});
