// Overload is refused at the door (DESIGN §8, issue 10): past MAX_EVENTS_IN_FLIGHT events being
// scored or stored, POST /v1/events answers 503 at once with Retry-After and stores nothing; an
// event whose client has gone before its scoring starts is not scored. Driven with hold points
// (FAULT_INJECTION=hold_points): events are held in flight, never timed.
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { openSocket, requestHead } from '../_helpers/raw-http.js';
import { heldAt, metric, release } from '../_helpers/faults.js';

/** A server with hold points on (and its background scorer let go), its live key, and a tag for this test's hold names. */
async function holdingServer(env: Record<string, string> = {}): Promise<{ server: Awaited<ReturnType<typeof startServer>>; key: string; tag: string }> {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', ...env } });
  await heldAt(server, 'async-scorer');
  release(server, 'async-scorer');
  return { server, key: server.bootstrap.keys.live_secret.key, tag: randomUUID().slice(0, 8) };
}

/** A sync and an async event sent now: each refused with 503 in the envelope and Retry-After. */
async function refusedAtTheDoor(t: ExecutionContext, server: TestServer, key: string): Promise<[ReturnType<typeof minimalEvent>, ReturnType<typeof minimalEvent>]> {
  const sync = minimalEvent();
  const refused = await api(server, 'POST', '/v1/events', { key, body: sync });
  t.is(refused.status, 503);
  t.is(refused.body.status, 0);
  t.is(refused.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  t.is(refused.headers.get('retry-after'), '1');
  const asyncEvent = minimalEvent({ async: true });
  const refusedAsync = await api(server, 'POST', '/v1/events', { key, body: asyncEvent });
  t.is(refusedAsync.status, 503);
  t.is(refusedAsync.body.errors[0]?.code, 'ASYNC_UNAVAILABLE');
  t.is(refusedAsync.headers.get('retry-after'), '1');
  t.is(await metric(server, 'fraud_scorer_events_refused_total'), 2);
  return [sync, asyncEvent];
}

test('past MAX_EVENTS_IN_FLIGHT, sync and async events get 503 with Retry-After at once, and nothing is stored', async (t) => {
  const { server, key, tag } = await holdingServer({ MAX_EVENTS_IN_FLIGHT: '2' });
  try {
    const held = [0, 1].map((i) => api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { fault_hold: `busy-${tag}-${i}` } }) }));
    await heldAt(server, `busy-${tag}-0`);
    await heldAt(server, `busy-${tag}-1`);
    t.is(await metric(server, 'fraud_scorer_events_in_flight'), 2);

    const [sync, asyncEvent] = await refusedAtTheDoor(t, server, key);

    release(server, `busy-${tag}-0`);
    release(server, `busy-${tag}-1`);
    for (const answer of await Promise.all(held)) t.is(answer.status, 200, answer.text);
    for (const refusedEvent of [sync, asyncEvent]) {
      t.is((await api(server, 'GET', `/v1/scores/${refusedEvent.event_id}`, { key })).status, 404, 'nothing was stored');
    }
    // Below the bound again: the refused requests, retried, are served.
    t.is((await api(server, 'POST', '/v1/events', { key, body: sync })).status, 200);
    t.is((await api(server, 'POST', '/v1/events', { key, body: asyncEvent })).status, 202);
  } finally {
    await server.stop();
  }
});

test('past OVERLOAD_EVENTS_IN_FLIGHT for less than OVERLOAD_AFTER_MS, events are served; past MAX_EVENTS_IN_FLIGHT they are refused', async (t) => {
  // An hour: the count never stays past the overload bound long enough in this test.
  const { server, key, tag } = await holdingServer({ OVERLOAD_EVENTS_IN_FLIGHT: '2', OVERLOAD_AFTER_MS: '60000', MAX_EVENTS_IN_FLIGHT: '4' });
  try {
    const held = [0, 1, 2, 3].map((i) => api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { fault_hold: `burst-${tag}-${i}` } }) }));
    for (let i = 0; i < 4; i++) await heldAt(server, `burst-${tag}-${i}`);
    t.is(await metric(server, 'fraud_scorer_events_in_flight'), 4, 'admitted past the overload bound');
    t.is(await metric(server, 'fraud_scorer_events_overloaded'), 0);

    const past = minimalEvent();
    const refused = await api(server, 'POST', '/v1/events', { key, body: past });
    t.is(refused.status, 503);
    t.is(refused.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
    t.is(refused.headers.get('retry-after'), '1');
    t.is(await metric(server, 'fraud_scorer_events_refused_total'), 1);

    for (let i = 0; i < 4; i++) release(server, `burst-${tag}-${i}`);
    for (const answer of await Promise.all(held)) t.is(answer.status, 200, answer.text);
    t.is((await api(server, 'GET', `/v1/scores/${past.event_id}`, { key })).status, 404, 'nothing was stored');
  } finally {
    await server.stop();
  }
});

