// The in-memory event ids: loaded from the events table, told of new events, and asked which rows
// may hold an id — none for an id never stored in that project.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { EventIds } from '../../src/scoring/event-ids.js';
import { kEventIdRunsMigration } from '../../src/store/migrations/020-event-id-runs.js';
import { KeyHasher } from '../../src/state/keys.js';
import { partBuffers } from '../../src/state/slots.js';

function table(): Database.Database {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY, project_id TEXT NOT NULL, event_id TEXT NOT NULL)');
  db.exec(kEventIdRunsMigration);
  return db;
}

test('a start loads every stored event; each is found at its row, in its project only', (t) => {
  const db = table();
  const insert = db.prepare('INSERT INTO events (project_id, event_id) VALUES (?, ?)');
  const stored: Array<[string, string, number]> = [];
  for (let i = 0; i < 5500; i++) {
    const project = `prj_${i % 3}`;
    const eventId = `evt-${i}`;
    stored.push([project, eventId, Number(insert.run(project, eventId).lastInsertRowid)]);
  }
  // In chunks of 1,000 rows (the last one partial), as a start reads them.
  const ids = EventIds.load(db, new KeyHasher(randomBytes(32)), 1000);
  for (const [project, eventId, seq] of stored) t.true(ids.candidates(project, eventId).includes(seq));
  t.deepEqual(ids.candidates('prj_0', 'evt-1'), [], 'evt-1 is in prj_1');
  t.deepEqual(ids.candidates('prj_9', 'evt-0'), [], 'an unknown project');
  t.deepEqual(ids.candidates('prj_0', 'never-sent'), []);
});

test('an event added after the start is found; the same id in another project is another event', (t) => {
  const ids = EventIds.load(table(), new KeyHasher(randomBytes(32)));
  t.deepEqual(ids.candidates('prj_a', 'e1'), []);
  ids.add('prj_a', 'e1', 7);
  ids.add('prj_b', 'e1', 8);
  t.deepEqual(ids.candidates('prj_a', 'e1'), [7]);
  t.deepEqual(ids.candidates('prj_b', 'e1'), [8]);
});

test('moved to another thread as parts, the ids are found there, and more can be added', (t) => {
  const db = table();
  const insert = db.prepare('INSERT INTO events (project_id, event_id) VALUES (?, ?)');
  for (let i = 0; i < 3000; i++) insert.run(`prj_${i % 4}`, `evt-${i}`);
  const hasher = new KeyHasher(randomBytes(32));
  const loaded = EventIds.load(db, hasher);
  const parts = loaded.parts();
  const buffers = partBuffers(parts);
  // Moved as a start's thread moves them (start-loads.ts): transferred, not copied.
  const moved = EventIds.fromParts(hasher, structuredClone(parts, { transfer: buffers }));
  t.true(buffers.every((buffer) => buffer.byteLength === 0), 'the loading side keeps nothing');
  t.is(moved.size, 3000);
  for (let i = 0; i < 3000; i++) t.deepEqual(moved.candidates(`prj_${i % 4}`, `evt-${i}`), [i + 1], `evt-${i}`);
  t.deepEqual(moved.candidates('prj_1', 'evt-0'), []);
  // Growing past what was loaded: the moved columns grow as their own.
  for (let i = 3000; i < 40_000; i++) moved.add(`prj_${i % 5}`, `evt-${i}`, i + 1);
  for (let i = 0; i < 40_000; i += 7) t.deepEqual(moved.candidates(`prj_${i < 3000 ? i % 4 : i % 5}`, `evt-${i}`), [i + 1], `evt-${i} after growth`);
  t.is(moved.size, 40_000);
});
