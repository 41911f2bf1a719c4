// The writer and its thread (src/store/writer.ts, writer-thread.ts) when a transaction fails in
// ways SQLite handles itself, and when the thread is gone: every call settles.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { WriteError, Writer, WriterClosedError } from '../../src/store/writer.js';
import { provisionTenant } from '../../src/tenancy/provision.js';
import { kWriterThreadScript, type WriteCommands } from '../../src/write-commands.js';

function dataDir(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-writer-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const pending = (projectId: string, eventId: string) => ({ projectId, eventId, eventType: 'payment', receivedAt: 1_000, payload: '{}' });

test('a command whose error rolled the transaction back already fails alone; the rest of its batch and later calls are written', async (t) => {
  const dir = dataDir(t);
  const db = openDatabase(dir);
  migrate(db);
  const { live } = provisionTenant(db, 'shop', 1_000);
  // RAISE(ROLLBACK) ends the transaction inside SQLite, as a full disk does.
  db.exec(`CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.event_id = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'boom'); END`);
  db.close();
  const writer = new Writer<WriteCommands>(kWriterThreadScript, { dataDir: dir, busyTimeoutMs: 1_000 });
  await writer.ready();
  t.teardown(() => writer.close());
  // Called in one turn: one batch, one transaction.
  const good = writer.call('insertPendingEvent', pending(live.project_id, 'good'));
  const boom = writer.call('insertPendingEvent', pending(live.project_id, 'boom'));
  const [goodOutcome, boomOutcome] = await Promise.allSettled([good, boom]);
  t.is(goodOutcome.status, 'fulfilled', 'its neighbour is retried alone and written');
  t.is(boomOutcome.status, 'rejected');
  t.true((boomOutcome as PromiseRejectedResult).reason instanceof WriteError);
  t.regex(((boomOutcome as PromiseRejectedResult).reason as Error).message, /boom/);
  // The thread is still there.
  const later = await writer.call('insertPendingEvent', pending(live.project_id, 'later'));
  t.is(typeof later, 'number');
  const check = openDatabase(dir, { readonly: true });
  t.deepEqual(check.prepare('SELECT event_id FROM events ORDER BY seq').pluck().all(), ['good', 'later']);
  check.close();
});

test('batches that arrive while a transaction waits are committed together in the next one', async (t) => {
  const dir = dataDir(t);
  const db = openDatabase(dir);
  migrate(db);
  const { live } = provisionTenant(db, 'shop', 1_000);
  db.close();
  const writer = new Writer<WriteCommands>(kWriterThreadScript, { dataDir: dir, busyTimeoutMs: 60_000 });
  await writer.ready();
  t.teardown(() => writer.close());
  const lock = openDatabase(dir);
  lock.exec('BEGIN IMMEDIATE');
  const first = writer.call('insertPendingEvent', pending(live.project_id, 'first'));
  // The writer thread holds the first batch, waiting for the lock; three more come, one per turn.
  while (writer.lockWaits === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const later: Array<Promise<number>> = [];
  for (const id of ['second', 'third', 'fourth']) {
    later.push(writer.call('insertPendingEvent', pending(live.project_id, id)));
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.is(writer.batches, 4, 'four messages to the thread');
  const before = writer.commits;
  lock.exec('COMMIT');
  lock.close();
  await Promise.all([first, ...later]);
  t.is(writer.commits - before, 2, 'the first batch, then the three that waited, in one transaction');
  const check = openDatabase(dir, { readonly: true });
  t.deepEqual(check.prepare('SELECT event_id FROM events ORDER BY seq').pluck().all(), ['first', 'second', 'third', 'fourth']);
  check.close();
});

test('a writer whose thread has stopped refuses calls at once, and closes', async (t) => {
  // No such directory: the thread cannot open the database and ends.
  const writer = new Writer<WriteCommands>(kWriterThreadScript, { dataDir: join(dataDir(t), 'missing', 'deeper'), busyTimeoutMs: 1_000 });
  await t.throwsAsync(writer.ready(), { any: true, message: /directory does not exist/ });
  await t.throwsAsync(writer.call('insertPendingEvent', pending('prj_x', 'e1')), { instanceOf: WriterClosedError });
  await writer.close();
  t.pass('closed without waiting for a thread that is gone');
});