test('once OVERLOAD_EVENTS_IN_FLIGHT have been in flight for OVERLOAD_AFTER_MS, events past it get 503 until the count has stayed below it', async (t) => {
  const { server, key, tag } = await holdingServer({ OVERLOAD_EVENTS_IN_FLIGHT: '2', OVERLOAD_AFTER_MS: '1' });
  try {
    const held = [0, 1].map((i) => api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { fault_hold: `stay-${tag}-${i}` } }) }));
    await heldAt(server, `stay-${tag}-0`);
    await heldAt(server, `stay-${tag}-1`);
    await waitFor(async () => (await metric(server, 'fraud_scorer_events_overloaded')) === 1, 'the door to call the server overloaded');

    const [sync, asyncEvent] = await refusedAtTheDoor(t, server, key);

    release(server, `stay-${tag}-0`);
    release(server, `stay-${tag}-1`);
    for (const answer of await Promise.all(held)) t.is(answer.status, 200, answer.text);
    for (const event of [sync, asyncEvent]) t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).status, 404, 'nothing was stored');
    await waitFor(async () => (await metric(server, 'fraud_scorer_events_overloaded')) === 0, 'the overload to end');
    t.is((await api(server, 'POST', '/v1/events', { key, body: sync })).status, 200);
    t.is((await api(server, 'POST', '/v1/events', { key, body: asyncEvent })).status, 202);
  } finally {
    await server.stop();
  }
});

test('at capacity a sync event is refused before its body is parsed or checked; one that may ask for async is read first', async (t) => {
  const { server, key, tag } = await holdingServer({ MAX_EVENTS_IN_FLIGHT: '1' });
  try {
    const held = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { fault_hold: `busy-${tag}` } }) });
    await heldAt(server, `busy-${tag}`);

    const refusal = async (body: string, code: string, message: string): Promise<void> => {
      const answer = await api(server, 'POST', '/v1/events', { key, rawBody: body });
      t.is(answer.status, 503, `${message}: ${answer.text}`);
      t.is(answer.body.errors[0]?.code, code, message);
      t.is(answer.headers.get('retry-after'), '1', message);
    };
    const notJson = '{"event_id": "broken';
    const badType = JSON.stringify(minimalEvent({ event_type: 'teleport' }));
    await refusal(notJson, 'COMPILED_RULES_UNAVAILABLE', 'a body that is not JSON, at capacity');
    await refusal(badType, 'COMPILED_RULES_UNAVAILABLE', 'an invalid event, at capacity');
    // The member's name written with an escape is still async: read, then refused as async.
    const escapedAsync = minimalEvent();
    await refusal(`{"\\u0061sync": true, ${JSON.stringify(escapedAsync).slice(1)}`, 'ASYNC_UNAVAILABLE', 'async named with an escape');
    // "async" only inside extras: read, found sync, refused as sync.
    const nestedAsync = minimalEvent({ extras: { async: true } });
    await refusal(JSON.stringify(nestedAsync), 'COMPILED_RULES_UNAVAILABLE', 'async only inside extras');
    // An async body that would get 400 below capacity gets the 503 too, as a sync one does: not its 400.
    await refusal(JSON.stringify(minimalEvent({ event_type: 'teleport', async: true })), 'ASYNC_UNAVAILABLE', 'an invalid async event, at capacity');
    await refusal(JSON.stringify(minimalEvent({ async: true, extras: { n: '4111111111111111' } })), 'ASYNC_UNAVAILABLE', 'an async event with a card number, at capacity');
    await refusal(JSON.stringify(minimalEvent({ async: 'yes' })), 'COMPILED_RULES_UNAVAILABLE', 'async not a boolean, at capacity');
    await refusal('{"async": true, "event_id": broken', 'COMPILED_RULES_UNAVAILABLE', 'a body naming async that is not JSON, at capacity');
    const queried = await api(server, 'POST', '/v1/events?async=true', { key, body: minimalEvent({ async: true }) });
    t.is(queried.status, 503, queried.text);
    t.is(queried.body.errors[0]?.code, 'ASYNC_UNAVAILABLE', 'a query parameter at capacity: the door first');
    t.is(await metric(server, 'fraud_scorer_events_refused_total'), 9);

    release(server, `busy-${tag}`);
    t.is((await held).status, 200);
    for (const event of [escapedAsync, nestedAsync]) {
      t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).status, 404, 'nothing was stored');
    }
    // Below the bound, the same bodies get what they always got.
    const broken = await api(server, 'POST', '/v1/events', { key, rawBody: notJson });
    t.is(broken.status, 400);
    t.is(broken.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(broken.body.errors[0]?.parameter, 'body');
    const invalid = await api(server, 'POST', '/v1/events', { key, rawBody: badType });
    t.is(invalid.status, 400);
    t.is(invalid.body.errors[0]?.parameter, 'event_type');
  } finally {
    await server.stop();
  }
});

