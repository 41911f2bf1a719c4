// The SQLite that better-sqlite3 loads is the one scripts/sqlite-secure-delete.mjs patched at
// install: with secure_delete on, an erased value leaves no byte in the database file however its
// pages were rebalanced before. Stock SQLite 3.53.2 fails the last test in each of its 20 runs
// (21–36 copies of erased values left in each): a rebalanced page keeps copies of cells between its
// cell pointers and its cells, which is how an erased payload once stayed in the file in CI.
import test from 'ava';
import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kSecureDeletePatchOption, openDatabase, requireSecureDeletePatch, SqliteBuildError } from '../../src/store/database.js';
import { makeDataDir } from '../_helpers/server.js';

test('the SQLite build carries the erasure patch, and a build without it is refused', (t) => {
  const db = new Database(':memory:');
  try {
    t.true((db.pragma('compile_options') as Array<{ compile_options: string }>).some((row) => row.compile_options === kSecureDeletePatchOption));
    t.notThrows(() => requireSecureDeletePatch(db));
  } finally {
    db.close();
  }
  const stock = { pragma: () => [{ compile_options: 'ENABLE_FTS5' }, { compile_options: 'THREADSAFE=2' }] } as unknown as Pick<Database.Database, 'pragma'>;
  const error = t.throws(() => requireSecureDeletePatch(stock), { instanceOf: SqliteBuildError });
  t.regex(error!.message, /npm install/);
});

/** A small deterministic generator (mulberry32): the same runs every time. */
function generator(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return Math.floor((((x ^ (x >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/**
 * Rows carrying a marker are inserted, grown, shrunk and deleted at random in a rowid table with an
 * index and in a WITHOUT ROWID table (keys inserted in the middle: splits, merges, rebuilt leaves
 * and interior pages), with checkpoints now and then; then every marker is erased and the WAL
 * emptied. Returns how many markers are left in the files.
 */
function markersLeft(dataDir: string, seed: number): number {
  const random = generator(seed);
  const db = openDatabase(dataDir);
  db.pragma('cache_size = -256');
  db.exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT, r BLOB); CREATE INDEX t_v ON t(v);
           CREATE TABLE u (v TEXT PRIMARY KEY, n BLOB) WITHOUT ROWID;`);
  const marker = (id: number): string => `ERASEME${String(id).padStart(7, '0')}`;
  const insertT = db.prepare('INSERT OR REPLACE INTO t (k, v, r) VALUES (?, ?, ?)');
  const insertU = db.prepare('INSERT OR REPLACE INTO u (v, n) VALUES (?, ?)');
  const growT = db.prepare('UPDATE t SET r = ? WHERE k = ?');
  const growU = db.prepare('UPDATE u SET n = ? WHERE v = ?');
  const deleteT = db.prepare('DELETE FROM t WHERE k = ?');
  const deleteU = db.prepare('DELETE FROM u WHERE v = ?');
  const keysU: string[] = [];
  let id = 0;
  for (let round = 0; round < 40; round++) {
    db.transaction(() => {
      for (let i = 0; i < 150; i++) {
        const value = `${marker(id++)}${'p'.repeat(random(400))}`;
        const op = random(10);
        if (op < 3) insertT.run(random(6000), value, random(2) === 0 ? Buffer.alloc(random(900), 3) : null);
        else if (op < 5) {
          const key = `${random(6000).toString(36)}${value.slice(0, 14 + random(200))}`;
          insertU.run(key, Buffer.alloc(random(300), 4));
          keysU.push(key);
        } else if (op < 7) growT.run(Buffer.alloc(random(1500), 5), random(6000));
        else if (op < 8 && keysU.length > 0) growU.run(Buffer.alloc(random(800), 6), keysU[random(keysU.length)]);
        else if (op < 9) deleteT.run(random(6000));
        else if (keysU.length > 0) deleteU.run(keysU.splice(random(keysU.length), 1)[0]);
      }
    })();
    if (random(4) === 0) db.pragma('wal_checkpoint(PASSIVE)');
  }
  db.exec(`UPDATE t SET v = 'erased'; DELETE FROM u;`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  let left = 0;
  for (const name of readdirSync(dataDir)) {
    const bytes = readFileSync(join(dataDir, name));
    for (let at = bytes.indexOf('ERASEME'); at >= 0; at = bytes.indexOf('ERASEME', at + 1)) left++;
  }
  return left;
}

test('with secure_delete, an erased value leaves no byte in the file, however its pages were rebalanced', (t) => {
  for (let seed = 1; seed <= 20; seed++) {
    t.is(markersLeft(makeDataDir(), seed), 0, `run ${seed}`);
  }
});
