// Async events at the edges of erasure and of the queue's bound, driven step by step with the
// test-only hold points (FAULT_INJECTION=hold_points): a sync retry of a queued async event that
// waited behind its account's erasure, and requests that pass the bound's check together. And
// events that cannot be scored now: set aside until a publish, across a restart and a crash.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { heldAt, metric, reached, release } from '../_helpers/faults.js';
import { minimalEvent } from '../_helpers/events.js';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { newProject, readStore } from '../_helpers/rules.js';
import { api, runCli, startServer, waitFor } from '../_helpers/server.js';

test('a sync retry of a queued async event that waited behind its account\'s erasure answers the erased view, not 500', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  await heldAt(server, 'async-scorer'); // the background scorer never starts: the event stays queued
  const user = `race-${randomUUID().slice(0, 8)}`;
  const event = minimalEvent({ external_account_id: user });
  t.is((await api(server, 'POST', '/v1/events', { key, body: { ...event, async: true } })).status, 202);
  // An event of the account held scored and not stored: the erasure waits for it at the gate...
  const inFlight = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: user, extras: { fault_hold: 'held-sync' } }) });
  await heldAt(server, 'held-sync');
  const erasure = api(server, 'DELETE', `/v1/accounts/${user}`, { key });
  await reached(server, 'erasure-gate-closed');
  // ...and the retry of the async event, sent sync, waits behind the erasure.
  const retry = api(server, 'POST', '/v1/events', { key, body: event });
  await waitFor(async () => (await metric(server, 'fraud_scorer_events_in_flight')) === 2, 'the retry admitted');
  release(server, 'held-sync');
  await inFlight;
  t.is((await erasure).body.data.erased.pending_events, 1);
  const answer = await retry;
  t.is(answer.status, 200, answer.text);
  t.deepEqual(answer.body.data, { event_id: event.event_id, state: 'erased', accepted_at: answer.body.data.accepted_at });
  t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).body.data.state, 'erased');
});

test('ASYNC_QUEUE_LIMIT holds for requests that pass its check together: the second waits for the first\'s write and is refused', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', ASYNC_QUEUE_LIMIT: '1' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  await heldAt(server, 'async-scorer');
  const user = `bound-${randomUUID().slice(0, 8)}`;
  const inFlight = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: user, extras: { fault_hold: 'held-sync' } }) });
  await heldAt(server, 'held-sync');
  const erasure = api(server, 'DELETE', `/v1/accounts/${user}`, { key });
  await reached(server, 'erasure-gate-closed');
  // The first passes the bound's check and waits at the account's gate (closed by the erasure)
  // before its write; the second comes while it waits: it must count the first.
  const first = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: user, async: true }) });
  await waitFor(async () => (await metric(server, 'fraud_scorer_events_in_flight')) === 2, 'the first waiting at the gate');
  let secondAnswered = false;
  const second = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: user, async: true }) }).finally(() => (secondAnswered = true));
  await waitFor(async () => secondAnswered || (await metric(server, 'fraud_scorer_events_in_flight')) === 3, 'the second answered, or waiting too');
  release(server, 'held-sync');
  await inFlight;
  t.is((await erasure).status, 200);
  const statuses = (await Promise.all([first, second])).map((response) => response.status).sort();
  t.deepEqual(statuses, [202, 503]);
  t.is(await metric(server, 'fraud_scorer_async_queue_depth'), 1);
});

test('an async event of a project with no ruleset yet is scored as soon as one is published, not after its pause', async (t) => {
  // A first pause of 10 minutes: only the publish can bring the event back within this test.
  const server = await startServer({ env: { ASYNC_RETRY_DELAY_MS: '600000' } });
  t.teardown(() => server.stop());
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'bare', '--preset', 'none', '--json'])).stdout);
  const key = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const event = minimalEvent({ async: true });
  t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 202);
  await waitFor(async () => (await metric(server, 'fraud_scorer_async_set_aside')) === 1, 'the event tried and set aside');
  t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).body.data.state, 'pending');
  t.is((await api(server, 'POST', '/v1/rules/publish', { key })).status, 201);
  await waitFor(async () => (await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).body.data.state === 'scored', 'the event scored', 60_000);
  t.is(await metric(server, 'fraud_scorer_async_set_aside'), 0);
  t.is(await metric(server, 'fraud_scorer_async_queue_depth'), 0);
});

