// What publishing does to scoring, over real HTTP: the next event uses the new version at once and
// names each rule's published version; archived rules stop acting; shadow rules are evaluated and
// stored but never change a result; the policy is published with the rules; a draft that does not
// compile publishes nothing; concurrent publishes make one version.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore, ruleBody, rulesState } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';
import { LoadedRulesets } from '../../src/scoring/loaded-rulesets.js';

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

function entryOf(result: { breakdown: Array<{ rule_id: string }> }, ruleId: string): any {
  return result.breakdown.find((entry) => entry.rule_id === ruleId);
}

function replaceRule(key: string, ruleId: string, body: Record<string, unknown>): Promise<unknown> {
  return api(server, 'PUT', `/v1/rules/${ruleId}`, { key, body }).then((response) => {
    if (response.status !== 200) throw new Error(`rule not replaced: ${response.text}`);
    return response.body.data;
  });
}

test('a hard-block rule created and published through the API blocks the very next event, naming its version; archived, it stops', async (t) => {
  const project = await newProject(server);
  const flagRule = ruleBody('test_flag', { kind: 'hard_block', expression: 'extras.test_flag == true' });
  await createRule(server, project.key, flagRule);

  const draftOnly = await score(project.key, { test_flag: true });
  t.is(draftOnly.decision, 'allow', 'a draft does not score');
  t.is(entryOf(draftOnly, 'test_flag'), undefined);

  t.is((await publish(server, project.key)).body.data.version, 2);
  // No pause: the publish made version 2 live before it answered.
  const blocked = await score(project.key, { test_flag: true });
  t.like(blocked, { decision: 'block', hard_block_hit: true, trust_override: false, ruleset_version: 2 });
  t.is(blocked.risk_score, blocked.max_possible);
  t.deepEqual(blocked.breakdown, [{ rule_id: 'test_flag', rule_version: 1, score_delta: 0, band: 'match', matched: true, reason: 'test_flag' }]);
  t.is((await score(project.key, { test_flag: false })).decision, 'allow');

  await replaceRule(project.key, 'test_flag', { ...flagRule, description: 'Blocks flagged test traffic.' });
  const stillOne = await score(project.key, { test_flag: true });
  t.is(stillOne.breakdown[0].rule_version, 1, 'the live version until the change is published');
  await publish(server, project.key);
  const versionTwo = await score(project.key, { test_flag: true });
  t.like(versionTwo, { decision: 'block', ruleset_version: 3 });
  t.is(versionTwo.breakdown[0].rule_version, 2);

  await replaceRule(project.key, 'test_flag', { ...flagRule, status: 'archived' });
  await publish(server, project.key);
  const archived = await score(project.key, { test_flag: true });
  t.like(archived, { decision: 'allow', hard_block_hit: false, ruleset_version: 4 });
  t.is(entryOf(archived, 'test_flag'), undefined);

  // A stored result keeps the versions it was scored with.
  const stored = await api(server, 'GET', `/v1/scores/${blocked.event_id}`, { key: project.key });
  t.is(stored.body.data.breakdown[0].rule_version, 1);
  t.is(stored.body.data.ruleset_version, 2);
});

test('a shadow rule never appears in the breakdown nor changes the decision; its outcome is stored with the event', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('shadow_check', { kind: 'hard_block', status: 'shadow', expression: 'extras.suspicious == true' }));
  await createRule(server, project.key, ruleBody('shadow_points', { kind: 'scoring', status: 'shadow', score_delta: 500, expression: 'extras.suspicious == true' }));
  const published = (await publish(server, project.key)).body.data;
  const plain = await score(project.key, { suspicious: false });
  const matched = await score(project.key, { suspicious: true });
  t.is(published.max_possible, plain.max_possible, 'a shadow scoring rule adds nothing to max_possible');

  for (const result of [plain, matched]) {
    t.like(result, { decision: 'allow', hard_block_hit: false, risk_score: plain.risk_score });
    t.is(entryOf(result, 'shadow_check'), undefined);
    t.is(entryOf(result, 'shadow_points'), undefined);
  }
  // The preset has shadow rules of its own; only these two are looked at.
  const shadowOf = (eventId: string): Array<Record<string, unknown>> =>
    readStore(server, (db) => {
      const row = db.prepare('SELECT project_id, ruleset_version, shadow FROM events WHERE event_id = ?').get(eventId) as { project_id: string; ruleset_version: number; shadow: string };
      const loaded = new LoadedRulesets(db).get(row.project_id, row.ruleset_version);
      if (typeof loaded === 'string') throw new Error(loaded);
      return loaded.layout.expandShadow(row.shadow) as unknown as Array<Record<string, unknown>>;
    }).filter((outcome) => (outcome.rule_id as string).startsWith('shadow_'));
  t.deepEqual(shadowOf(matched.event_id), [
    { rule_id: 'shadow_check', rule_version: 1, kind: 'hard_block', matched: true, band: 'match', score_delta: 0, degraded: false },
    { rule_id: 'shadow_points', rule_version: 1, kind: 'scoring', matched: true, band: 'match', score_delta: 500, degraded: false },
  ]);
  t.deepEqual(shadowOf(plain.event_id).map((outcome) => [outcome.rule_id, outcome.matched]), [['shadow_check', false], ['shadow_points', false]]);

  // Promoted from shadow to active, the same rule decides.
  await replaceRule(project.key, 'shadow_check', ruleBody('shadow_check', { kind: 'hard_block', status: 'active', expression: 'extras.suspicious == true' }));
  await publish(server, project.key);
  const promoted = await score(project.key, { suspicious: true });
  t.like(promoted, { decision: 'block', hard_block_hit: true });
  t.like(promoted.breakdown[0], { rule_id: 'shadow_check', rule_version: 2 });
});

