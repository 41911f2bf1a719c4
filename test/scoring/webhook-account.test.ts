// A decision webhook names the account its event was stored under. The scorer gives a new
// account's event a provisional acc_ id; should the account have been stored meanwhile under
// another (the writer's insert finds it), the event row and the webhook message both name that one.
import test from 'ava';
import Database from 'better-sqlite3';
import { insertPendingEvent, persistScoredEvent, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import { decisionWebhookJson } from '../../src/scoring/score-result.js';
import { migrate } from '../../src/store/migrate.js';
import { transactionEnded } from '../../src/store/transaction-undo.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

test('an async event of an account stored meanwhile under another id: its webhook message names the stored id', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  const { tenant, live } = provisionTenant(db, 'shop', 1_000);
  db.prepare('INSERT INTO webhooks (project_id, url, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(live.project_id, 'https://hooks.example/x', 'whsec_c2VjcmV0', 1_000, 1_000);
  const stored = '{"event_id":"evt-async","decision":"allow","risk_score":0}';
  const record = (eventId: string, provisional: string, webhook: boolean): ScoredEventRecord => ({
    projectId: live.project_id, tenantId: tenant.tenant_id, environment: 'live', eventId, eventType: 'payment', receivedAt: 2_000, payload: '{}',
    account: { accountId: provisional, externalId: 'user-1', isNew: true, newProject: true },
    rulesetVersion: 1, decision: 'allow', riskScore: 0, result: '{}', shadow: '[]', signals: '[]', scoredAt: 3_000,
    webhookPayload: webhook ? decisionWebhookJson(stored, provisional, 3_000, live.project_id, 'live') : null,
  });
  const pendingSeq = db.transaction(() => insertPendingEvent(db, { projectId: live.project_id, eventId: 'evt-async', eventType: 'payment', receivedAt: 2_000, payload: '{}' }))();
  transactionEnded(true);
  const first = db.transaction(() => persistScoredEvent(db, record('evt-sync', 'acc_first', false), null))();
  transactionEnded(true);
  t.true(first.kind === 'stored' && first.accountId === 'acc_first');

  const second = db.transaction(() => persistScoredEvent(db, record('evt-async', 'acc_second', true), pendingSeq))();
  transactionEnded(true);
  t.true(second.kind === 'stored' && second.accountId === 'acc_first' && second.webhookQueued);
  t.is(db.prepare('SELECT account_id FROM events WHERE seq = ?').pluck().get(pendingSeq), 'acc_first');
  const payload = db.prepare('SELECT payload FROM webhook_outbox WHERE event_id = ?').pluck().get('evt-async') as string;
  const message = JSON.parse(payload) as { data: Record<string, unknown> };
  t.is(message.data['account_public_id'], 'acc_first');
  t.deepEqual(message.data, { event_id: 'evt-async', decision: 'allow', risk_score: 0, account_public_id: 'acc_first' });
  t.false(payload.includes('acc_second'));
});
