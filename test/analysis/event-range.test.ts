// The event ranges of backtests and rule statistics (src/analysis/event-range.ts): a time range is
// found as a seq range by binary search, widened for events committed a little after they arrived,
// read in chunks by rowid.
import test from 'ava';
import Database from 'better-sqlite3';
import { chunkQuery, EventChunks, kArrivalDisorderMs, kLogSeqBoundsQuery, kTailOrderQuery, logSeqBounds, seqRangeOf, snapshotRange } from '../../src/analysis/event-range.js';
import { kMigrations } from '../../src/store/migrations/index.js';
import { migrate } from '../../src/store/migrate.js';

function store(): Database.Database {
  const db = new Database(':memory:');
  migrate(db, kMigrations);
  return db;
}

test('a chunk is read by rowid range, not through the (project_id, event_id) index', (t) => {
  const db = store();
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${chunkQuery('event_id, received_at')}`).all({ after: 0, high: 10, projectId: 'p', from: 0, to: 1, chunk: 5 }) as Array<{ detail: string }>;
  t.deepEqual(plan.map((row) => row.detail), ['SEARCH events USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)']);
});

test('the first and last seq of the log are read from the ends of its B-tree, not by a scan of the whole log', (t) => {
  const db = store();
  t.deepEqual(logSeqBounds(db), { low: null, high: null });
  const insert = db.prepare(`INSERT INTO events (seq, project_id, event_id, event_type, received_at, state, payload) VALUES (?, 'p', ?, 'payment', 0, 'scored', '{}')`);
  for (const seq of [7, 8, 40]) insert.run(seq, `e${seq}`);
  t.deepEqual(logSeqBounds(db), { low: 7, high: 40 });
  // min() and max() in one query made SQLite scan every row (9 GB at 10M events); each alone reads one end.
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${kLogSeqBoundsQuery}`).all() as Array<{ detail: string }>).map((row) => row.detail);
  t.false(plan.some((detail) => detail.startsWith('SCAN events')), plan.join('; '));
});

test('the events of a range, in chunks: projects interleaved, late commits inside the widened range found, bounds exact', (t) => {
  const db = store();
  const insert = db.prepare(`INSERT INTO events (seq, project_id, event_id, event_type, received_at, state, payload) VALUES (?, ?, ?, 'payment', ?, 'scored', '{}')`);
  const minute = 60_000;
  // Two projects, one event a minute each, seq in arrival order (with gaps) ...
  for (let i = 0; i < 100; i++) {
    insert.run(10 * i, 'a', `a${i}`, i * minute);
    insert.run(10 * i + 1, 'b', `b${i}`, i * minute);
  }
  // ... an event that arrived inside the range and committed after minute 45's events, and one
  // that arrived before the range and committed among its events.
  insert.run(455, 'a', 'late_inside', 39 * minute + 30_000);
  insert.run(335, 'a', 'late_before', 29 * minute + 30_000);
  const from = 30 * minute;
  const to = 40 * minute;
  const range = seqRangeOf(db, from, to);
  // Minute 20 (seq 200) to minute 49 (seqs 490, 491): widened by kArrivalDisorderMs; the bounds are
  // seq values, which need not be rows (192 to 199 hold none).
  t.deepEqual(range, { low: 192, high: 491 });
  const chunks = new EventChunks<{ seq: number; event_id: string }>(db, 'event_id', 'a', from, to, range, 3);
  const seen: string[] = [];
  for (let rows = chunks.next(); rows.length > 0; rows = chunks.next()) {
    t.true(rows.length <= 3);
    seen.push(...rows.map((row) => row.event_id));
  }
  t.deepEqual(seen, ['a30', 'a31', 'a32', 'a33', 'a34', 'a35', 'a36', 'a37', 'a38', 'a39', 'late_inside']);
  t.is(chunks.fraction, 1);
  t.is(kArrivalDisorderMs, 10 * minute);
});

test('a backtest\'s snapshot: the range\'s events scored by then stay those, whatever is scored later; read from the tail of the range by rowid', (t) => {
  const db = store();
  const minute = 60_000;
  const insert = db.prepare(`INSERT INTO events (seq, project_id, event_id, event_type, received_at, state, payload, scored_order) VALUES (?, 'p', ?, 'payment', ?, ?, '{}', ?)`);
  // Seqs 1–3 scored before migration 013 numbered them; 4–9 scored in order 1–6, except seq 6,
  // an async event still pending; the derived stamp covers orders up to 2 (seq 5), so from_seq is
  // 6 (the pending one).
  for (let seq = 1; seq <= 3; seq++) insert.run(seq, `e${seq}`, seq * minute, 'scored', null);
  for (const [seq, order] of [[4, 1], [5, 2], [7, 3], [8, 4], [9, 5]] as const) insert.run(seq, `e${seq}`, seq * minute, 'scored', order);
  insert.run(6, 'e6', 6 * minute, 'pending', null);
  db.prepare('UPDATE derived_stamp SET scored_order = 2, from_seq = 6 WHERE id = 1').run();

  // The range's tail from from_seq on (seqs 6–9) says how far scoring had got.
  const snapshot = snapshotRange(db, 0, 10 * minute);
  t.deepEqual(snapshot, { range: { low: 1, high: 9 }, scoredThrough: 5 });
  // Later: the pending event is scored (order 6), and a new event too (seq 10, order 7).
  db.prepare(`UPDATE events SET state = 'scored', scored_order = 6 WHERE seq = 6`).run();
  insert.run(10, 'e10', 9 * minute + 1, 'scored', 7);
  const rows = new EventChunks<{ seq: number; state: string; scored_order: number | null }>(db, 'state, scored_order', 'p', 0, 10 * minute, snapshot.range, 100).next();
  const scoredThen = rows.filter((row) => row.state === 'scored' && (row.scored_order === null || row.scored_order <= snapshot.scoredThrough)).map((row) => row.seq);
  t.deepEqual(scoredThen, [1, 2, 3, 4, 5, 7, 8, 9], 'the event pending at the snapshot is out; the one committed later is past the range');

  // Nothing in the range's tail: the stamp bounds it.
  db.prepare('UPDATE derived_stamp SET scored_order = 7, from_seq = 11 WHERE id = 1').run();
  t.is(snapshotRange(db, 0, 10 * minute).scoredThrough, 7);
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${kTailOrderQuery}`).all(1, 2) as Array<{ detail: string }>).map((row) => row.detail);
  t.deepEqual(plan, ['SEARCH events USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)']);
});
