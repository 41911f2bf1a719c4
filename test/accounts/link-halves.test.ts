// Links stored in one direction only (src/accounts/link-halves.ts, migration 23): a bulk write's
// parts say whether more follow (and since when its links were seen), and a start after one
// stopped between them mends the links seen since.
import test from 'ava';
import Database from 'better-sqlite3';
import { mendLinkHalves } from '../../src/accounts/link-halves.js';
import { BatchParts, DerivedRows } from '../../src/accounts/derived-rows.js';
import { applyDerivedRows, persistScoredEvent, type DerivedRowBatch, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';
import { transactionEnded } from '../../src/store/transaction-undo.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

const kLinkColumns = 'account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen';

/** Two accounts of one project (rows written as their events' commits write them), and the parts of a bulk write linking them. */
function twoAccounts(): { db: Database.Database; projectId: string; parts: DerivedRowBatch[] } {
  const db = new Database(':memory:');
  migrate(db);
  t0(db);
  const { tenant, live } = provisionTenant(db, 'shop', 1_000);
  const record = (eventId: string, account: string, order: number): ScoredEventRecord => ({
    projectId: live.project_id, tenantId: tenant.tenant_id, environment: 'live', eventId, eventType: 'login', receivedAt: order, payload: '{}',
    account: { accountId: account, externalId: `ext-${account}`, isNew: true, newProject: true },
    rulesetVersion: 1, decision: 'allow', riskScore: 0, result: '{}', shadow: '[]', signals: '[]', scoredAt: order, webhookPayload: null,
  });
  for (const [eventId, account, order] of [['e1', 'acc_c', 1], ['e2', 'acc_z', 2]] as const) {
    db.transaction(() => persistScoredEvent(db, record(eventId, account, order), null))();
    transactionEnded(true);
  }
  const rows = new DerivedRows(0);
  const projects = `,${live.project_id},`;
  rows.link('acc_c', 'email', 'acc_z', 'ext-acc_z', projects, 'z***@e***.com', 2);
  rows.link('acc_z', 'email', 'acc_c', 'ext-acc_c', projects, 'z***@e***.com', 2);
  rows.advance(2);
  // One row per part: acc_c's row, then acc_z's.
  return { db, projectId: live.project_id, parts: new BatchParts(rows.take()!, 1, 0).rest() };
}

/** A start after the migration has nothing to mend on a new database; the flag it set is cleared. */
function t0(db: Database.Database): void {
  if (mendLinkHalves(db).written !== 0) throw new Error('a new database has no links');
}

function apply(db: Database.Database, part: DerivedRowBatch): void {
  db.transaction(() => applyDerivedRows(db, part))();
  transactionEnded(true);
}

const partsOpen = (db: Database.Database): number => db.prepare('SELECT parts_open FROM derived_stamp WHERE id = 1').pluck().get() as number;

test('a bulk write stopped between its parts: the start writes the link\'s other row, once', (t) => {
  const { db, projectId, parts } = twoAccounts();
  t.teardown(() => db.close());
  t.is(parts.length, 2);
  t.is(parts[0]!.linksOpenSince, 2, 'more parts follow, with links last seen from 2 on');
  t.is(parts[1]!.linksOpenSince, undefined);
  apply(db, parts[0]!);
  t.is(partsOpen(db), 2, 'more parts were to follow');
  // The process stops here; the next start mends.
  t.deepEqual(mendLinkHalves(db), { written: 1, removed: 0 });
  t.deepEqual(db.prepare(`SELECT ${kLinkColumns} FROM account_links ORDER BY account_id`).raw().all(), [
    ['acc_c', 'email', 'acc_z', 'ext-acc_z', `,${projectId},`, 'z***@e***.com', 2, 2],
    ['acc_z', 'email', 'acc_c', 'ext-acc_c', `,${projectId},`, 'z***@e***.com', 2, 2],
  ]);
  t.is(partsOpen(db), 0);
  t.deepEqual(mendLinkHalves(db), { written: 0, removed: 0 }, 'nothing left open');
});

test('a bulk write whose parts were all written leaves nothing to mend, and the start does not scan', (t) => {
  const { db, parts } = twoAccounts();
  t.teardown(() => db.close());
  for (const part of parts) apply(db, part);
  t.is(partsOpen(db), 0);
  // A row alone that no open bulk write explains is not looked for.
  db.prepare('DELETE FROM account_links WHERE account_id = ?').run('acc_z');
  t.deepEqual(mendLinkHalves(db), { written: 0, removed: 0 });
});

test('a stored row that names an erased account goes at the mend', (t) => {
  const { db, parts } = twoAccounts();
  t.teardown(() => db.close());
  apply(db, parts[0]!);
  // acc_z erased before this release looked for the rows of links to it in memory.
  db.prepare('DELETE FROM account_projects WHERE account_id = ?').run('acc_z');
  db.prepare('DELETE FROM accounts WHERE account_id = ?').run('acc_z');
  t.deepEqual(mendLinkHalves(db), { written: 0, removed: 1 });
  t.is(db.prepare('SELECT count(*) FROM account_links').pluck().get(), 0);
});

test('only the links seen since the open bulk write\'s earliest are looked at; the earliest of two open writes counts', (t) => {
  const { db, parts } = twoAccounts();
  t.teardown(() => db.close());
  // A row alone, older than the open write (no write of this build leaves one): not looked at.
  db.prepare(`INSERT INTO account_links (${kLinkColumns}) VALUES ('acc_c', 'phone', 'acc_z', 'ext-acc_z', ',p,', '+1***', 1, 1)`).run();
  apply(db, { ...parts[0]!, linksOpenSince: 5 });
  apply(db, parts[0]!);
  t.is(partsOpen(db), 2, 'the earlier of the two');
  t.deepEqual(mendLinkHalves(db), { written: 1, removed: 0 });
  t.is(db.prepare("SELECT count(*) FROM account_links WHERE account_id = 'acc_z' AND signal_type = 'phone'").pluck().get(), 0);
});
