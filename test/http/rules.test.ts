// The rules API over real HTTP (DESIGN §3, docs/rules-api.md): reading and writing rules and the
// policy, versions and history, publishing, published rulesets, projects and scopes.
import test from 'ava';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { createRule, newProject, publish, ruleBody, rulesState } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

let server: TestServer;

test.before(async () => {
  server = await startServer();
});

test.after.always(async () => {
  await server?.stop();
});

const kIso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('a new project lists its preset rules as drafts, published as version 1 and unchanged', async (t) => {
  const project = await newProject(server);
  const response = await api(server, 'GET', '/v1/rules', { key: project.key });
  t.is(response.status, 200, response.text);
  const list = response.body.data;
  t.is(list.published_version, 1);
  t.regex(list.published_at, kIso);
  t.false(list.drafts_differ);
  t.deepEqual(list.changed_rules, []);
  t.false(list.policy_changed);
  t.true(list.rules.length > 10);
  const ids = list.rules.map((rule: { rule_id: string }) => rule.rule_id);
  t.deepEqual(ids, [...ids].sort(), 'ordered by rule_id');
  t.true(ids.includes('known_fraudster'));
  for (const rule of list.rules) {
    t.deepEqual(Object.keys(rule), ['rule_id', 'kind', 'status', 'expression', 'score_delta', 'bands', 'action', 'description', 'version', 'created_at', 'updated_at']);
    t.is(rule.version, 1);
    t.regex(rule.created_at, kIso);
  }
});

test('create: 201 with version 1 and defaults; the rule is a draft until published', async (t) => {
  const project = await newProject(server);
  const response = await api(server, 'POST', '/v1/rules', { key: project.key, body: { rule_id: 'new_rule', kind: 'monitoring', status: 'active', expression: 'extras.campaign == "spring"' } });
  t.is(response.status, 201, response.text);
  t.like(response.body.data, { rule_id: 'new_rule', kind: 'monitoring', status: 'active', score_delta: 0, bands: null, action: null, description: '', version: 1 });
  t.is(response.body.data.created_at, response.body.data.updated_at);

  const read = await api(server, 'GET', '/v1/rules/new_rule', { key: project.key });
  t.is(read.status, 200);
  t.deepEqual(read.body.data, response.body.data);
  t.false('history' in read.body.data);

  const list = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.is(list.published_version, 1);
  t.true(list.drafts_differ);
  t.deepEqual(list.changed_rules, ['new_rule']);
});

test('replace: each change is a new version with history; the same body again is no change', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('edited', { kind: 'scoring', score_delta: 5 }));
  const second = await api(server, 'PUT', '/v1/rules/edited', { key: project.key, body: ruleBody('edited', { kind: 'scoring', score_delta: 7 }) });
  t.is(second.status, 200, second.text);
  t.like(second.body.data, { version: 2, score_delta: 7 });
  // rule_id may be left out of the body, and `version` is the version the change applies to.
  const { rule_id: _ruleId, ...withoutId } = ruleBody('edited', { kind: 'scoring', status: 'shadow', score_delta: 7 });
  const third = await api(server, 'PUT', '/v1/rules/edited', { key: project.key, body: { ...withoutId, version: 2 } });
  t.is(third.status, 200, third.text);
  t.like(third.body.data, { version: 3, status: 'shadow' });

  const again = await api(server, 'PUT', '/v1/rules/edited', { key: project.key, body: { ...withoutId, version: 3 } });
  t.is(again.status, 200);
  t.deepEqual(again.body.data, third.body.data, 'an identical replacement makes no version');

  const history = await api(server, 'GET', '/v1/rules/edited?history=true', { key: project.key });
  t.is(history.status, 200);
  t.deepEqual(history.body.data.history.map((entry: { version: number }) => entry.version), [3, 2, 1]);
  t.deepEqual(history.body.data.history.map((entry: { score_delta: number }) => entry.score_delta), [7, 7, 5]);
  for (const entry of history.body.data.history) {
    t.is(entry.changed_by, project.keyId);
    t.regex(entry.changed_at, kIso);
  }
  t.is(history.body.data.created_at, history.body.data.history[2].changed_at);
  t.is(history.body.data.updated_at, history.body.data.history[0].changed_at);
});

