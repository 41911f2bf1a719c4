// Migrations are recorded one by one, so one numbered below an applied one still runs: versions
// are handed out to parts that land in parallel, and a data dir may have seen 1 and 6 before 2-5.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';

test('a migration with a lower version that lands later is still applied', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  const first = { version: 1, name: 'first', sql: 'CREATE TABLE first (x)' };
  const sixth = { version: 6, name: 'sixth', sql: 'CREATE TABLE sixth (x)' };
  const second = { version: 2, name: 'second', sql: 'CREATE TABLE second (x)' };
  migrate(db, [first, sixth]);
  migrate(db, [first, second, sixth]);
  t.truthy(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'second'").get());
});

test('applying twice changes nothing, and a database from a newer build is refused', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  const first = { version: 1, name: 'first', sql: 'CREATE TABLE first (x)' };
  const second = { version: 2, name: 'second', sql: 'CREATE TABLE second (x)' };
  t.is(migrate(db, [first, second]), 2);
  t.is(migrate(db, [first, second]), 2);
  t.throws(() => migrate(db, [first]), { message: /newer build/ });
});
