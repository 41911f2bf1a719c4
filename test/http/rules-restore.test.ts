// Rollback over real HTTP: POST /v1/rulesets/{version}/restore publishes N+1 with the rules and
// policy of {version}, resets the drafts to it (rules created since are archived), scores the next
// event like {version} did; restoring what is already live changes nothing; every refusal stores
// nothing.
import test from 'ava';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore, ruleBody, rulesState } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

let server: TestServer;

test.before(async () => {
  server = await startServer();
});

test.after.always(async () => {
  await server?.stop();
});

/** A rule as published, without its version: what "equal rules" compares. */
function content(rule: Record<string, unknown>): Record<string, unknown> {
  const { version: _version, ...rest } = rule;
  return rest;
}

async function score(key: string, extras: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras, payment: { amount_cents: 60_000, currency: 'EUR' } }) });
  if (response.status !== 200) throw new Error(`event not scored: ${response.text}`);
  return response.body.data;
}

test('restoring version 1 publishes N+1 with its rules and policy, resets the drafts, archives rules made since', async (t) => {
  const project = await newProject(server);
  const v1 = (await api(server, 'GET', '/v1/rulesets/1', { key: project.key })).body.data;
  const underV1 = await score(project.key, { big: true });

  // Version 2: a heavier rule, a new hard-block rule, stricter thresholds.
  const highAmount = v1.rules.find((rule: { rule_id: string }) => rule.rule_id === 'high_amount');
  const heavier = highAmount.bands.map((band: { score_delta: number }) => ({ ...band, score_delta: band.score_delta + 50 }));
  const changed = await api(server, 'PUT', '/v1/rules/high_amount', { key: project.key, body: { ...content(highAmount), bands: heavier } });
  t.is(changed.status, 200, changed.text);
  await createRule(server, project.key, ruleBody('big_spender', { kind: 'hard_block', expression: 'extras.big == true' }));
  t.is((await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 10, block_threshold: 20 } })).status, 200);
  t.is((await publish(server, project.key)).body.data.version, 2);
  t.like(await score(project.key, { big: true }), { decision: 'block', hard_block_hit: true, ruleset_version: 2 });

  const restored = await api(server, 'POST', '/v1/rulesets/1/restore', { key: project.key });
  t.is(restored.status, 201, restored.text);
  t.like(restored.body.data, { changed: true, restored_from: 1, version: 3, live: true, published_by: project.keyId, max_possible: v1.max_possible });
  t.deepEqual(restored.body.data.policy, { review_threshold: v1.policy.review_threshold, block_threshold: v1.policy.block_threshold, version: 3 });
  const v3 = restored.body.data;
  t.deepEqual(v3.rules.filter((rule: { rule_id: string }) => rule.rule_id !== 'big_spender').map(content), v1.rules.map(content));
  t.like(v3.rules.find((rule: { rule_id: string }) => rule.rule_id === 'big_spender'), { status: 'archived', version: 2 });
  t.is(v3.rules.find((rule: { rule_id: string }) => rule.rule_id === 'high_amount').version, 3, 'a restored rule takes its next version');
  t.is(v3.rules.find((rule: { rule_id: string }) => rule.rule_id === 'trusted_user').version, 1, 'an unchanged rule keeps its version');

  // The drafts are version 1 again, and equal to what is live.
  const drafts = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.like(drafts, { published_version: 3, drafts_differ: false, changed_rules: [], policy_changed: false });
  const history = (await api(server, 'GET', '/v1/rules/high_amount?history=true', { key: project.key })).body.data.history;
  t.like(history[0], { version: 3, changed_by: project.keyId });
  t.deepEqual(history[0].bands, highAmount.bands);
  t.like((await api(server, 'GET', '/v1/policy', { key: project.key })).body.data, { review_threshold: 40, block_threshold: 80, version: 3 });

  // The next event is judged as version 1 judged it.
  const underV3 = await score(project.key, { big: true });
  t.like(underV3, { ruleset_version: 3, decision: underV1.decision, risk_score: underV1.risk_score, hard_block_hit: false });

  // Restoring what is live already writes nothing.
  const before = rulesState(server, project.projectId);
  const again = await api(server, 'POST', '/v1/rulesets/1/restore', { key: project.key, body: {} });
  t.is(again.status, 200, again.text);
  t.like(again.body.data, { changed: false, restored_from: 1, version: 3 });
  t.deepEqual(rulesState(server, project.projectId), before);

  // And forward again: version 2's rules and policy as version 4.
  const forward = await api(server, 'POST', '/v1/rulesets/2/restore', { key: project.key });
  t.is(forward.status, 201, forward.text);
  t.like(forward.body.data, { version: 4, restored_from: 2, policy: { review_threshold: 10, block_threshold: 20, version: 4 } });
  t.like(forward.body.data.rules.find((rule: { rule_id: string }) => rule.rule_id === 'big_spender'), { status: 'active', version: 3 });
  t.like(await score(project.key, { big: true }), { decision: 'block', hard_block_hit: true, ruleset_version: 4 });

  // Each restore that published is in the audit trail; the one that wrote nothing is not.
  const trail = await api(server, 'GET', '/v1/audit?action=ruleset.restore', { key: project.key });
  t.is(trail.status, 200, trail.text);
  t.deepEqual(
    trail.body.data.records.map((record: { target: string; actor: string; summary: { restored_version: number } }) => [record.target, record.actor, record.summary.restored_version]),
    [['ruleset:4', project.keyId, 2], ['ruleset:3', project.keyId, 1]],
  );
});