test('two retries waiting behind a request that stored nothing store the event once', async (t) => {
  const { server, key, tag } = await holdingServer();
  try {
    const event = minimalEvent({ extras: { fault_hold_before: `first-${tag}` } });
    const body = JSON.stringify(event);
    const socket = await openSocket(server.port);
    socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }));
    socket.write(body);
    await heldAt(server, `first-${tag}`);
    // Two retries of the same request wait for it; then its client goes, so it stores nothing.
    const retries = [api(server, 'POST', '/v1/events', { key, body: event }), api(server, 'POST', '/v1/events', { key, body: event })];
    await waitFor(async () => (await metric(server, 'fraud_scorer_events_in_flight')) === 3, 'both retries waiting');
    socket.destroy();
    await waitFor(async () => /status="499"/.test(await (await fetch(`${server.url}/metrics`)).text()), 'the server to notice the client left');
    // The retries carry the hold point too: each one that scores is let go as it gets there.
    let answered = false;
    const answering = Promise.all(retries).finally(() => (answered = true));
    await waitFor(() => {
      if (existsSync(join(server.dataDir, `fault-held-first-${tag}`))) release(server, `first-${tag}`);
      return answered || undefined;
    }, 'both retries answered');
    const answers = await answering;
    t.deepEqual(answers.map((answer) => answer.status), [200, 200]);
    t.is(answers[0]!.body.data.risk_score, answers[1]!.body.data.risk_score);
    t.is(await metric(server, 'fraud_scorer_events_dropped_total'), 1, 'the first one was not scored');
    const db = new Database(join(server.dataDir, 'fraud-scorer.db'), { readonly: true });
    try {
      t.is(db.prepare('SELECT count(*) FROM events WHERE event_id = ?').pluck().get(event.event_id), 1, 'stored once');
    } finally {
      db.close();
    }
  } finally {
    await server.stop();
  }
});

test('an event whose client has gone before its scoring starts is not scored or stored', async (t) => {
  const { server, key, tag } = await holdingServer();
  try {
    const event = minimalEvent({ extras: { fault_hold_before: `gone-${tag}` } });
    const body = JSON.stringify(event);
    const socket = await openSocket(server.port);
    socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }));
    socket.write(body);
    await heldAt(server, `gone-${tag}`);
    socket.destroy();
    // The server sees the connection close (counted as status 499) before the event goes on.
    await waitFor(async () => /status="499"/.test(await (await fetch(`${server.url}/metrics`)).text()), 'the server to notice the client left');
    release(server, `gone-${tag}`);
    await waitFor(async () => (await metric(server, 'fraud_scorer_events_dropped_total')) === 1, 'the event to be dropped');
    t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).status, 404);
    t.is(await metric(server, 'fraud_scorer_events_in_flight'), 0);
    // A drop is counted, not an error: no 500 in the metrics or the log (operators alert on error lines).
    t.false(/status="500"/.test(await (await fetch(`${server.url}/metrics`)).text()));
    t.false(/"level":"error"/.test(server.output()), server.output());
  } finally {
    await server.stop();
  }
});