test('replace with a version that is no longer current is refused and changes nothing', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('contested'));
  await api(server, 'PUT', '/v1/rules/contested', { key: project.key, body: ruleBody('contested', { description: 'first analyst', version: 1 }) });
  const before = rulesState(server, project.projectId);
  const late = await api(server, 'PUT', '/v1/rules/contested', { key: project.key, body: ruleBody('contested', { description: 'second analyst', version: 1 }) });
  t.is(late.status, 400);
  t.is(late.body.errors[0].code, 'VALIDATION_ERROR');
  t.is(late.body.errors[0].parameter, 'version');
  t.regex(late.body.errors[0].message, /version 1 is not the current version of rule contested \(2\)/);
  t.deepEqual(rulesState(server, project.projectId), before);
});

test('a PUT retried after it was applied (its answer lost) answers 200 with the current record, version and all', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('retried'));
  const body = ruleBody('retried', { description: 'edited', version: 1 });
  const first = await api(server, 'PUT', '/v1/rules/retried', { key: project.key, body });
  t.is(first.status, 200, first.text);
  t.is(first.body.data.version, 2);
  const before = rulesState(server, project.projectId);
  const retry = await api(server, 'PUT', '/v1/rules/retried', { key: project.key, body });
  t.is(retry.status, 200, retry.text);
  t.deepEqual(retry.body.data, first.body.data);
  t.deepEqual(rulesState(server, project.projectId), before);
  // The policy's lock the same way.
  const policy = (await api(server, 'GET', '/v1/policy', { key: project.key })).body.data;
  const thresholds = { review_threshold: policy.review_threshold + 1, block_threshold: policy.block_threshold + 1, version: policy.version };
  const applied = await api(server, 'PUT', '/v1/policy', { key: project.key, body: thresholds });
  t.is(applied.status, 200, applied.text);
  t.is(applied.body.data.version, policy.version + 1);
  const retried = await api(server, 'PUT', '/v1/policy', { key: project.key, body: thresholds });
  t.is(retried.status, 200, retried.text);
  t.deepEqual(retried.body.data, applied.body.data);
});

test('policy: read, replace with a new version, identical replacement keeps it, stale version refused', async (t) => {
  const project = await newProject(server);
  const initial = await api(server, 'GET', '/v1/policy', { key: project.key });
  t.is(initial.status, 200);
  t.like(initial.body.data, { review_threshold: 40, block_threshold: 80, version: 1 });
  t.regex(initial.body.data.updated_at, kIso);

  const changed = await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 30, block_threshold: 60, version: 1 } });
  t.is(changed.status, 200, changed.text);
  t.like(changed.body.data, { review_threshold: 30, block_threshold: 60, version: 2 });
  const same = await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 30, block_threshold: 60 } });
  t.deepEqual(same.body.data, changed.body.data);
  t.deepEqual((await api(server, 'GET', '/v1/policy', { key: project.key })).body.data, changed.body.data);

  const list = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.true(list.policy_changed);
  t.true(list.drafts_differ);
  t.deepEqual(list.changed_rules, []);

  const stale = await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 10, block_threshold: 20, version: 1 } });
  t.is(stale.status, 400);
  t.is(stale.body.errors[0].parameter, 'version');
  t.like((await api(server, 'GET', '/v1/policy', { key: project.key })).body.data, { review_threshold: 30, block_threshold: 60, version: 2 });
});

test('a project without a preset has the default policy at version 0, no ruleset, and publishes version 1', async (t) => {
  const project = await newProject(server, 'none');
  t.like((await api(server, 'GET', '/v1/policy', { key: project.key })).body.data, { review_threshold: 40, block_threshold: 80, version: 0, updated_at: null });
  const list = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.like(list, { rules: [], published_version: null, published_at: null, drafts_differ: true, policy_changed: true });
  t.deepEqual((await api(server, 'GET', '/v1/rulesets', { key: project.key })).body.data, { rulesets: [], next_before: null });

  const published = await api(server, 'POST', '/v1/rules/publish', { key: project.key });
  t.is(published.status, 201, published.text);
  t.like(published.body.data, { changed: true, version: 1, live: true, max_possible: 0, rules: [], policy: { review_threshold: 40, block_threshold: 80, version: 0 } });
});

