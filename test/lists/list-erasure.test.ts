// Erasure and the list change log (src/lists/list-erasure.ts, list-store.ts): the log keeps the
// values of adds and removes for minutes; an erasure takes the account's out of it, including
// those of a list deleted and purged since (its lists row gone).
import test from 'ava';
import Database from 'better-sqlite3';
import { ErasableValues, eraseListValues } from '../../src/lists/list-erasure.js';
import { addListItems, createList, deleteList, removeListItems, sweepLists } from '../../src/lists/list-store.js';
import { migrate } from '../../src/store/migrate.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

function loggedValues(db: Database.Database, value: string): number {
  return db.prepare('SELECT count(*) FROM list_changes WHERE value = ?').pluck().get(value) as number;
}

test('a deleted list, purged by the sweep, leaves no value of it in the change log', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  const { live } = provisionTenant(db, 'shop', 1_000);
  const created = createList(db, live.project_id, { list_id: 'purge_me', kind: 'email', description: '' }, 'key_test', 1_000);
  if (created.kind !== 'created') return t.fail(created.kind);
  const lid = created.list.lid;
  addListItems(db, live.project_id, lid, [{ value: 'victim@x.com', note: null, expiresAt: null }], 'key_test', 1_001);
  removeListItems(db, live.project_id, lid, ['victim@x.com'], 'key_test', 1_002);
  addListItems(db, live.project_id, lid, [{ value: 'victim@x.com', note: null, expiresAt: null }], 'key_test', 1_003);
  t.is(loggedValues(db, 'victim@x.com'), 3);
  t.is(deleteList(db, live.project_id, 'purge_me', 'key_test', 1_004).kind, 'deleted');
  sweepLists(db, 1_005);
  t.is(db.prepare('SELECT count(*) FROM lists WHERE lid = ?').pluck().get(lid), 0, 'the list is purged');
  t.is(loggedValues(db, 'victim@x.com'), 0);
  t.is(db.prepare("SELECT count(*) FROM list_changes WHERE lid = ? AND op = 'drop'").pluck().get(lid), 1, 'its drop stays for workers behind');
});

test('an erasure takes the account\'s values out of log rows of a list no longer in the lists table', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  const { tenant } = provisionTenant(db, 'shop', 1_000);
  // As an older build's sweep left them: the list's rows gone, its logged values kept.
  db.prepare("INSERT INTO list_changes (seq, lid, op, value, expires_at, at) VALUES (1, 999, 'add', 'victim@x.com', NULL, 1000), (2, 999, 'add', 'other@x.com', NULL, 1000)").run();
  const values = new ErasableValues('victim');
  values.addEvent({ event_id: 'e', event_type: 'login', user: { email: 'victim@x.com' } } as never);
  db.transaction(() => eraseListValues(db, tenant.tenant_id, 'live', values, 2_000))();
  t.is(loggedValues(db, 'victim@x.com'), 0);
  t.is(loggedValues(db, 'other@x.com'), 1, 'another person\'s value stays');
});