test("a project's async events that cannot be scored fill only that project's share: other projects' async events are still accepted", async (t) => {
  const server = await startServer({ env: { ASYNC_QUEUE_LIMIT: '3', ASYNC_RETRY_DELAY_MS: '600000' } });
  t.teardown(() => server.stop());
  // A project with no ruleset: its events are tried, then set aside until a publish.
  const bare = await newProject(server, 'none');
  const waiting = [0, 1, 2].map(() => minimalEvent({ async: true }));
  for (const event of waiting) t.is((await api(server, 'POST', '/v1/events', { key: bare.key, body: event })).status, 202);
  await waitFor(async () => (await metric(server, 'fraud_scorer_async_set_aside')) === 3, 'the three tried and set aside');
  // Accepted and not scored, they are in the depth; the queue's bound does not count them.
  t.is(await metric(server, 'fraud_scorer_async_queue_depth_by_environment', { environment: 'live' }), 3);
  t.is(await metric(server, 'fraud_scorer_async_queue_counted_by_environment', { environment: 'live' }), 0);
  const past = minimalEvent({ async: true });
  const refused = await api(server, 'POST', '/v1/events', { key: bare.key, body: past });
  t.is(refused.status, 503, refused.text);
  t.is(refused.body.errors[0]?.code, 'ASYNC_UNAVAILABLE');
  t.is(refused.body.errors[0]?.parameter, '');
  t.is(refused.headers.get('retry-after'), '1');
  t.regex(refused.body.errors[0]?.message, /publish a ruleset/);
  t.is((await api(server, 'GET', `/v1/scores/${past.event_id as string}`, { key: bare.key })).status, 404, 'the refused event was not stored');
  // Another project of the tenant, and one of another tenant, are not refused for them.
  const other = server.bootstrap.keys.live_secret.key;
  const created = await runCli(['tenants', 'create', '--name', 'acme', '--data-dir', server.dataDir, '--json']);
  t.is(created.code, 0, created.stderr);
  const acmeProject = (JSON.parse(created.stdout) as { live: { project_id: string } }).live.project_id;
  const acme = (await createKeyWithCli(server.dataDir, ['--project', acmeProject, '--kind', 'secret'])).key;
  for (const key of [other, other, other, acme, acme]) {
    const event = minimalEvent({ async: true });
    t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 202);
    await waitFor(async () => (await api(server, 'GET', `/v1/scores/${event.event_id as string}`, { key })).body.data.state === 'scored', 'scored');
  }
  // Published, the waiting events are scored and the project is accepted again.
  t.is((await api(server, 'POST', '/v1/rules/publish', { key: bare.key })).status, 201);
  for (const event of waiting) {
    await waitFor(async () => (await api(server, 'GET', `/v1/scores/${event.event_id as string}`, { key: bare.key })).body.data.state === 'scored', 'the set-aside events scored');
  }
  // Once the scorer has them back (scored, not only due again: until then they count against the
  // project's bound), the refused event is accepted; a refusal meanwhile stores nothing.
  await waitFor(async () => (await api(server, 'POST', '/v1/events', { key: bare.key, body: past })).status === 202, 'the project accepted again');
  t.is((await api(server, 'GET', `/v1/scores/${past.event_id as string}`, { key: bare.key })).status, 200);
});

