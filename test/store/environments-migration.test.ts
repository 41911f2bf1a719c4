// Migration 7 (store/migrations/007-environments.ts, accounts/split-environments.ts): a database
// from before environments were apart is split. An account both environments used becomes two; the
// signals and links of each half are what that half's own events make; cross-environment links go.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';
import { installSecret } from '../../src/store/install-secret.js';
import { provisionTenant } from '../../src/tenancy/provision.js';
import { keyedHash } from '../../src/signals/keyed-hash.js';

test('accounts that mixed environments are split; signals and links stay within an environment', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db, kMigrations.filter((migration) => migration.version <= 6));
  const now = Date.now();
  const { tenant, live, sandbox } = provisionTenant(db, 'old shop', now);
  const secret = installSecret(db);
  const tenantId = tenant.tenant_id;
  const [liveEmail, sandboxEmail] = ['one@example.com', 'two@example.com'];

  const account = db.prepare('INSERT INTO accounts (account_id, tenant_id, external_account_id, created_at, last_seen_at, events, blocks, reviews, fraud_confirmed) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)');
  const event = db.prepare(`INSERT INTO events (project_id, event_id, event_type, account_id, received_at, state, payload, decision, risk_score, result, shadow, scored_at)
    VALUES (?, ?, 'payment', ?, ?, 'scored', ?, ?, 0, '{}', '[]', ?)`);
  const link = db.prepare(`INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
    VALUES (?, 'email', ?, ?, ?, 'x', ?, ?)`);
  const emailHash = (email: string): string => keyedHash(secret, 'email', email);
  const give = (accountId: string, external: string, projectId: string, email: string, decision: string, phone?: string): void => {
    event.run(projectId, crypto.randomUUID(), accountId, now, JSON.stringify({ external_account_id: external, event_type: 'payment', user: { email, phone } }), decision, now);
    db.prepare('INSERT OR IGNORE INTO account_signals (tenant_id, signal_type, signal_hash, account_id, masked, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(tenantId, 'email', emailHash(email), accountId, 'x', now, now);
    db.prepare('INSERT OR IGNORE INTO account_projects (account_id, project_id, first_seen_at) VALUES (?, ?, ?)').run(accountId, projectId, now);
  };
  // acc_mixed: live used it with one@, sandbox with two@ (a block and a fraud case there).
  account.run('acc_mixed', tenantId, 'mixed', now, now, 2, 1, 1);
  give('acc_mixed', 'mixed', live.project_id, liveEmail, 'allow');
  // The phone as sent, not in E.164 form: recomputing its signal parses it (libphonenumber, loaded by the step).
  give('acc_mixed', 'mixed', sandbox.project_id, sandboxEmail, 'block', '+44 7400 123456');
  db.prepare(`INSERT INTO cases (case_id, project_id, status, resolution, account_id, decision, risk_score, assignee, created_at, updated_at)
    VALUES ('case_sandbox', ?, 'closed', 'fraud', 'acc_mixed', 'review', 50, NULL, ?, ?)`).run(sandbox.project_id, now, now);
  // Live accounts with each email, and a sandbox account with two@.
  account.run('acc_live1', tenantId, 'live1', now, now, 1, 0, 0);
  give('acc_live1', 'live1', live.project_id, liveEmail, 'allow');
  account.run('acc_live2', tenantId, 'live2', now, now, 1, 0, 0);
  give('acc_live2', 'live2', live.project_id, sandboxEmail, 'allow');
  account.run('acc_sand', tenantId, 'sand', now, now, 1, 0, 0);
  give('acc_sand', 'sand', sandbox.project_id, sandboxEmail, 'allow');
  // The tenant-wide links of before: the mixed account with all three, and live2 with sand.
  for (const [a, b] of [['acc_mixed', 'acc_live1'], ['acc_mixed', 'acc_live2'], ['acc_mixed', 'acc_sand'], ['acc_live2', 'acc_sand']] as const) {
    link.run(a, b, b.slice(4), ',', now, now);
    link.run(b, a, a.slice(4), ',', now, now);
  }

  migrate(db);

  const accounts = db.prepare('SELECT account_id, environment, events, blocks, fraud_confirmed FROM accounts WHERE external_account_id = ? ORDER BY environment').all('mixed') as any[];
  t.is(accounts.length, 2);
  t.like(accounts[0], { account_id: 'acc_mixed', environment: 'live', events: 1, blocks: 0, fraud_confirmed: 0 });
  const sandboxHalf = accounts[1].account_id as string;
  t.regex(sandboxHalf, /^acc_/);
  t.like(accounts[1], { environment: 'sandbox', events: 1, blocks: 1, fraud_confirmed: 1 });
  t.is((db.prepare('SELECT account_id FROM cases WHERE case_id = ?').pluck().get('case_sandbox')), sandboxHalf);
  t.is((db.prepare('SELECT environment FROM accounts WHERE account_id = ?').pluck().get('acc_sand')), 'sandbox');
  t.is((db.prepare('SELECT environment FROM accounts WHERE account_id = ?').pluck().get('acc_live2')), 'live');
  t.deepEqual(db.prepare('SELECT project_id FROM account_projects WHERE account_id = ?').pluck().all(sandboxHalf), [sandbox.project_id]);

  const signalsOf = (accountId: string): unknown[] => db.prepare('SELECT environment, signal_hash FROM account_signals WHERE account_id = ?').all(accountId);
  t.deepEqual(signalsOf('acc_mixed'), [{ environment: 'live', signal_hash: emailHash(liveEmail) }]);
  const byHash = (a: any, b: any): number => (a.signal_hash < b.signal_hash ? -1 : 1);
  t.deepEqual(
    signalsOf(sandboxHalf).sort(byHash),
    [{ environment: 'sandbox', signal_hash: emailHash(sandboxEmail) }, { environment: 'sandbox', signal_hash: keyedHash(secret, 'phone', '+447400123456') }].sort(byHash),
  );

  const linksOf = (accountId: string): string[] => (db.prepare('SELECT other_account_id FROM account_links WHERE account_id = ? ORDER BY other_account_id').pluck().all(accountId) as string[]);
  t.deepEqual(linksOf('acc_mixed'), ['acc_live1'], 'the live half links only with the live account sharing its own email');
  t.deepEqual(linksOf(sandboxHalf), ['acc_sand']);
  t.deepEqual(linksOf('acc_sand'), [sandboxHalf]);
  t.deepEqual(linksOf('acc_live2'), [], 'links across environments are gone');
  t.deepEqual(linksOf('acc_live1'), ['acc_mixed']);
  // One external id is one account per environment from now on.
  t.throws(() => db.prepare("INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at) VALUES ('acc_dup', ?, 'live', 'mixed', 0, 0)").run(tenantId), { any: true, code: 'SQLITE_CONSTRAINT_UNIQUE' });
});
