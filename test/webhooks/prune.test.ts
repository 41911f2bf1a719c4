// Finished decision webhook messages are kept a week from when they finished (docs/webhooks.md),
// not from when they were made: a message abandoned after a long retry window, or delivered after a
// redelivery, stays listable and redeliverable for the week.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { provisionTenant } from '../../src/tenancy/provision.js';
import { pruneFinished } from '../../src/webhooks/webhook-store.js';

const kDay = 86_400_000;

test('pruning counts a week from when a message finished; messages still due are never pruned', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  const { live } = provisionTenant(db, 'shop', 1_000);
  const now = 100 * kDay;
  const insert = db.prepare('INSERT INTO webhook_outbox (message_id, project_id, event_id, payload, created_at, next_attempt_at, delivered_at, abandoned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const rows: Array<[string, number, number | null, number | null]> = [
    ['msg_delivered_long_ago', now - 9 * kDay, now - 8 * kDay, null],
    ['msg_abandoned_long_ago', now - 40 * kDay, null, now - 8 * kDay],
    ['msg_redelivered_just_now', now - 9 * kDay, now - 60_000, null],
    ['msg_abandoned_after_30_days', now - 30 * kDay, null, now - kDay],
    ['msg_still_due', now - 20 * kDay, null, null],
  ];
  for (const [id, createdAt, deliveredAt, abandonedAt] of rows) insert.run(id, live.project_id, `evt-${id}`, '{}', createdAt, createdAt, deliveredAt, abandonedAt);
  t.is(pruneFinished(db, now - 7 * kDay), 2);
  t.deepEqual(db.prepare('SELECT message_id FROM webhook_outbox ORDER BY message_id').pluck().all(), ['msg_abandoned_after_30_days', 'msg_redelivered_just_now', 'msg_still_due']);
});
