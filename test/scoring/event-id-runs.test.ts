// Event ids kept beside the log in runs (scoring/event-id-runs.ts): the writer appends one per
// kRunEvents events stored, in the transaction that completes it; a start loads them and reads
// only the rest of the log; migration 20 writes the runs of the events stored before it. What
// the runs give must be what the log gives.
import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventIdRunWriter, kRunEvents, readEventIdRuns } from '../../src/scoring/event-id-runs.js';
import { EventIds } from '../../src/scoring/event-ids.js';
import { KeyHasher } from '../../src/state/keys.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { installSecret } from '../../src/store/install-secret.js';
import { migrate } from '../../src/store/migrate.js';
import { kMigrations } from '../../src/store/migrations/index.js';

interface Stored {
  readonly projectId: string;
  readonly eventId: string;
  readonly seq: number;
}

/** A migrated database in a temp dir with a project in each of two tenants' environments. */
function database(t: { teardown(fn: () => void): void }, migrations = kMigrations): { db: Db; secret: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'event-id-runs-'));
  const db = openDatabase(dir);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  migrate(db, migrations);
  const secret = installSecret(db);
  db.exec(`INSERT INTO tenants (tenant_id, name, created_at) VALUES ('ten_a', 'a', 0);
    INSERT INTO projects (project_id, tenant_id, name, environment, preset, created_at) VALUES ('prj_a', 'ten_a', 'a', 'live', 'default', 0), ('prj_b', 'ten_a', 'b', 'sandbox', 'default', 0)`);
  return { db, secret };
}

/** The writer's one run writer per database (made at its first event, as the writer's statements are). */
const kRunWriters = new WeakMap<Db, EventIdRunWriter>();

/** Stores `count` events as the writer does (a row, then the run writer told), `each` per transaction. */
function store(db: Db, count: number, from = 0, each = 50): Stored[] {
  let runs = kRunWriters.get(db);
  if (runs === undefined) {
    runs = EventIdRunWriter.forDatabase(db)!;
    kRunWriters.set(db, runs);
  }
  const insert = db.prepare(`INSERT INTO events (project_id, event_id, event_type, received_at, state, payload) VALUES (?, ?, 'payment', 0, 'pending', '{}')`);
  const stored: Stored[] = [];
  for (let i = from; i < from + count; i += each) {
    db.transaction(() => {
      for (let k = i; k < Math.min(i + each, from + count); k++) {
        const projectId = k % 3 === 0 ? 'prj_b' : 'prj_a';
        const eventId = `evt-${k}`;
        const seq = Number(insert.run(projectId, eventId).lastInsertRowid);
        runs.stored(seq);
        stored.push({ projectId, eventId, seq });
      }
    })();
  }
  return stored;
}

function assertAllFound(t: { true(value: boolean, message?: string): void; deepEqual(a: unknown, b: unknown, message?: string): void }, ids: EventIds, stored: readonly Stored[]): void {
  let missing = 0;
  for (const { projectId, eventId, seq } of stored) if (!ids.candidates(projectId, eventId).includes(seq)) missing++;
  t.deepEqual(missing, 0, 'every stored event is found at its row');
  t.deepEqual(ids.candidates('prj_a', 'evt-0'), [], 'evt-0 is of prj_b');
  t.deepEqual(ids.candidates('prj_a', 'never-sent'), []);
}

test('a run is written for every kRunEvents events stored; a start takes them and reads only the rest of the log', (t) => {
  const { db, secret } = database(t);
  const count = kRunEvents * 3 + 100;
  const stored = store(db, count);
  const runs = [...readEventIdRuns(db)];
  t.is(runs.length, 3);
  t.deepEqual(runs.map((run) => [run.firstSeq, run.lastSeq]), [[1, kRunEvents], [kRunEvents + 1, 2 * kRunEvents], [2 * kRunEvents + 1, 3 * kRunEvents]]);
  const ids = EventIds.load(db, new KeyHasher(secret), 1000);
  t.deepEqual(ids.loaded, { fromRuns: 3 * kRunEvents, fromLog: 100 });
  t.is(ids.size, count);
  assertAllFound(t, ids, stored);
  // The ids made at a start are those the server adds as it runs: the same key for the same id.
  const running = EventIds.load(db, new KeyHasher(secret));
  running.add('prj_c', 'evt-new', count + 1);
  t.deepEqual(running.candidates('prj_c', 'evt-new'), [count + 1]);
});

