// Known bug in src/store/migrate.ts, kept here as a failing test until it is fixed: the schema
// version is one number (user_version), and a migration runs only when its version is above it.
// Versions are handed out to parts that land in parallel (fingerprints took 6 while 2-5 are still
// being written), so a database made by a build that has 1 and 6 is at version 6, and migrations
// 2-5 arriving later are skipped on it, silently. Recording each applied version (a table of
// applied migrations) fixes it; then turn this test.failing into test.
import test from 'ava';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrate.js';

test.failing('a migration with a lower version that lands later is still applied', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  const first = { version: 1, name: 'first', sql: 'CREATE TABLE first (x)' };
  const sixth = { version: 6, name: 'sixth', sql: 'CREATE TABLE sixth (x)' };
  const second = { version: 2, name: 'second', sql: 'CREATE TABLE second (x)' };
  migrate(db, [first, sixth]);
  migrate(db, [first, second, sixth]);
  t.truthy(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'second'").get());
});
