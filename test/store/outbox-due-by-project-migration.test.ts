// Migration 24 (store/migrations/024-outbox-due-by-project.ts): the outbox's due index leads with
// the project (the deliverer reads due messages project by project), and messages still due of a
// project without a webhook (removed before removal abandoned them) are abandoned: no poll of a
// project with a webhook would ever find them.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

test('messages due of a project without a webhook are abandoned; the others stay due, found through the index by project', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 23));
  const { live, sandbox } = provisionTenant(db, 'shop', 1_000);
  db.prepare('INSERT INTO webhooks (project_id, url, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(live.project_id, 'https://hooks.example/x', 'whsec_c2VjcmV0', 1_000, 1_000);
  const message = db.prepare('INSERT INTO webhook_outbox (message_id, project_id, event_id, payload, created_at, next_attempt_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  message.run('msg_live_due', live.project_id, 'e1', '{}', 2_000, 2_000, null);
  message.run('msg_sandbox_due', sandbox.project_id, 'e2', '{}', 2_000, 2_000, null);
  message.run('msg_sandbox_delivered', sandbox.project_id, 'e3', '{}', 2_000, 2_000, 3_000);
  migrate(db);
  const rows = db.prepare('SELECT message_id, abandoned_at IS NOT NULL AS abandoned, last_error, delivered_at FROM webhook_outbox ORDER BY message_id').all();
  t.deepEqual(rows, [
    { message_id: 'msg_live_due', abandoned: 0, last_error: null, delivered_at: null },
    { message_id: 'msg_sandbox_delivered', abandoned: 0, last_error: null, delivered_at: 3_000 },
    { message_id: 'msg_sandbox_due', abandoned: 1, last_error: 'the project has no webhook any more', delivered_at: null },
  ]);
  const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT seq FROM webhook_outbox WHERE project_id = ? AND delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, seq`).all(live.project_id, 5_000) as Array<{ detail: string }>;
  t.true(plan.some((step) => /USING INDEX webhook_outbox_due \(project_id=\? AND next_attempt_at<\?\)/.test(step.detail)), JSON.stringify(plan));
});
