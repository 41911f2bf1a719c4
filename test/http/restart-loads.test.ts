// What a start loads from the event log on a thread of its own (scoring/start-loads.ts), or from
// the snapshot of a clean stop (scoring/start-snapshot.ts): the event ids (idempotency) and the
// velocity windows come back as they were before the stop, either way; after a crash, the event
// ids come from their runs beside the log and the log after them.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { kRunEvents } from '../../src/scoring/event-id-runs.js';
import { api, startServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';

function matched(data: { breakdown: Array<{ rule_id: string; matched: boolean }> }, ruleId: string): boolean {
  return data.breakdown.find((entry) => entry.rule_id === ruleId)!.matched;
}

for (const from of ['the log', 'the snapshot'] as const) {
  test(`after a restart (loading from ${from}) a stored event id answers as before, and velocity counts the events sent before the stop`, async (t) => {
    let server = await startServer({ keepDataDir: true });
    t.teardown(() => server.stop());
    const key = server.bootstrap.keys.live_secret.key;
    const payment = { amount_cents: 1000, currency: 'EUR', card_token: `tok_restart_${randomUUID().slice(0, 8)}` };
    const bodies = [0, 1, 2].map(() => minimalEvent({ payment }));
    const answers = [];
    for (const body of bodies) {
      const response = await api(server, 'POST', '/v1/events', { key, body });
      t.is(response.status, 200, response.text);
      answers.push(response.body.data);
    }
    t.deepEqual(answers.map((data) => matched(data, 'card_velocity')), [false, false, false]);

    // A crash writes no snapshot: the next start reads the log.
    if (from === 'the log') await server.kill();
    else await server.stop();
    server = await startServer({ dataDir: server.dataDir });
    t.regex(server.output(), /"event_ids":3[,}]/);
    t.regex(server.output(), from === 'the log' ? /"velocity_events_rebuilt":3,.*"from_snapshot":false/ : /"velocity_events_rebuilt":0,.*"from_snapshot":true/);

    // The same id and body: the stored answer; the same id with another body: a conflict. Nothing new is stored.
    const again = await api(server, 'POST', '/v1/events', { key, body: bodies[0] });
    t.is(again.status, 200, again.text);
    t.like(again.body.data, { decision: answers[0].decision, risk_score: answers[0].risk_score, account_public_id: answers[0].account_public_id });
    const conflict = await api(server, 'POST', '/v1/events', { key, body: { ...bodies[1], payment: { ...payment, amount_cents: 999 } } });
    t.is(conflict.status, 409, conflict.text);
    t.is(conflict.body.errors[0]?.code, 'EVENT_ID_CONFLICT');
    t.is(conflict.body.errors[0]?.parameter, 'event_id');
    // card_velocity matches from three earlier events with the card in the hour: the three before the stop.
    const fourth = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ payment }) });
    t.is(fourth.status, 200, fourth.text);
    t.true(matched(fourth.body.data, 'card_velocity'));
  });
}

test('after a crash, the event ids of all but the last few hundred events come from their runs beside the log, and every one answers as before', async (t) => {
  let server = await startServer({ keepDataDir: true, env: { RATE_LIMIT_PER_ROUTE: '1000000' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  // Enough events for two runs (scoring/event-id-runs.ts), sync and async, a few at a time.
  const count = 2 * kRunEvents + 77;
  const bodies = Array.from({ length: count }, (_, i) => minimalEvent(i % 4 === 0 ? { async: true } : {}));
  for (let i = 0; i < count; i += 32) {
    const answers = await Promise.all(bodies.slice(i, i + 32).map((body) => api(server, 'POST', '/v1/events', { key, body })));
    for (const answer of answers) t.true(answer.status === 200 || answer.status === 202, answer.text);
  }
  await server.kill();
  server = await startServer({ dataDir: server.dataDir });
  const ready = JSON.parse(server.output().split('\n').find((line) => line.includes('"store ready"'))!);
  t.like(ready, { event_ids: count, from_snapshot: false });
  t.true(ready.event_ids_from_log < kRunEvents, `${ready.event_ids_from_log} ids read from the log's rows`);
  // The first event, in the first run: the stored answer again; another body under its id: a conflict.
  const again = await api(server, 'POST', '/v1/events', { key, body: bodies[1] });
  t.is(again.status, 200, again.text);
  t.is(again.body.data.event_id, bodies[1]!.event_id);
  const conflict = await api(server, 'POST', '/v1/events', { key, body: { ...bodies[2], event_type: 'login' } });
  t.is(conflict.status, 409, conflict.text);
  t.is(conflict.body.errors[0]?.code, 'EVENT_ID_CONFLICT');
  t.is(conflict.body.errors[0]?.parameter, 'event_id');
  const scores = await api(server, 'GET', `/v1/scores/${bodies[count - 2]!.event_id}`, { key });
  t.is(scores.status, 200, scores.text);
});
