// The writer and its thread (src/store/writer.ts, writer-thread.ts) when a transaction fails in
// ways SQLite handles itself, and when the thread is gone: every call settles.
import test, { type ExecutionContext } from 'ava';
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

/** A migrated database with one tenant (`sql` run on it first), and a writer on it; the live project's id. */
async function openWriter(t: ExecutionContext, busyTimeoutMs: number, sql = ''): Promise<{ dir: string; writer: Writer<WriteCommands>; projectId: string }> {
  const dir = dataDir(t);
  const db = openDatabase(dir);
  migrate(db);
  const { live } = provisionTenant(db, 'shop', 1_000);
  if (sql !== '') db.exec(sql);
  db.close();
  const writer = new Writer<WriteCommands>(kWriterThreadScript, { dataDir: dir, busyTimeoutMs });
  await writer.ready();
  t.teardown(() => writer.close());
  return { dir, writer, projectId: live.project_id };
}

test('a command whose error rolled the transaction back already fails alone; the rest of its batch and later calls are written', async (t) => {
  // RAISE(ROLLBACK) ends the transaction inside SQLite, as a full disk does.
  const { dir, writer, projectId } = await openWriter(t, 1_000, `CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.event_id = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'boom'); END`);
  // Called in one turn: one batch, one transaction.
  const good = writer.call('insertPendingEvent', pending(projectId, 'good'));
  const boom = writer.call('insertPendingEvent', pending(projectId, 'boom'));
  const [goodOutcome, boomOutcome] = await Promise.allSettled([good, boom]);
  t.is(goodOutcome.status, 'fulfilled', 'its neighbour is retried alone and written');
  t.is(boomOutcome.status, 'rejected');
  t.true((boomOutcome as PromiseRejectedResult).reason instanceof WriteError);
  t.regex(((boomOutcome as PromiseRejectedResult).reason as Error).message, /boom/);
  // The thread is still there.
  const later = await writer.call('insertPendingEvent', pending(projectId, 'later'));
  t.is(typeof later, 'number');
  const check = openDatabase(dir, { readonly: true });
  t.deepEqual(check.prepare('SELECT event_id FROM events ORDER BY seq').pluck().all(), ['good', 'later']);
  check.close();
});

test('commits counts the transactions: one per batch, one per call of a batch run call by call', async (t) => {
  const { writer, projectId } = await openWriter(t, 1_000, `CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.event_id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`);
  const before = writer.commits;
  await Promise.all([writer.call('insertPendingEvent', pending(projectId, 'a')), writer.call('insertPendingEvent', pending(projectId, 'b'))]);
  t.is(writer.commits - before, 1, 'one batch, one transaction');
  const mixed = await Promise.allSettled([writer.call('insertPendingEvent', pending(projectId, 'c')), writer.call('insertPendingEvent', pending(projectId, 'boom'))]);
  t.deepEqual(mixed.map((outcome) => outcome.status), ['fulfilled', 'rejected']);
  t.is(writer.commits - before, 2, 'then the good call of the failed batch, alone');
});

test('storageFailure: set when the database refuses a transaction, cleared only by a commit that wrote', async (t) => {
  const { dir, writer, projectId } = await openWriter(t, 50);
  t.is(writer.storageFailure, null);
  const lock = openDatabase(dir);
  lock.exec('BEGIN EXCLUSIVE');
  await t.throwsAsync(writer.call('insertPendingEvent', pending(projectId, 'locked-out')), { instanceOf: WriteError });
  t.regex(writer.storageFailure ?? '', /^SQLITE_BUSY/);
  lock.exec('ROLLBACK');
  lock.close();
  // A transaction that changes nothing commits even on a full disk: it proves nothing.
  await writer.call('waitingCases');
  t.regex(writer.storageFailure ?? '', /^SQLITE_BUSY/);
  await writer.call('insertPendingEvent', pending(projectId, 'written'));
  t.is(writer.storageFailure, null);
});

test('a writer whose thread has stopped refuses calls at once, and closes', async (t) => {
  // No such directory: the thread cannot open the database and ends.
  const writer = new Writer<WriteCommands>(kWriterThreadScript, { dataDir: join(dataDir(t), 'missing', 'deeper'), busyTimeoutMs: 1_000 });
  await t.throwsAsync(writer.ready(), { any: true, message: /directory does not exist/ });
  await t.throwsAsync(writer.call('insertPendingEvent', pending('prj_x', 'e1')), { instanceOf: WriterClosedError });
  await writer.close();
  t.pass('closed without waiting for a thread that is gone');
});
