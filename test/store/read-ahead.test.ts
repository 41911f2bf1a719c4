// Tables read ahead in file order (src/store/read-ahead.ts): every page of a table's B-tree, as
// SQLite's dbstat counts them, or of a rowid table only the pages that lead to rowids from a given
// one; a file that is not what the B-tree says costs nothing but reads.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAheadTables } from '../../src/store/read-ahead.js';

function database(t: { teardown(fn: () => void): void }): { db: Database.Database; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'read-ahead-'));
  const path = join(dir, 'test.db');
  const db = new Database(path);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Rows at random keys in a WITHOUT ROWID table (its pages all over the file, as account_links'
  // are) and an appended rowid table (as the log is), written in turns.
  db.exec(`CREATE TABLE links (a TEXT NOT NULL, b TEXT NOT NULL, masked TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;
    CREATE TABLE log (seq INTEGER PRIMARY KEY, payload TEXT NOT NULL);
    CREATE INDEX links_by_b ON links (b);`);
  const link = db.prepare('INSERT INTO links (a, b, masked) VALUES (?, ?, ?)');
  const log = db.prepare('INSERT INTO log (payload) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 30_000; i++) {
      link.run(randomBytes(12).toString('base64url'), randomBytes(12).toString('base64url'), 'j***@example.com');
      log.run('x'.repeat(300 + (i % 200)));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { db, path };
}

function pagesOf(db: Database.Database, table: string): number {
  return db.prepare('SELECT count(*) FROM dbstat WHERE name = ?').pluck().get(table) as number;
}

test("every page of each table is read, and none of its indexes'", (t) => {
  const { db } = database(t);
  const links = pagesOf(db, 'links');
  const log = pagesOf(db, 'log');
  t.true(links > 100 && log > 1000, `${links} and ${log} pages`);
  t.is(readAheadTables(db, ['links']).pages, links);
  t.is(readAheadTables(db, ['links', 'log']).pages, links + log);
  const ahead = readAheadTables(db, ['log', 'no_such_table']);
  t.is(ahead.pages, log);
  t.true(ahead.bytes >= log * 4096);
});

test('of a rowid table from a rowid on, the pages that lead to those rows: their leaves and the path to them', (t) => {
  const { db } = database(t);
  const log = pagesOf(db, 'log');
  const leaves = db.prepare("SELECT count(*) FROM dbstat WHERE name = 'log' AND pagetype = 'leaf'").pluck().get() as number;
  // dbstat's path of the root is '/', of its children '/000/', and so on: a slash per level.
  const depth = db.prepare("SELECT max(length(path) - length(replace(path, '/', ''))) FROM dbstat WHERE name = 'log'").pluck().get() as number;
  t.is(readAheadTables(db, [{ table: 'log', fromRowid: 1 }]).pages, log, 'from the first row: all of it');
  // The last tenth of the rows: about a tenth of the leaves, and at most the interior pages above them.
  const tail = readAheadTables(db, [{ table: 'log', fromRowid: 27_001 }]).pages;
  t.true(tail >= leaves / 10 && tail <= leaves / 10 + log - leaves + 2, `${tail} pages of ${log} (${leaves} leaves)`);
  // Past the last row: one page per level, down the right edge.
  t.is(readAheadTables(db, [{ table: 'log', fromRowid: 30_001 }]).pages, depth);
});

test('a file whose pages are not the B-tree the schema names (damaged, or behind its WAL) is read without harm', (t) => {
  const { db, path } = database(t);
  const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'links'").pluck().get() as number;
  const other = join(path, '..', 'garbage.db');
  // The same header and schema, every other page random bytes.
  const file = Buffer.alloc(200 * 4096);
  readFileSync(path).copy(file, 0, 0, 4096);
  randomBytes(file.length - 4096).copy(file, 4096);
  writeFileSync(other, file);
  const ahead = readAheadTables(db, ['links', 'log'], other);
  // Each page at most once, whatever its bytes say.
  t.true(ahead.pages >= 1 && ahead.pages <= 200, `${ahead.pages} pages read; root ${root}`);
});

test('an in-memory database reads nothing', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE x (a)');
  t.deepEqual(readAheadTables(db, ['x']), { pages: 0, bytes: 0, ms: 0 });
});
