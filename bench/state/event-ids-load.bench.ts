// A server's start with many stored events: how long loading every (project, event id) into memory
// takes (src/scoring/event-ids.ts) and what it holds, on a database file holding only the columns
// the load reads — from the log's rows, then from the runs of keys kept beside the log
// (src/scoring/event-id-runs.ts), after writing them as migration 20 does. The events are written
// straight into the file (fast), then loaded.
//
//   node dist/bench/state/event-ids-load.bench.js          (after npm run build; BENCH_EVENTS=10000000)
import Database from 'better-sqlite3';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventIdRunWriter } from '../../src/scoring/event-id-runs.js';
import { EventIds } from '../../src/scoring/event-ids.js';
import { KeyHasher } from '../../src/state/keys.js';
import { kEventIdRunsMigration } from '../../src/store/migrations/020-event-id-runs.js';

const kEvents = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const kProjects = 4;
const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-event-ids-'));
try {
  const db = new Database(join(dir, 'events.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY, project_id TEXT NOT NULL, event_id TEXT NOT NULL)');
  db.exec(kEventIdRunsMigration);
  const insert = db.prepare('INSERT INTO events (project_id, event_id) VALUES (?, ?)');
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) insert.run(`prj_${String(i % kProjects).padStart(26, '0')}`, randomUUID());
  });
  for (let from = 0; from < kEvents; from += 100_000) batch(from, Math.min(kEvents, from + 100_000));
  db.close();

  const hasher = new KeyHasher(randomBytes(32));
  const load = (what: string): void => {
    const read = new Database(join(dir, 'events.db'), { readonly: true });
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const ids = EventIds.load(read, hasher);
    const seconds = (performance.now() - started) / 1000;
    const rssAfter = process.memoryUsage().rss;
    read.close();
    console.log(`${what}: ${kEvents.toLocaleString('en-US')} event ids loaded in ${seconds.toFixed(1)} s (${((seconds * 1e6) / kEvents).toFixed(2)} µs per id; ` +
      `${ids.loaded.fromRuns.toLocaleString('en-US')} from runs, ${ids.loaded.fromLog.toLocaleString('en-US')} from the log's rows)`);
    console.log(`  resident set grew by ${((rssAfter - rssBefore) / 1048576).toFixed(0)} MiB: ${((rssAfter - rssBefore) / kEvents).toFixed(1)} bytes per id`);
    if (ids.candidates('prj_none', 'x').length !== 0) throw new Error('an unknown project has no events');
  };
  load('from the log');
  const write = new Database(join(dir, 'events.db'));
  const started = performance.now();
  new EventIdRunWriter(write, hasher).appendRuns(kEvents, Infinity, true);
  console.log(`runs written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  write.close();
  load('from the runs');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