test('a run of events at seqs that follow each other stores no seqs (8 bytes per event); one with a gap stores them all', (t) => {
  const { db, secret } = database(t);
  const first = store(db, kRunEvents);
  // Rows of the log deleted by hand (nothing in the service deletes them), after the last run,
  // leave a gap in the next one.
  const second = store(db, kRunEvents + 20, 20_000);
  const gone = [second[kRunEvents + 6]!.seq, second[kRunEvents + 7]!.seq];
  db.prepare('DELETE FROM events WHERE seq IN (?, ?)').run(...gone);
  const third = store(db, kRunEvents, 40_000);
  const stored = db.prepare('SELECT first_seq, last_seq, length(keys) AS keys, length(seqs) AS seqs FROM event_id_runs ORDER BY last_seq').all();
  t.deepEqual(stored, [
    { first_seq: 1, last_seq: kRunEvents, keys: kRunEvents * 8, seqs: 0 },
    { first_seq: kRunEvents + 1, last_seq: 2 * kRunEvents, keys: kRunEvents * 8, seqs: 0 },
    // Written after the deletion, when seq 3,072 was stored: the 1,022 events over those 1,024 seqs.
    { first_seq: 2 * kRunEvents + 1, last_seq: 3 * kRunEvents, keys: (kRunEvents - 2) * 8, seqs: (kRunEvents - 2) * 4 },
  ]);
  const kept = [...first, ...second, ...third].filter((event) => !gone.includes(event.seq));
  const ids = EventIds.load(db, new KeyHasher(secret));
  t.deepEqual(ids.loaded, { fromRuns: 3 * kRunEvents - 2, fromLog: kept.length - (3 * kRunEvents - 2) });
  assertAllFound(t, ids, kept);
  // A run without seqs whose keys do not cover its seqs counts as a gap: the log is read from there.
  db.prepare('UPDATE event_id_runs SET last_seq = last_seq + 1 WHERE first_seq = 1').run();
  const again = EventIds.load(db, new KeyHasher(secret));
  t.is(again.loaded!.fromRuns, 0);
  assertAllFound(t, again, kept);
});

test('a run written by a transaction that rolls back goes with it; the runs after follow on without a gap', (t) => {
  const { db, secret } = database(t);
  const first = store(db, kRunEvents - 10);
  // The transaction that completes the first run is rolled back: its events and its run go.
  t.throws(() => db.transaction(() => {
    store(db, 20, kRunEvents - 10, 20);
    t.is([...readEventIdRuns(db)].length, 1, 'written in the transaction');
    throw new Error('rolled back');
  })(), { message: 'rolled back' });
  t.is([...readEventIdRuns(db)].length, 0);
  // Other events take those seqs; the writer's next runs cover them.
  const second = store(db, 2 * kRunEvents, 5000);
  const runs = [...readEventIdRuns(db)];
  t.deepEqual(runs.map((run) => run.firstSeq), [1, kRunEvents + 1]);
  const ids = EventIds.load(db, new KeyHasher(secret));
  t.deepEqual(ids.loaded, { fromRuns: 2 * kRunEvents, fromLog: kRunEvents - 10 });
  assertAllFound(t, ids, [...first, ...second]);
  t.deepEqual(ids.candidates('prj_a', `evt-${kRunEvents - 5}`), [], 'an event rolled back is not there');
});

test('runs that do not follow on (one deleted, or damaged) are used up to the gap; the log is read from there', (t) => {
  const { db, secret } = database(t);
  const stored = store(db, kRunEvents * 4);
  db.prepare('DELETE FROM event_id_runs WHERE last_seq = ?').run(2 * kRunEvents);
  const ids = EventIds.load(db, new KeyHasher(secret));
  t.deepEqual(ids.loaded, { fromRuns: kRunEvents, fromLog: 3 * kRunEvents });
  assertAllFound(t, ids, stored);

  // All deleted: the writer writes them again, two runs per event stored until it has caught up.
  db.prepare('DELETE FROM event_id_runs').run();
  const all = store(db, kRunEvents, 9000);
  // A run whose seqs do not match its keys counts as a gap too.
  db.prepare("UPDATE event_id_runs SET seqs = x'00'").run();
  const again = EventIds.load(db, new KeyHasher(secret));
  t.deepEqual(again.loaded, { fromRuns: 0, fromLog: 5 * kRunEvents });
  assertAllFound(t, again, [...stored, ...all]);
});

test('migration 20 writes the runs of the events stored before it, the last one partial', (t) => {
  const { db, secret } = database(t, kMigrations.filter((migration) => migration.version < 20));
  const insert = db.prepare(`INSERT INTO events (project_id, event_id, event_type, received_at, state, payload) VALUES (?, ?, 'payment', 0, 'scored', '{}')`);
  const stored: Stored[] = [];
  for (let i = 0; i < 2 * kRunEvents + 7; i++) {
    const projectId = i % 3 === 0 ? 'prj_b' : 'prj_a';
    stored.push({ projectId, eventId: `evt-${i}`, seq: Number(insert.run(projectId, `evt-${i}`).lastInsertRowid) });
  }
  migrate(db, kMigrations.filter((migration) => migration.version <= 20));
  t.is(db.pragma('user_version', { simple: true }), 20);
  t.deepEqual([...readEventIdRuns(db)].map((run) => [run.firstSeq, run.lastSeq]), [[1, kRunEvents], [kRunEvents + 1, 2 * kRunEvents], [2 * kRunEvents + 1, 2 * kRunEvents + 7]]);
  const ids = EventIds.load(db, new KeyHasher(secret));
  t.deepEqual(ids.loaded, { fromRuns: 2 * kRunEvents + 7, fromLog: 0 });
  assertAllFound(t, ids, stored);
  // The writer goes on after the partial run.
  const more = store(db, kRunEvents, 100_000);
  t.is([...readEventIdRuns(db)].at(-1)!.lastSeq, 3 * kRunEvents + 7);
  assertAllFound(t, EventIds.load(db, new KeyHasher(secret)), [...stored, ...more]);
});

test('a database without an install secret stores no runs (nothing to key them with) and loads from the log', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  t.is(EventIdRunWriter.forDatabase(db), null);
});