test('publish: 201 and version N+1 with every field; publishing again without changes is 200 changed false', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('big_spender', { kind: 'scoring', score_delta: 25, expression: 'payment.amount_cents > 1000000' }));
  await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 45, block_threshold: 90 } });

  const first = await api(server, 'POST', '/v1/rules/publish', { key: project.key, body: {} });
  t.is(first.status, 201, first.text);
  const ruleset = first.body.data;
  t.deepEqual(Object.keys(ruleset), ['changed', 'version', 'live', 'published_at', 'published_by', 'max_possible', 'signals', 'policy', 'rules']);
  t.like(ruleset, { changed: true, version: 2, live: true, published_by: project.keyId, policy: { review_threshold: 45, block_threshold: 90, version: 2 } });
  t.regex(ruleset.published_at, kIso);
  t.true(ruleset.signals.includes('velocity.ip_1h'));
  const bigSpender = ruleset.rules.find((rule: { rule_id: string }) => rule.rule_id === 'big_spender');
  t.like(bigSpender, { version: 1, score_delta: 25, kind: 'scoring' });
  t.false('created_at' in bigSpender);

  const versionOne = (await api(server, 'GET', '/v1/rulesets/1', { key: project.key })).body.data;
  t.is(ruleset.max_possible, versionOne.max_possible + 25, 'max_possible sums the positive deltas of active scoring rules');

  const list = (await api(server, 'GET', '/v1/rules', { key: project.key })).body.data;
  t.like(list, { published_version: 2, drafts_differ: false, changed_rules: [], policy_changed: false });

  const again = await api(server, 'POST', '/v1/rules/publish', { key: project.key });
  t.is(again.status, 200, again.text);
  const { changed, ...rest } = again.body.data;
  t.false(changed);
  t.deepEqual(rest, (({ changed: _changed, ...published }) => published)(ruleset));
  t.deepEqual((await api(server, 'GET', '/v1/rulesets', { key: project.key })).body.data.rulesets.map((r: { version: number }) => r.version), [2, 1]);
});

test('published rulesets: newest first, the live one marked, pages by before, one by version', async (t) => {
  const project = await newProject(server);
  for (const id of ['page_a', 'page_b']) {
    await createRule(server, project.key, ruleBody(id));
    await publish(server, project.key);
  }
  const all = await api(server, 'GET', '/v1/rulesets', { key: project.key });
  t.is(all.status, 200);
  t.deepEqual(all.body.data.rulesets.map((r: { version: number; live: boolean }) => [r.version, r.live]), [[3, true], [2, false], [1, false]]);
  t.is(all.body.data.next_before, null);
  t.is(all.body.data.rulesets[2].published_by, 'preset:default');

  const first = (await api(server, 'GET', '/v1/rulesets?limit=2', { key: project.key })).body.data;
  t.deepEqual(first.rulesets.map((r: { version: number }) => r.version), [3, 2]);
  t.is(first.next_before, 2);
  const second = (await api(server, 'GET', `/v1/rulesets?limit=2&before=${first.next_before}`, { key: project.key })).body.data;
  t.deepEqual(second.rulesets.map((r: { version: number }) => r.version), [1]);
  t.is(second.next_before, null);

  const two = await api(server, 'GET', '/v1/rulesets/2', { key: project.key });
  t.is(two.status, 200);
  t.deepEqual(two.body.data, all.body.data.rulesets[1]);
  t.true(two.body.data.rules.some((rule: { rule_id: string }) => rule.rule_id === 'page_a'));
  t.false(two.body.data.rules.some((rule: { rule_id: string }) => rule.rule_id === 'page_b'));
});

test('unknown rule and unknown ruleset version: 404 NOT_FOUND naming the parameter', async (t) => {
  const key = server.bootstrap.keys.live_secret.key;
  const cases: Array<[string, string, unknown, string]> = [
    ['GET', '/v1/rules/no_such_rule', undefined, 'rule_id'],
    ['GET', '/v1/rules/Not-A-Rule-Id', undefined, 'rule_id'],
    ['PUT', '/v1/rules/no_such_rule', ruleBody('no_such_rule'), 'rule_id'],
    ['GET', '/v1/rulesets/999', undefined, 'version'],
  ];
  for (const [method, path, body, parameter] of cases) {
    const response = await api(server, method, path, { key, body });
    t.is(response.status, 404, `${method} ${path}: ${response.text}`);
    t.is(response.body.errors[0].code, 'NOT_FOUND');
    t.is(response.body.errors[0].parameter, parameter);
  }
  const malformed = await api(server, 'GET', '/v1/rulesets/latest', { key });
  t.is(malformed.status, 400);
  t.is(malformed.body.errors[0].parameter, 'version');
});