test('the policy is published with the rules: thresholds decide only once published', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('points', { kind: 'scoring', score_delta: 500, expression: 'extras.points == true' }));
  await publish(server, project.key);
  const before = await score(project.key, { points: true });
  t.is(before.decision, 'block');
  t.true(before.risk_score >= 500);
  t.like(entryOf(before, 'points'), { matched: true, score_delta: 500, rule_version: 1 });

  const changed = await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 999_999, block_threshold: 1_000_000 } });
  t.is(changed.status, 200);
  t.is((await score(project.key, { points: true })).decision, 'block', 'the draft policy does not decide');
  const published = (await publish(server, project.key)).body.data;
  t.like(published.policy, { review_threshold: 999_999, block_threshold: 1_000_000 });
  const after = await score(project.key, { points: true });
  t.is(after.decision, 'allow');
  t.is(after.risk_score, before.risk_score);
});

test('a draft that does not compile publishes nothing: 400 naming rules.<rule_id>.expression with the position', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('good_rule', { kind: 'hard_block', expression: 'extras.good == true' }));
  await publish(server, project.key);
  // The API refuses such a draft (see rules-validation.test.ts), so it is planted in the store, as
  // a draft saved under an older compiler that a newer one no longer accepts would be.
  const planted = { ...ruleBody('legacy_rule'), expression: 'extras.legacy == true &&', score_delta: 0, bands: null, action: null, version: 1 };
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('INSERT INTO rules (project_id, rule_id, version, definition, created_at, updated_at) VALUES (?, ?, 1, ?, 0, 0)').run(
      project.projectId, 'legacy_rule', JSON.stringify(planted),
    );
  } finally {
    db.close();
  }
  const before = rulesState(server, project.projectId);

  const refused = await api(server, 'POST', '/v1/rules/publish', { key: project.key });
  t.is(refused.status, 400, refused.text);
  t.is(refused.body.errors[0].code, 'VALIDATION_ERROR');
  t.is(refused.body.errors[0].parameter, 'rules.legacy_rule.expression');
  t.regex(refused.body.errors[0].message, /^rules\.legacy_rule\.expression: line 1, column 25: .+Nothing was published\.$/);
  t.deepEqual(rulesState(server, project.projectId), before);
  const list = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.like(list, { published_version: 2, drafts_differ: true, changed_rules: ['legacy_rule'] });
  const result = await score(project.key, { good: true });
  t.like(result, { decision: 'block', ruleset_version: 2 });

  // Repaired through the API, it publishes.
  await replaceRule(project.key, 'legacy_rule', ruleBody('legacy_rule', { expression: 'extras.legacy == true' }));
  const published = await api(server, 'POST', '/v1/rules/publish', { key: project.key });
  t.is(published.status, 201, published.text);
  t.is(published.body.data.version, 3);
});

test('concurrent publishes of the same drafts make one version', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('raced'));
  const answers = await Promise.all([1, 2, 3].map(() => api(server, 'POST', '/v1/rules/publish', { key: project.key })));
  t.deepEqual(answers.map((answer) => answer.status).sort(), [200, 200, 201]);
  t.deepEqual(answers.map((answer) => answer.body.data.version), [2, 2, 2]);
  const versions = (await api(server, 'GET', '/v1/rulesets', { key: project.key })).body.data.rulesets.map((r: { version: number }) => r.version);
  t.deepEqual(versions, [2, 1]);
});

test('a rule changed while a publish compiles: the published ruleset is one of the draft states, never a mix', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('moving', { description: 'v1' }));
  const [published] = await Promise.all([
    api(server, 'POST', '/v1/rules/publish', { key: project.key }),
    replaceRule(project.key, 'moving', ruleBody('moving', { description: 'v2' })),
  ]);
  t.is(published.status, 201, published.text);
  const moving = published.body.data.rules.find((rule: { rule_id: string }) => rule.rule_id === 'moving');
  t.is(moving.description, `v${moving.version}`);
  const list = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.is(list.drafts_differ, moving.version === 1);
});
