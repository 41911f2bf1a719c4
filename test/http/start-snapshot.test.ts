// The start snapshot (scoring/start-snapshot.ts): written by a clean stop, used by the next start
// only while the database is as the stop left it (store/snapshot-seal.ts), deleted by every start.
import test from 'ava';
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { readPartsFile, writePartsFile } from '../../src/store/parts-file.js';
import { minimalEvent } from '../_helpers/events.js';
import { heldAt } from '../_helpers/faults.js';

const kSnapshot = 'start-snapshot';

function withDb<T>(dataDir: string, use: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  try {
    return use(db);
  } finally {
    db.close();
  }
}

const sealCount = (dataDir: string): number => withDb(dataDir, (db) => (db.prepare('SELECT count(*) AS n FROM start_snapshot').get() as { n: number }).n);
const guardCount = (dataDir: string): number =>
  withDb(dataDir, (db) => (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'start_snapshot_guard_%'").get() as { n: number }).n);

/** A server with `events` scored events, stopped cleanly; its data dir kept. */
async function stoppedWithEvents(t: { teardown(fn: () => unknown): void }, events: number): Promise<{ dataDir: string; key: string; bodies: object[] }> {
  const server = await startServer({ keepDataDir: true });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const bodies = Array.from({ length: events }, () => minimalEvent());
  for (const body of bodies) {
    const response = await api(server, 'POST', '/v1/events', { key, body });
    if (response.status !== 200) throw new Error(response.text);
  }
  await server.stop();
  return { dataDir: server.dataDir, key, bodies };
}

async function restart(t: { teardown(fn: () => unknown): void }, dataDir: string): Promise<TestServer> {
  const server = await startServer({ dataDir, keepDataDir: true });
  t.teardown(() => server.stop());
  return server;
}

test('a clean stop writes the snapshot (0600) and seals the database; the next start uses it once and deletes file and seal', async (t) => {
  const { dataDir, key, bodies } = await stoppedWithEvents(t, 4);
  t.true(existsSync(join(dataDir, kSnapshot)));
  t.is(statSync(join(dataDir, kSnapshot)).mode & 0o777, 0o600);
  t.is(sealCount(dataDir), 1);
  t.is(guardCount(dataDir), 24);

  const server = await restart(t, dataDir);
  t.regex(server.output(), /"event_ids":4,.*"from_snapshot":true/);
  t.false(existsSync(join(dataDir, kSnapshot)), 'the start deletes the file it used');
  t.is(sealCount(dataDir), 0);
  t.is(guardCount(dataDir), 0, 'no trigger is left while serving');
  // The ids came back: the same id and body answers as stored, another body is a conflict.
  const again = await api(server, 'POST', '/v1/events', { key, body: bodies[0] });
  t.is(again.status, 200, again.text);
  const conflict = await api(server, 'POST', '/v1/events', { key, body: { ...bodies[1], event_type: 'login' } });
  t.is(conflict.status, 409, conflict.text);
  t.is(conflict.body.errors[0]?.code, 'EVENT_ID_CONFLICT');

  // A crash writes none: the start after it reads the log.
  await server.kill();
  t.false(existsSync(join(dataDir, kSnapshot)));
  const afterCrash = await restart(t, dataDir);
  t.regex(afterCrash.output(), /"event_ids":4,.*"from_snapshot":false/);
  t.notRegex(afterCrash.output(), /start snapshot is not used/, 'no file, nothing to say');
});

test('a change to the database while the server is stopped voids the snapshot: the start loads from the tables and deletes the file', async (t) => {
  const { dataDir } = await stoppedWithEvents(t, 3);
  // One event deleted by hand (the sqlite3 shell, a restore of rows): the snapshot still has its id.
  withDb(dataDir, (db) => db.prepare('DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)').run());
  t.is(sealCount(dataDir), 0, 'the guard deleted the seal');
  const server = await restart(t, dataDir);
  t.regex(server.output(), /start snapshot is not used.*the database changed after the snapshot was written/);
  t.regex(server.output(), /"event_ids":2,.*"from_snapshot":false/);
  t.false(existsSync(join(dataDir, kSnapshot)));
});

test('a snapshot of an earlier stop is not used, nor one damaged or cut short', async (t) => {
  const { dataDir } = await stoppedWithEvents(t, 2);
  const earlier = join(dataDir, 'earlier-snapshot');
  copyFileSync(join(dataDir, kSnapshot), earlier);
  // A start and a stop in between: the seal is of the newer snapshot.
  const between = await restart(t, dataDir);
  const key = between.bootstrap.keys.live_secret.key;
  const response = await api(between, 'POST', '/v1/events', { key, body: minimalEvent() });
  t.is(response.status, 200, response.text);
  await between.stop();
  copyFileSync(earlier, join(dataDir, kSnapshot));
  const stale = await restart(t, dataDir);
  t.regex(stale.output(), /start snapshot is not used.*the database changed/);
  t.regex(stale.output(), /"event_ids":3,.*"from_snapshot":false/);
  t.like(await stale.stop(), { code: 0 });

  // Sealed, then one byte changed (the disk, a copy): refused by its checksum.
  const whole = readFileSync(join(dataDir, kSnapshot));
  const damaged = Buffer.from(whole);
  // Eight bytes in a row: at least one is in a buffer (the gaps between buffers are under eight).
  for (let at = Math.floor(damaged.length * 0.75), end = at + 8; at < end; at++) damaged[at] = damaged[at]! ^ 0x10;
  writeFileSync(join(dataDir, kSnapshot), damaged);
  const flipped = await restart(t, dataDir);
  t.regex(flipped.output(), /start snapshot is not used.*cannot be read: .*does not match its checksum/);
  t.regex(flipped.output(), /"event_ids":3,.*"from_snapshot":false/);
  t.like(await flipped.stop(), { code: 0 });

  // Sealed, then cut short (a full disk, a copy that stopped half way).
  t.is(sealCount(dataDir), 1);
  truncateSync(join(dataDir, kSnapshot), Math.floor(statSync(join(dataDir, kSnapshot)).size / 2));
  const cut = await restart(t, dataDir);
  t.regex(cut.output(), /start snapshot is not used.*cannot be read: (the file|the header) is cut short/);
  t.regex(cut.output(), /"event_ids":3,.*"from_snapshot":false/);
  t.false(existsSync(join(dataDir, kSnapshot)));
});

test('each start from the snapshot writes the next one at its stop, even a stop right after the start (five rounds)', async (t) => {
  const { dataDir, key, bodies } = await stoppedWithEvents(t, 1);
  for (let round = 0; round < 5; round++) {
    const server = await restart(t, dataDir);
    t.regex(server.output(), /"event_ids":1,.*"from_snapshot":true/, `round ${round}`);
    t.deepEqual(await server.stop(), { code: 0, signal: null }, `round ${round}`);
    t.is(sealCount(dataDir), 1, `round ${round}`);
    t.true(existsSync(join(dataDir, kSnapshot)), `round ${round}`);
  }
  const last = await restart(t, dataDir);
  const again = await api(last, 'POST', '/v1/events', { key, body: bodies[0] });
  t.is(again.status, 200, again.text);
});

test('a snapshot taken at another schema version is not used, even under the right seal', async (t) => {
  const { dataDir } = await stoppedWithEvents(t, 2);
  // The same file and token, as a build with one migration fewer would have written it.
  const path = join(dataDir, kSnapshot);
  const { meta, tree } = readPartsFile(path) as { meta: { schema: number }; tree: unknown };
  writePartsFile(path, { ...meta, schema: meta.schema - 1 }, tree);
  t.is(sealCount(dataDir), 1);
  const server = await restart(t, dataDir);
  t.regex(server.output(), new RegExp(`start snapshot is not used.*of schema version ${meta.schema - 1}, the database of ${meta.schema}`));
  t.regex(server.output(), /"event_ids":2,.*"from_snapshot":false/);
  t.false(existsSync(path));
});

test('a snapshot in another layout (an earlier build) is not used, even under the right seal', async (t) => {
  const { dataDir } = await stoppedWithEvents(t, 2);
  // The same file and token, as the build before format 2 (velocity amounts of 36 numbers) wrote it.
  const path = join(dataDir, kSnapshot);
  const { meta, tree } = readPartsFile(path) as { meta: { format: number }; tree: unknown };
  t.is(meta.format, 2);
  writePartsFile(path, { ...meta, format: 1 }, tree);
  t.is(sealCount(dataDir), 1);
  const server = await restart(t, dataDir);
  t.regex(server.output(), /start snapshot is not used.*of another format \(1\)/);
  t.regex(server.output(), /"event_ids":2,.*"from_snapshot":false/);
  t.false(existsSync(path));
});

test('no snapshot when rows of scored events are not all in the tables: the next start loads them and replays the log', async (t) => {
  // Every bulk write of derived rows fails: the stop cannot leave the tables holding the state.
  const server = await startServer({ env: { FAULT_INJECTION: 'derived_rows_fail', DERIVED_FLUSH_MS: '10' }, keepDataDir: true });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  for (const account of ['nr-1', 'nr-2']) {
    const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account }) });
    t.is(response.status, 200, response.text);
  }
  t.deepEqual(await server.stop(), { code: 0, signal: null });
  t.false(existsSync(join(server.dataDir, kSnapshot)));
  t.is(sealCount(server.dataDir), 0);
  const next = await restart(t, server.dataDir);
  t.regex(next.output(), /"events_replayed":2,.*"from_snapshot":false/);
  const links = await api(next, 'GET', '/v1/accounts/nr-1/links', { key });
  t.is(links.status, 200, links.text);
});

