// Publishing while events are being scored (DESIGN §3): every event is judged by one whole
// ruleset version, never a mix; the next event after the publish uses the new version.
import test from 'ava';
import { api, startServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';

test('events in flight during a publish are each judged by exactly one version', async (t) => {
  // 300 events at once: past the default OVERLOAD_EVENTS_IN_FLIGHT (64) for longer than
  // OVERLOAD_AFTER_MS, a slow machine would refuse some with 503 and the test would see no result
  // for them.
  const server = await startServer({ env: { MAX_EVENTS_IN_FLIGHT: '1000', OVERLOAD_EVENTS_IN_FLIGHT: '1000' } });
  try {
    const key = server.bootstrap.keys.live_secret.key;
    const created = await api(server, 'POST', '/v1/rules', {
      key,
      body: { rule_id: 'tagged_traffic', kind: 'scoring', status: 'active', expression: "extras.tag == 'swap'", score_delta: 5, description: 'Tagged test traffic.' },
    });
    t.is(created.status, 201, created.text);
    const send = () => api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { tag: 'swap' } }) });
    const before = Array.from({ length: 150 }, send);
    const published = api(server, 'POST', '/v1/rules/publish', { key, body: {} });
    const after = Array.from({ length: 150 }, send);
    const results = (await Promise.all([...before, ...after])).map((response) => response.body.data);
    t.is((await published).status, 201);
    const versions = new Set<number>();
    for (const result of results) {
      versions.add(result.ruleset_version);
      const tagged = result.breakdown.find((entry: { rule_id: string }) => entry.rule_id === 'tagged_traffic');
      if (result.ruleset_version === 1) {
        t.is(tagged, undefined);
      } else {
        t.is(result.ruleset_version, 2);
        t.true(tagged.matched);
        t.is(tagged.score_delta, 5);
        t.is(result.risk_score, 5);
      }
    }
    // Whatever the interleaving, the event scored after the publish answered uses version 2.
    const next = await send();
    t.is(next.body.data.ruleset_version, 2);
    t.log(`versions seen during the publish: ${[...versions].sort().join(', ')}`);
  } finally {
    await server.stop();
  }
});