test('rules are never deleted: DELETE is not a method of a rule (archive it instead)', async (t) => {
  const response = await api(server, 'DELETE', '/v1/rules/known_fraudster', { key: server.bootstrap.keys.live_secret.key });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'GET, HEAD, PUT');
});

test('sandbox and live projects have their own rules, policy and rulesets', async (t) => {
  const live = server.bootstrap.keys.live_secret.key;
  const sandbox = server.bootstrap.keys.sandbox_secret.key;
  const liveBefore = rulesState(server, server.bootstrap.live_project_id);
  await createRule(server, sandbox, ruleBody('sandbox_only'));
  await api(server, 'PUT', '/v1/policy', { key: sandbox, body: { review_threshold: 10, block_threshold: 20 } });
  const published = await publish(server, sandbox);
  t.is(published.body.data.version, 2);

  t.is((await api(server, 'GET', '/v1/rules/sandbox_only', { key: sandbox })).status, 200);
  t.is((await api(server, 'GET', '/v1/rules/sandbox_only', { key: live })).status, 404);
  t.like((await api(server, 'GET', '/v1/policy', { key: live })).body.data, { review_threshold: 40, block_threshold: 80 });
  t.is((await api(server, 'GET', '/v1/rulesets/2', { key: live })).status, 404);
  t.deepEqual(rulesState(server, server.bootstrap.live_project_id), liveBefore);
});

test('scopes: reading needs rules:read, writing rules:write, publishing rules:publish; refusals store nothing', async (t) => {
  const project = await newProject(server);
  const key = async (scopes: string): Promise<string> => (await createKeyWithCli(server.dataDir, ['--project', project.projectId, '--kind', 'secret', '--scopes', scopes])).key;
  const reader = await key('rules:read');
  const writer = await key('rules:read,rules:write');
  const eventsOnly = await key('events:write');
  const publishable = (await createKeyWithCli(server.dataDir, ['--project', project.projectId, '--kind', 'publishable'])).key;
  await createRule(server, project.key, ruleBody('scoped'));
  const before = rulesState(server, project.projectId);

  const refusals: Array<[string, string, string, unknown]> = [
    [reader, 'POST', '/v1/rules', ruleBody('by_reader')],
    [reader, 'PUT', '/v1/rules/scoped', ruleBody('scoped', { status: 'archived' })],
    [reader, 'PUT', '/v1/policy', { review_threshold: 1, block_threshold: 2 }],
    [reader, 'POST', '/v1/rules/publish', undefined],
    [writer, 'POST', '/v1/rules/publish', undefined],
    [eventsOnly, 'GET', '/v1/rules', undefined],
    [eventsOnly, 'GET', '/v1/rules/scoped', undefined],
    [eventsOnly, 'GET', '/v1/policy', undefined],
    [eventsOnly, 'GET', '/v1/rulesets', undefined],
    [eventsOnly, 'GET', '/v1/rulesets/1', undefined],
    [publishable, 'GET', '/v1/rules', undefined],
    [publishable, 'POST', '/v1/rules', ruleBody('by_publishable')],
    [publishable, 'POST', '/v1/rules/publish', undefined],
  ];
  for (const [withKey, method, path, body] of refusals) {
    const response = await api(server, method, path, { key: withKey, body });
    t.is(response.status, 403, `${method} ${path}: ${response.text}`);
    t.is(response.body.errors[0].code, 'SCOPE_ERROR');
  }
  t.deepEqual(rulesState(server, project.projectId), before);

  t.is((await api(server, 'GET', '/v1/rules/scoped', { key: reader })).status, 200);
  t.is((await api(server, 'GET', '/v1/rulesets', { key: reader })).status, 200);
  t.is((await api(server, 'POST', '/v1/rules', { key: writer, body: ruleBody('by_writer') })).status, 201);
  t.is((await api(server, 'PUT', '/v1/policy', { key: writer, body: { review_threshold: 1, block_threshold: 2 } })).status, 200);
});

test('a request without a key is 401 AUTH_ERROR', async (t) => {
  const response = await api(server, 'GET', '/v1/rules');
  t.is(response.status, 401);
  t.is(response.body.errors[0].code, 'AUTH_ERROR');
});