test('restoring the live version throws the drafts away and publishes nothing; drafts edited back to the live content publish nothing', async (t) => {
  const project = await newProject(server);
  const v1 = (await api(server, 'GET', '/v1/rulesets/1', { key: project.key })).body.data;
  const highAmount = v1.rules.find((rule: { rule_id: string }) => rule.rule_id === 'high_amount');
  const heavier = highAmount.bands.map((band: { score_delta: number }) => ({ ...band, score_delta: band.score_delta + 5 }));
  t.is((await api(server, 'PUT', '/v1/rules/high_amount', { key: project.key, body: { ...content(highAmount), bands: heavier } })).status, 200);
  t.is((await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 40, block_threshold: 60 } })).status, 200);
  t.like((await api(server, 'GET', '/v1/rules', { key: project.key })).body.data, { drafts_differ: true, changed_rules: ['high_amount'], policy_changed: true });

  const discarded = await api(server, 'POST', '/v1/rulesets/1/restore', { key: project.key });
  t.is(discarded.status, 200, discarded.text);
  t.like(discarded.body.data, { changed: false, restored_from: 1, version: 1 });
  t.deepEqual((await api(server, 'GET', '/v1/rulesets', { key: project.key })).body.data.rulesets.map((ruleset: { version: number }) => ruleset.version), [1], 'nothing published');
  t.like((await api(server, 'GET', '/v1/rules', { key: project.key })).body.data, { published_version: 1, drafts_differ: false, changed_rules: [], policy_changed: false });
  t.like((await api(server, 'GET', '/v1/policy', { key: project.key })).body.data, { review_threshold: 40, block_threshold: 80 });
  t.deepEqual((await api(server, 'GET', '/v1/rules/high_amount', { key: project.key })).body.data.bands, highAmount.bands, 'the draft is the live rule again');
  t.like(await score(project.key, {}), { ruleset_version: 1 });
  // The reset is in the audit trail, naming the live version: nothing new was published.
  const trail = (await api(server, 'GET', '/v1/audit?action=ruleset.restore', { key: project.key })).body.data.records;
  t.is(trail.length, 1);
  t.like(trail[0], { target: 'ruleset:1', summary: { version: 1, restored_version: 1, changed_rules: ['high_amount'], policy_changed: true } });

  // A rule changed and changed back is the live rule: a publish changes nothing.
  t.is((await api(server, 'PUT', '/v1/rules/high_amount', { key: project.key, body: { ...content(highAmount), bands: heavier } })).status, 200);
  t.is((await api(server, 'PUT', '/v1/rules/high_amount', { key: project.key, body: content(highAmount) })).status, 200);
  t.like((await api(server, 'GET', '/v1/rules', { key: project.key })).body.data, { drafts_differ: false });
  const published = await publish(server, project.key);
  t.is(published.status, 200, published.text);
  t.like(published.body.data, { changed: false, version: 1 });
  // Restoring the live version then has nothing to reset: nothing written, not even a record.
  const before = rulesState(server, project.projectId);
  const noop = await api(server, 'POST', '/v1/rulesets/1/restore', { key: project.key });
  t.is(noop.status, 200, noop.text);
  t.like(noop.body.data, { changed: false, restored_from: 1, version: 1 });
  t.deepEqual(rulesState(server, project.projectId), before);
  t.is((await api(server, 'GET', '/v1/audit?action=ruleset.restore', { key: project.key })).body.data.records.length, 1);
  // A rule created since and thrown away by restoring the live version: archived, it acts on nothing; nothing is published.
  t.is((await createRule(server, project.key, ruleBody('discard_me', { expression: 'payment.amount_cents > 1' }))).status, 201);
  const thrownAway = await api(server, 'POST', '/v1/rulesets/1/restore', { key: project.key });
  t.is(thrownAway.status, 200, thrownAway.text);
  t.like(thrownAway.body.data, { changed: false, version: 1 });
  t.like((await api(server, 'GET', '/v1/rules/discard_me', { key: project.key })).body.data, { status: 'archived' });
  t.like((await api(server, 'GET', '/v1/rules', { key: project.key })).body.data, { drafts_differ: false, changed_rules: [] });
});

