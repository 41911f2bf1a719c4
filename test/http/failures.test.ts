// The failure answers of POST /v1/events (interface, Errors): 500 INTERNAL_ERROR when the result
// cannot be stored, 503 ASYNC_UNAVAILABLE, 503 RATE_LIMIT_UNAVAILABLE. Each stores nothing, and
// the same request succeeds once the cause is gone.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { api, runCli, startServer, storedEventCount, waitFor } from '../_helpers/server.js';
import { minimalEvent, richEvent } from '../_helpers/events.js';
import { metric } from '../_helpers/faults.js';



test('a locked database: sync is 500 INTERNAL_ERROR, async 503 ASYNC_UNAVAILABLE; nothing stored; retries succeed', async (t) => {
  const server = await startServer({ env: { SQLITE_BUSY_TIMEOUT_MS: '50' } });
  try {
    const key = server.bootstrap.keys.live_secret.key;
    const lock = new Database(join(server.dataDir, 'fraud-scorer.db'));
    lock.exec('BEGIN EXCLUSIVE');
    const sync = richEvent();
    const failed = await api(server, 'POST', '/v1/events', { key, body: sync });
    t.is(failed.status, 500);
    t.is(failed.body.errors[0]?.code, 'INTERNAL_ERROR');
    const queued = minimalEvent({ async: true });
    const refused = await api(server, 'POST', '/v1/events', { key, body: queued });
    t.is(refused.status, 503);
    t.is(refused.body.errors[0]?.code, 'ASYNC_UNAVAILABLE');
    lock.exec('ROLLBACK');
    lock.close();
    t.is(storedEventCount(server.dataDir, sync.event_id as string), 0);
    t.is(storedEventCount(server.dataDir, queued.event_id as string), 0);

    const retried = await api(server, 'POST', '/v1/events', { key, body: sync });
    t.is(retried.status, 200, retried.text);
    t.is((await api(server, 'POST', '/v1/events', { key, body: queued })).status, 202);
  } finally {
    await server.stop();
  }
});

test('/healthz fails while the database refuses writes, and recovers without traffic once it can write again', async (t) => {
  const server = await startServer({ env: { SQLITE_BUSY_TIMEOUT_MS: '50' } });
  try {
    t.is((await api(server, 'GET', '/healthz')).status, 200);
    const lock = new Database(join(server.dataDir, 'fraud-scorer.db'));
    lock.exec('BEGIN EXCLUSIVE');
    t.is((await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body: minimalEvent() })).status, 500);
    const failing = await api(server, 'GET', '/healthz');
    t.is(failing.status, 500);
    t.is(failing.body.errors[0]?.code, 'INTERNAL_ERROR');
    t.regex(failing.body.errors[0]?.message ?? '', /SQLITE_BUSY/);
    lock.exec('ROLLBACK');
    lock.close();
    // No event is sent: the checks' own probe shows the recovery.
    await waitFor(async () => (await api(server, 'GET', '/healthz')).status === 200, '/healthz to answer 200 again');
    t.is((await api(server, 'GET', '/healthz')).body.data.status, 'ok');
  } finally {
    await server.stop();
  }
});

test('a write lock held by another connection within the busy timeout: the writer waits for it and the event is scored', async (t) => {
  const server = await startServer({ env: { SQLITE_BUSY_TIMEOUT_MS: '60000' } });
  try {
    const key = server.bootstrap.keys.live_secret.key;
    const before = await metric(server, 'fraud_scorer_writer_lock_waits_total');
    const lock = new Database(join(server.dataDir, 'fraud-scorer.db'));
    lock.exec('BEGIN IMMEDIATE');
    const event = richEvent();
    const answer = api(server, 'POST', '/v1/events', { key, body: event });
    // The writer found the lock taken and waits: the answer is still to come.
    await waitFor(async () => (await metric(server, 'fraud_scorer_writer_lock_waits_total')) > before, 'the writer to wait for the lock');
    lock.exec('ROLLBACK');
    lock.close();
    const scored = await answer;
    t.is(scored.status, 200, scored.text);
    t.is(storedEventCount(server.dataDir, event.event_id as string), 1);
  } finally {
    await server.stop();
  }
});

test('a full async queue is 503 ASYNC_UNAVAILABLE and stores nothing', async (t) => {
  const server = await startServer({ env: { ASYNC_QUEUE_LIMIT: '2' } });
  try {
    // A project with no ruleset: its async events stay queued.
    const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'bare', '--preset', 'none', '--json'])).stdout);
    const key = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
    t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })).status, 202);
    t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })).status, 202);
    const third = minimalEvent({ async: true });
    const refused = await api(server, 'POST', '/v1/events', { key, body: third });
    t.is(refused.status, 503);
    t.is(refused.body.errors[0]?.code, 'ASYNC_UNAVAILABLE');
    t.is(storedEventCount(server.dataDir, third.event_id as string), 0);
    // Sync scoring of other projects is not affected by the full queue.
    t.is((await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body: minimalEvent() })).status, 200);
  } finally {
    await server.stop();
  }
});

test('a rate limiter that is not ready is 503 RATE_LIMIT_UNAVAILABLE and stores nothing', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'rate_limiter_unready' } });
  try {
    const event = minimalEvent();
    const response = await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body: event });
    t.is(response.status, 503);
    t.is(response.body.errors[0]?.code, 'RATE_LIMIT_UNAVAILABLE');
    t.is(response.headers.get('retry-after'), '1', 'every 503 says when to come back');
    t.is(storedEventCount(server.dataDir, event.event_id as string), 0);
    t.is((await api(server, 'GET', '/healthz')).status, 200);
    t.regex(server.output(), /fault injection is on/);
  } finally {
    await server.stop();
  }
});

test('settings that contradict each other are logged as a warning at the start, which goes on', async (t) => {
  const server = await startServer({ env: { OVERLOAD_EVENTS_IN_FLIGHT: '600', MAX_EVENTS_IN_FLIGHT: '512' } });
  try {
    t.is((await api(server, 'GET', '/healthz')).status, 200);
    const line = server.output().split('\n').find((text) => text.includes('settings contradict each other'));
    t.truthy(line, server.output());
    t.like(JSON.parse(line!), { level: 'warn' });
    t.regex(line!, /OVERLOAD_EVENTS_IN_FLIGHT \(600\) is above MAX_EVENTS_IN_FLIGHT \(512\)/);
  } finally {
    await server.stop();
  }
});

test('an unknown fault is refused at start', async (t) => {
  const result = await runCli(['serve', '--port', '0'], { FAULT_INJECTION: 'disk_on_fire' });
  t.is(result.code, 2);
  t.regex(result.stderr, /unknown fault/);
});