test('a sync retry of a pending async event that cannot be scored now says the event stays pending, and it does', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  // A project with no ruleset: its async event is stored, pending, set aside until a publish.
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'bare', '--preset', 'none', '--json'])).stdout);
  const key = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const event = minimalEvent();
  t.is((await api(server, 'POST', '/v1/events', { key, body: { ...event, async: true } })).status, 202);
  const retry = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(retry.status, 503, retry.text);
  t.is(retry.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  t.is(retry.body.errors[0]?.parameter, '');
  t.is(retry.headers.get('retry-after'), '1');
  t.regex(retry.body.errors[0]?.message, /^This event was accepted earlier \(async\) and stays pending/);
  t.is((await api(server, 'GET', `/v1/scores/${event.event_id as string}`, { key })).body.data.state, 'pending');
  // An event sent sync only, for contrast: nothing stored, as the message of its refusal says.
  const fresh = minimalEvent();
  const refused = await api(server, 'POST', '/v1/events', { key, body: fresh });
  t.is(refused.status, 503);
  t.regex(refused.body.errors[0]?.message, /nothing was scored or stored/);
  t.is((await api(server, 'GET', `/v1/scores/${fresh.event_id as string}`, { key })).status, 404);
});

test('an async event that stays pending does not hold the log\'s replay point; scored after a restart and lost in a crash, it is replayed', async (t) => {
  // Derived rows every 200 ms at first, so that stamps pass the waiting event; a first pause of 10
  // minutes, so that only a publish brings it back.
  let server = await startServer({ keepDataDir: true, env: { DERIVED_FLUSH_MS: '200', ASYNC_RETRY_DELAY_MS: '600000' } });
  t.teardown(() => server.stop());
  const { dataDir } = server;
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'bare', '--preset', 'none', '--json'])).stdout);
  const bareKey = JSON.parse((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const user = `waits-${randomUUID().slice(0, 8)}`;
  const waiting = minimalEvent({ external_account_id: user, async: true });
  t.is((await api(server, 'POST', '/v1/events', { key: bareKey, body: waiting })).status, 202);
  await waitFor(async () => (await metric(server, 'fraud_scorer_async_set_aside')) === 1, 'the event tried and set aside');
  const waitingSeq = readStore(server, (db) => db.prepare('SELECT seq FROM events WHERE event_id = ?').pluck().get(waiting.event_id)) as number;
  // Live events scored after it: the stamp's from_seq passes it; its own bound stays at it.
  const liveKey = server.bootstrap.keys.live_secret.key;
  for (let i = 0; i < 3; i++) t.is((await api(server, 'POST', '/v1/events', { key: liveKey, body: minimalEvent({ external_account_id: `${user}-live` }) })).status, 200);
  const stamp = (): { from_seq: number; pending_from_seq: number } =>
    readStore(server, (db) => db.prepare('SELECT from_seq, pending_from_seq FROM derived_stamp WHERE id = 1').get()) as { from_seq: number; pending_from_seq: number };
  await waitFor(() => stamp().from_seq > waitingSeq + 3, 'a stamp past the waiting event and the live ones');
  t.is(stamp().pending_from_seq, waitingSeq);
  t.is((await server.stop()).code, 0);

  // The start finds it pending all the same; scored after a publish, then a crash before any
  // stamp: the next start replays it, so its account counts it.
  server = await startServer({ dataDir, keepDataDir: true, env: { DERIVED_FLUSH_MS: '3600000' } });
  t.is((await api(server, 'GET', `/v1/scores/${waiting.event_id as string}`, { key: bareKey })).body.data.state, 'pending');
  t.is((await api(server, 'POST', '/v1/rules/publish', { key: bareKey })).status, 201);
  await waitFor(async () => (await api(server, 'GET', `/v1/scores/${waiting.event_id as string}`, { key: bareKey })).body.data.state === 'scored', 'the event scored', 60_000);
  t.is(stamp().from_seq, waitingSeq, 'from_seq moved down to it when it was scored');
  await server.kill();
  server = await startServer({ dataDir, env: { DERIVED_FLUSH_MS: '3600000' } });
  t.regex(server.output(), /"events_replayed":1\b/);
  t.is(readStore(server, (db) => db.prepare('SELECT events FROM accounts WHERE external_account_id = ?').pluck().get(user)), 1);
});
