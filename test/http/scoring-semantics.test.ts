// What the shipped presets do with the declared marks and with links to blocked accounts, as the
// presets' own descriptions and docs/rules.md say (semantic audit of scoring).
import test from 'ava';
import { api, startServer, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { newProject, publish } from '../_helpers/rules.js';

let server: TestServer;
test.before(async () => {
  server = await startServer({ env: { WORKERS: '1' } });
});
test.after.always(async () => {
  await server?.stop();
});

for (const preset of ['default', 'account_security']) {
  test.serial(`${preset}: a trust mark wins over a hard-block mark (trust rules run first)`, async (t) => {
    const { key } = await newProject(server, preset);
    for (const [trust, block] of [['trusted', 'is_known_fraud'], ['vip', 'sanctions_match']] as const) {
      const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { [trust]: true, [block]: true } }) });
      t.is(response.status, 200, response.text);
      const result = response.body.data;
      t.is(result.decision, 'allow');
      t.is(result.risk_score, 0);
      t.true(result.trust_override);
      t.false(result.hard_block_hit);
      t.is(result.breakdown.length, 1);
      t.is(result.breakdown[0].rule_id, trust === 'trusted' ? 'trusted_user' : 'vip_user');
      t.is(result.actions, undefined);
    }
  });

  test.serial(`${preset}: linked_to_fraud says what links.fraud counts (a block by score too)`, async (t) => {
    const { key } = await newProject(server, preset);
    const rule = await api(server, 'GET', '/v1/rules/linked_to_fraud', { key });
    t.is(rule.status, 200, rule.text);
    t.regex(rule.body.data.description, /by score/);
    t.notRegex(rule.body.data.description, /or hard-blocked\b/);
  });
}

test.serial('an account blocked by score, not by a hard-block rule, counts in links.fraud of the accounts linked to it', async (t) => {
  const { key } = await newProject(server, 'default');
  const created = await api(server, 'POST', '/v1/rules', {
    key,
    body: { rule_id: 'push_over', kind: 'scoring', status: 'active', expression: 'extras.push == true', score_delta: 100, description: 'Test: scores past the block threshold.' },
  });
  t.is(created.status, 201, created.text);
  await publish(server, key);
  const email = `shared-${Date.now()}@example.com`;
  const first = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'blocked-by-score', user: { email }, extras: { push: true } }) });
  t.is(first.status, 200, first.text);
  t.is(first.body.data.decision, 'block');
  t.false(first.body.data.hard_block_hit);
  const second = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'linked-by-email', user: { email } }) });
  t.is(second.status, 200, second.text);
  const linked = second.body.data.breakdown.find((entry: { rule_id: string }) => entry.rule_id === 'linked_to_fraud');
  t.true(linked.matched);
  t.is(linked.band, 'some');
  t.deepEqual(second.body.data.actions, ['require_kyc:document']);
});
