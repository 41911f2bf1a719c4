// Erasure and the two rows of a link (src/accounts/accounts-service.ts, eraseAccount): a bulk write
// puts each row in its own account's part, so the other account's row can be stored while the
// erased account's own is not (its part failed). The erasure finds that row from memory.
// Likewise its signal rows, keyed by first seen (migration 26): found through the seconds memory
// knows of the account, or through the whole table for an account memory does not hold.
import test from 'ava';
import Database from 'better-sqlite3';
import { eraseAccount, type ErasureRequest } from '../../src/accounts/accounts-service.js';
import { applyDerivedRows, persistScoredEvent, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';
import { transactionEnded } from '../../src/store/transaction-undo.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

function linkedPair(): { db: Database.Database; request: Omit<ErasureRequest, 'linksInMemory'> } {
  const db = new Database(':memory:');
  migrate(db);
  const { tenant, live } = provisionTenant(db, 'shop', 1_000);
  const record = (eventId: string, account: string): ScoredEventRecord => ({
    projectId: live.project_id, tenantId: tenant.tenant_id, environment: 'live', eventId, eventType: 'login', receivedAt: 1, payload: '{}',
    account: { accountId: account, externalId: `ext-${account}`, isNew: true, newProject: true },
    rulesetVersion: 1, decision: 'allow', riskScore: 0, result: '{}', shadow: '[]', signals: '[]', scoredAt: 1, webhookPayload: null,
  });
  for (const [eventId, account] of [['e1', 'acc_c'], ['e2', 'acc_z']] as const) {
    db.transaction(() => persistScoredEvent(db, record(eventId, account), null))();
    transactionEnded(true);
  }
  // The part of acc_c was written (its row of the link to acc_z); the part of acc_z failed.
  db.transaction(() => applyDerivedRows(db, { order: 0, accounts: [], signals: [], links: [['acc_c', 'email', 'acc_z', 'ext-acc_z', `,${live.project_id},`, 'z***@e***.com', 1, 1]], linkProjects: [] }))();
  transactionEnded(true);
  const request = {
    tenantId: tenant.tenant_id, environment: 'live' as const, projectId: live.project_id, externalId: 'ext-acc_z', externalIdHash: 'hash', acrossProjects: false, now: 2, actor: 'key_test', signalFirstSeensInMemory: null,
  };
  return { db, request };
}

test('a link whose erased account\'s row was never written: the other account\'s row goes, known from memory', (t) => {
  const { db, request } = linkedPair();
  t.teardown(() => db.close());
  const outcome = db.transaction(() => eraseAccount(db, { ...request, linksInMemory: [['acc_c', 'email']] }))();
  transactionEnded(true);
  t.is(outcome.kind, 'erased');
  t.deepEqual(db.prepare('SELECT account_id FROM account_links WHERE other_account_id = ?').pluck().all('acc_z'), [], 'no row names the erased account');
  t.is(db.prepare('SELECT count(*) FROM account_links').pluck().get(), 0);
  if (outcome.kind === 'erased') t.is(outcome.summary.erased.links, 1, 'counted once');
});

test('a link both of whose rows were written, known also from memory: both go, counted once', (t) => {
  const { db, request } = linkedPair();
  t.teardown(() => db.close());
  db.transaction(() => applyDerivedRows(db, { order: 0, accounts: [], signals: [], links: [['acc_z', 'email', 'acc_c', 'ext-acc_c', ',p,', 'c***@e***.com', 1, 1]], linkProjects: [] }))();
  transactionEnded(true);
  const outcome = db.transaction(() => eraseAccount(db, { ...request, linksInMemory: [['acc_c', 'email']] }))();
  transactionEnded(true);
  t.is(db.prepare('SELECT count(*) FROM account_links').pluck().get(), 0);
  t.true(outcome.kind === 'erased' && outcome.summary.erased.links === 1);
});

test('signal rows: those at the seconds memory names go, another account\'s at the same second stays; an account not in memory is looked for everywhere', (t) => {
  for (const inMemory of [[100, 205], null]) {
    const { db, request } = linkedPair();
    const signal = (account: string, second: number, hash: string): readonly [string, string, string, string, string, string, number, number] =>
      [request.tenantId, 'live', 'fp', hash, account, 'fp_x***', second, second * 1000];
    db.transaction(() => applyDerivedRows(db, {
      order: 0, accounts: [], links: [], linkProjects: [],
      signals: [signal('acc_z', 100, 'h1'), signal('acc_c', 100, 'h1'), signal('acc_z', 205, 'h2'), signal('acc_z', 205, 'h3')],
    }))();
    transactionEnded(true);
    const outcome = db.transaction(() => eraseAccount(db, { ...request, linksInMemory: [], signalFirstSeensInMemory: inMemory }))();
    transactionEnded(true);
    t.true(outcome.kind === 'erased' && outcome.summary.erased.signals === 3, JSON.stringify(inMemory));
    t.deepEqual(db.prepare('SELECT account_id, first_seen_s FROM account_signals').raw().all(), [['acc_c', 100]], JSON.stringify(inMemory));
    db.close();
  }
});