test('from the snapshot: an account erased before the stop stays erased, and async events left pending at the stop are scored', async (t) => {
  // The background scorer held (a test-only latch): every async event is still pending at the stop.
  const server = await startServer({ keepDataDir: true, env: { FAULT_INJECTION: 'hold_points' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const email = `gone.${Date.now()}@example.com`;
  const first = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'snap-gone', user: { email } }) });
  t.is(first.status, 200, first.text);
  const linked = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'snap-stays', user: { email } }) });
  t.is(linked.status, 200, linked.text);
  const erased = await api(server, 'DELETE', '/v1/accounts/snap-gone', { key });
  t.is(erased.status, 200, erased.text);
  // In rounds of 20: 200 at once could stay past the door's overload bound (OVERLOAD_EVENTS_IN_FLIGHT,
  // 64) for longer than OVERLOAD_AFTER_MS on a slow machine and be refused.
  const accepted = [];
  for (let round = 0; round < 10; round++) {
    accepted.push(...(await Promise.all(Array.from({ length: 20 }, () => api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })))));
  }
  t.deepEqual(accepted.filter((response) => response.status !== 202).map((response) => response.text), []);
  await server.stop();

  const next = await restart(t, server.dataDir);
  t.regex(next.output(), /"from_snapshot":true,"pending_async_events":200/);
  const gone = await api(next, 'GET', '/v1/accounts/snap-gone/links', { key });
  t.is(gone.status, 404, gone.text);
  const stays = await api(next, 'GET', '/v1/accounts/snap-stays/links', { key });
  t.is(stays.status, 200, stays.text);
  t.deepEqual(stays.body.data.links, [], 'the erased account is linked to nobody');
  const again = await api(next, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'snap-gone', user: { email } }) });
  t.is(again.status, 200, again.text);
  t.not(again.body.data.account_public_id, first.body.data.account_public_id, 'its next event starts a new account');
  for (const response of accepted) {
    const eventId = response.body.data.event_id as string;
    await waitFor(async () => (await api(next, 'GET', `/v1/scores/${eventId}`, { key })).body.data?.state === 'scored', `event ${eventId} scored`);
  }
  t.pass();
});

test('a stop whose drain gives up while a handler still runs writes no snapshot, though its connection was closed (its request no longer counted in flight)', async (t) => {
  const server = await startServer({ keepDataDir: true, env: { FAULT_INJECTION: 'hold_points' } });
  const key = server.bootstrap.keys.live_secret.key;
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'before-the-stop' }) })).status, 200);
  const held = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'held-at-stop', extras: { fault_hold_before: 'at-stop' } }) }).catch(() => null);
  await heldAt(server, 'at-stop');
  // The drain waits its 10 s for the held request, then the connections are closed.
  t.deepEqual(await server.stop(), { code: 0, signal: null });
  await held;
  t.regex(server.output(), /"the drain gave up: requests still unanswered are closed without an answer","requests":1/);
  t.regex(server.output(), /no start snapshot: a request was still being handled/);
  t.false(existsSync(join(server.dataDir, kSnapshot)));
  // The next start loads from the tables, with everything stored.
  const next = await startServer({ dataDir: server.dataDir });
  t.teardown(() => next.stop());
  t.regex(next.output(), /store ready/);
});
