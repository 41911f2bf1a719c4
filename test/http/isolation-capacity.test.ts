// Environments never mix in capacity either (DESIGN §8): each environment's async events have a
// queue and a bound of their own (ASYNC_QUEUE_LIMIT each), and sandbox events hold at most half of
// OVERLOAD_EVENTS_IN_FLIGHT at the door, so that sandbox traffic alone never fills the door nor
// makes the server overloaded (sandbox events in flight still count toward live events' bound).
// Driven with hold points (FAULT_INJECTION=hold_points): events held in flight, never timed.
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { heldAt, metric, release } from '../_helpers/faults.js';
import { minimalEvent } from '../_helpers/events.js';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';

/** `event`, sent now, is refused with 503 `code` and Retry-After, naming no parameter. */
async function refused(t: ExecutionContext, server: TestServer, key: string, event: Record<string, unknown>, code: string): Promise<void> {
  const answer = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(answer.status, 503, answer.text);
  t.is(answer.body.errors[0]?.code, code);
  t.is(answer.body.errors[0]?.parameter, '');
}

async function stored(server: TestServer, key: string, eventId: unknown): Promise<number> {
  return (await api(server, 'GET', `/v1/scores/${String(eventId)}`, { key })).status;
}

const depthOf = (server: TestServer, environment: string): Promise<number> => metric(server, 'fraud_scorer_async_queue_depth_by_environment', { environment });

test('a full sandbox async queue refuses sandbox events only; live has its own ASYNC_QUEUE_LIMIT, and so after a restart', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', ASYNC_QUEUE_LIMIT: '2' }, keepDataDir: true });
  const live = server.bootstrap.keys.live_secret.key;
  const sandbox = server.bootstrap.keys.sandbox_secret.key;
  await heldAt(server, 'async-scorer'); // not let go: accepted events stay queued
  const sandboxEvents = [0, 1].map(() => minimalEvent({ async: true }));
  for (const event of sandboxEvents) t.is((await api(server, 'POST', '/v1/events', { key: sandbox, body: event })).status, 202);
  const sandboxPast = minimalEvent({ async: true });
  await refused(t, server, sandbox, sandboxPast, 'ASYNC_UNAVAILABLE');
  t.is(await stored(server, sandbox, sandboxPast.event_id), 404, 'the refused event was not stored');

  const liveEvents = [0, 1].map(() => minimalEvent({ async: true }));
  for (const event of liveEvents) t.is((await api(server, 'POST', '/v1/events', { key: live, body: event })).status, 202, 'live is not refused by the full sandbox queue');
  const livePast = minimalEvent({ async: true });
  await refused(t, server, live, livePast, 'ASYNC_UNAVAILABLE');
  t.is(await stored(server, live, livePast.event_id), 404);
  t.is(await depthOf(server, 'live'), 2);
  t.is(await depthOf(server, 'sandbox'), 2);
  t.is(await metric(server, 'fraud_scorer_async_queue_depth'), 4);
  await server.stop();

  // A start queues each environment's pending events in its own queue.
  const again = await startServer({ dataDir: server.dataDir, env: { FAULT_INJECTION: 'hold_points', ASYNC_QUEUE_LIMIT: '2' } });
  t.teardown(() => again.stop());
  await heldAt(again, 'async-scorer');
  t.is(await depthOf(again, 'live'), 2);
  t.is(await depthOf(again, 'sandbox'), 2);
  await refused(t, again, sandbox, sandboxPast, 'ASYNC_UNAVAILABLE');
  await refused(t, again, live, livePast, 'ASYNC_UNAVAILABLE');
  release(again, 'async-scorer');
  await waitFor(async () => (await metric(again, 'fraud_scorer_async_queue_depth')) === 0, 'both queues scored');
  t.is(await metric(again, 'fraud_scorer_async_scored_total'), 4);
  for (const event of sandboxEvents) t.is((await api(again, 'GET', `/v1/scores/${String(event.event_id)}`, { key: sandbox })).body.data.state, 'scored');
  for (const event of liveEvents) t.is((await api(again, 'GET', `/v1/scores/${String(event.event_id)}`, { key: live })).body.data.state, 'scored');
  t.is(await stored(again, live, sandboxEvents[0]!.event_id), 404, 'each in its own environment');
  t.is((await api(again, 'POST', '/v1/events', { key: sandbox, body: sandboxPast })).status, 202, 'room again: the refused event, retried, is accepted');
});

test('sandbox events hold at most half of OVERLOAD_EVENTS_IN_FLIGHT: past it a sandbox event gets 503 and stores nothing; live events are admitted', async (t) => {
  // Sandbox share: 2 of 4. An hour: the count never stays past the overload bound long enough here.
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', OVERLOAD_EVENTS_IN_FLIGHT: '4', OVERLOAD_AFTER_MS: '60000' } });
  t.teardown(() => server.stop());
  await heldAt(server, 'async-scorer');
  release(server, 'async-scorer');
  const live = server.bootstrap.keys.live_secret.key;
  const sandbox = server.bootstrap.keys.sandbox_secret.key;
  const tag = randomUUID().slice(0, 8);
  const held = [0, 1].map((i) => api(server, 'POST', '/v1/events', { key: sandbox, body: minimalEvent({ extras: { fault_hold: `sandbox-${tag}-${i}` } }) }));
  await heldAt(server, `sandbox-${tag}-0`);
  await heldAt(server, `sandbox-${tag}-1`);
  t.is(await metric(server, 'fraud_scorer_sandbox_events_in_flight'), 2);

  const sandboxSync = minimalEvent();
  const answer = await api(server, 'POST', '/v1/events', { key: sandbox, body: sandboxSync });
  t.is(answer.status, 503);
  t.is(answer.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  t.is(answer.body.errors[0]?.parameter, '');
  t.is(answer.headers.get('retry-after'), '1');
  const sandboxAsync = minimalEvent({ async: true });
  await refused(t, server, sandbox, sandboxAsync, 'ASYNC_UNAVAILABLE');
  t.is(await metric(server, 'fraud_scorer_events_refused_total'), 2);

  // Live events are admitted beside the full sandbox share, past it in the total too.
  const liveSync = await api(server, 'POST', '/v1/events', { key: live, body: minimalEvent() });
  t.is(liveSync.status, 200, liveSync.text);
  t.is((await api(server, 'POST', '/v1/events', { key: live, body: minimalEvent({ async: true }) })).status, 202);
  t.is(await metric(server, 'fraud_scorer_events_refused_total'), 2);

  release(server, `sandbox-${tag}-0`);
  release(server, `sandbox-${tag}-1`);
  for (const done of await Promise.all(held)) t.is(done.status, 200, done.text);
  t.is(await stored(server, sandbox, sandboxSync.event_id), 404, 'nothing of the refused events was stored');
  t.is(await stored(server, sandbox, sandboxAsync.event_id), 404);
  await waitFor(async () => (await metric(server, 'fraud_scorer_sandbox_events_in_flight')) === 0, 'the sandbox share free');
  t.is((await api(server, 'POST', '/v1/events', { key: sandbox, body: sandboxSync })).status, 200, 'the refused event, retried, is scored');
});
