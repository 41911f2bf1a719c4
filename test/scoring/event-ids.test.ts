// The in-memory event ids: loaded from the events table, told of new events, and asked which rows
// may hold an id — none for an id never stored in that project.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { EventIds } from '../../src/scoring/event-ids.js';
import { KeyHasher } from '../../src/state/keys.js';

function table(): Database.Database {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY, project_id TEXT NOT NULL, event_id TEXT NOT NULL)');
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