test('restore refusals: unknown version 404, malformed version, body field or query parameter 400, missing scope 403; nothing stored changes', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('pending_draft'));
  const publishOnly = await createKeyWithCli(server.dataDir, ['--project', project.projectId, '--kind', 'secret', '--scopes', 'rules:read,rules:write']);
  const before = rulesState(server, project.projectId);
  const cases: Array<[string, { key?: string; body?: unknown }, number, string, string]> = [
    ['/v1/rulesets/2/restore', {}, 404, 'NOT_FOUND', 'version'],
    ['/v1/rulesets/0/restore', {}, 400, 'VALIDATION_ERROR', 'version'],
    ['/v1/rulesets/abc/restore', {}, 400, 'VALIDATION_ERROR', 'version'],
    ['/v1/rulesets/1.5/restore', {}, 400, 'VALIDATION_ERROR', 'version'],
    ['/v1/rulesets/1/restore', { body: { force: true } }, 400, 'VALIDATION_ERROR', 'force'],
    ['/v1/rulesets/1/restore?dry_run=true', {}, 400, 'VALIDATION_ERROR', 'dry_run'],
    ['/v1/rulesets/1/restore', { key: publishOnly.key }, 403, 'SCOPE_ERROR', ''],
  ];
  for (const [path, options, status, code, parameter] of cases) {
    const response = await api(server, 'POST', path, { key: options.key ?? project.key, body: options.body });
    t.is(response.status, status, `${path}: ${response.text}`);
    t.is(response.body.errors[0].code, code, path);
    t.is(response.body.errors[0].parameter, parameter, path);
  }
  // Another project's version 2 is not this project's.
  const other = await newProject(server);
  await createRule(server, other.key, ruleBody('other_rule'));
  await publish(server, other.key);
  t.is((await api(server, 'POST', '/v1/rulesets/2/restore', { key: project.key })).status, 404);
  const wrongMethod = await api(server, 'GET', '/v1/rulesets/1/restore', { key: project.key });
  t.is(wrongMethod.status, 405);
  t.is(wrongMethod.headers.get('allow'), 'POST');
  t.deepEqual(rulesState(server, project.projectId), before);
  t.is(readStore(server, (db) => (db.prepare('SELECT count(*) AS n FROM rulesets WHERE project_id = ?').get(project.projectId) as { n: number }).n), 1);

  // The draft made before is archived by a restore of version 1 (it is not in version 1); archived,
  // it acts on nothing, so version 1 stays live and nothing is published.
  const restored = await api(server, 'POST', '/v1/rulesets/1/restore', { key: project.key });
  t.is(restored.status, 200, restored.text);
  t.like(restored.body.data, { changed: false, version: 1 });
  t.like((await api(server, 'GET', '/v1/rules/pending_draft', { key: project.key })).body.data, { status: 'archived', version: 2 });
});
