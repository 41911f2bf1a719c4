// A value of the wrong type in an untyped field (extras, open members) over real HTTP
// (docs/rules.md, "Missing data, wrong types and degraded"; DESIGN §3): the rule that meets it does
// not match and is named in `degraded` — for `==` and `in` as for `<`. Regression: a hard-block rule
// `extras.block == true` answered 200 allow, without `degraded`, when the caller sent "yes".
import test from 'ava';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, ruleBody } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

let server: TestServer;

test.before(async () => {
  server = await startServer();
});

test.after.always(async () => {
  await server?.stop();
});

async function score(key: string, extras: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras }) });
  if (response.status !== 200) throw new Error(`event not scored: ${response.text}`);
  return response.body.data;
}

test('a hard-block rule comparing extras with a bool is degraded, not silently skipped, when the value is a string', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('block_flag', { kind: 'hard_block', expression: 'extras.block == true' }));
  await createRule(server, project.key, ruleBody('block_not_off', { kind: 'hard_block', expression: 'extras.off != true && extras.off != false' }));
  await createRule(server, project.key, ruleBody('block_tier', { kind: 'hard_block', expression: "extras.tier in ['banned', 'fraud']" }));
  await publish(server, project.key);

  // The bool the rule expects: it blocks.
  t.like(await score(project.key, { block: true }), { decision: 'block', hard_block_hit: true });
  t.like(await score(project.key, { tier: 'banned' }), { decision: 'block', hard_block_hit: true });

  // Absent: not a match, not degraded.
  const absent = await score(project.key, {});
  t.like(absent, { decision: 'allow', hard_block_hit: false });
  t.false('degraded' in absent);

  // A string where the rule compares with a bool: the rule cannot be evaluated as written. A degraded
  // rule does not match (docs/rules.md), so the hard block does not fire and the other rules decide
  // (allow here), but the caller is told which rule could not be evaluated.
  const yes = await score(project.key, { block: 'yes' });
  t.like(yes, { decision: 'allow', hard_block_hit: false });
  t.deepEqual(yes.degraded, ['block_flag']);
  t.like(yes.breakdown.find((e: { rule_id: string }) => e.rule_id === 'block_flag'), { matched: false, band: null });

  const quoted = await score(project.key, { block: 'true', off: 'false', tier: 1 });
  t.like(quoted, { decision: 'allow', hard_block_hit: false });
  t.deepEqual(quoted.degraded, ['block_flag', 'block_not_off', 'block_tier']);
});
