// The rules API's pure parts: request checks (rules-request.ts), the mapping of compiler problems
// and diagnostics to one VALIDATION_ERROR, the draft/published comparison and the wire views.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { compileRuleset, type RuleDefinition } from '../../compiler/index.js';
import {
  diagnosticParameter, kMaxThreshold, parseCreateRule, parseNoQuery, parsePolicy, parsePublishBody, parseReplaceRule,
  parseRuleQuery, parseRulesetListQuery, parseRulesetVersion, publishDiagnosticsError, ruleProblemsError, type Checked,
} from '../../src/rulesets/rules-request.js';
import { draftChanges, sameDrafts, type DraftSnapshot, type PublishedRuleset } from '../../src/rulesets/ruleset-store.js';
import { rulesListView, rulesetView, ruleWithHistoryView } from '../../src/rulesets/rules-view.js';

function rule(partial: Partial<RuleDefinition> & { rule_id: string }): RuleDefinition {
  return { kind: 'scoring', status: 'active', expression: 'true', score_delta: 1, bands: null, action: null, description: '', version: 1, ...partial };
}

function refusedWith<T>(t: ExecutionContext, result: Checked<T>, parameter: string, message: RegExp): void {
  t.false(result.ok);
  if (result.ok) return;
  t.is(result.error.code, 'VALIDATION_ERROR');
  t.is(result.error.status, 400);
  t.is(result.error.parameter, parameter);
  t.regex(result.error.message, message);
}

test('a create body passes through unchanged, to be checked by the compiler', (t) => {
  const body = { rule_id: 'x', kind: 'monitoring', status: 'active', expression: 'true' };
  t.deepEqual(parseCreateRule(body), { ok: true, value: body });
});

const createRefused = test.macro({
  exec(t, body: Record<string, unknown>, parameter: string, message: RegExp) {
    refusedWith(t, parseCreateRule(body), parameter, message);
  },
  title: (_title, body: Record<string, unknown>) => `create refuses ${JSON.stringify(body)}`,
});
test(createRefused, { rule_id: 'x', version: 1 }, 'version', /set by the service/);
test(createRefused, { rule_id: 'x', created_at: '2026-01-01T00:00:00Z' }, 'created_at', /set by the service/);
test(createRefused, { rule_id: 'x', updated_at: '2026-01-01T00:00:00Z' }, 'updated_at', /set by the service/);
test(createRefused, { rule_id: 'publish' }, 'rule_id', /reserved/);
test(createRefused, { rule_id: 'backtests' }, 'rule_id', /reserved/);

test('a replace body takes rule_id from the path and version as the expected version', (t) => {
  t.deepEqual(parseReplaceRule({ kind: 'trust', version: 4 }, 'vip'), { ok: true, value: { record: { kind: 'trust', rule_id: 'vip' }, expectedVersion: 4 } });
  t.deepEqual(parseReplaceRule({ rule_id: 'vip', version: null }, 'vip'), { ok: true, value: { record: { rule_id: 'vip' }, expectedVersion: null } });
  t.deepEqual(parseReplaceRule({}, 'vip'), { ok: true, value: { record: { rule_id: 'vip' }, expectedVersion: null } });
});

const replaceRefused = test.macro({
  exec(t, body: Record<string, unknown>, parameter: string, message: RegExp) {
    refusedWith(t, parseReplaceRule(body, 'vip'), parameter, message);
  },
  title: (_title, body: Record<string, unknown>) => `replace refuses ${JSON.stringify(body)}`,
});
test(replaceRefused, { rule_id: 'other' }, 'rule_id', /must be the rule_id of the path/);
test(replaceRefused, { rule_id: 7 }, 'rule_id', /must be the rule_id of the path/);
test(replaceRefused, { version: '3' }, 'version', /integer version you last read/);
test(replaceRefused, { version: 1.5 }, 'version', /integer version you last read/);
test(replaceRefused, { version: -1 }, 'version', /integer version you last read/);
test(replaceRefused, { changed_by: 'me' }, 'changed_by', /set by the service/);

test('rule problems become one error naming the first field, every problem in the message', (t) => {
  const error = ruleProblemsError([
    { field: 'kind', message: 'must be one of trust, hard_block, scoring, monitoring' },
    { field: 'bands[0].band', message: 'must match [a-z][a-z0-9_]{0,31}' },
    { field: 'expression', message: 'line 1, column 3: Unknown variable: x' },
  ]);
  t.deepEqual(error, {
    code: 'VALIDATION_ERROR',
    status: 400,
    parameter: 'kind',
    message: 'kind: must be one of trust, hard_block, scoring, monitoring; bands[0].band: must match [a-z][a-z0-9_]{0,31}; expression: line 1, column 3: Unknown variable: x.',
  });
  t.is(ruleProblemsError([{ field: '', message: 'a rule must be a JSON object' }]).parameter, 'body');
  t.is(ruleProblemsError([]).parameter, 'body');
});

test('beyond ten problems the message counts the rest', (t) => {
  const problems = Array.from({ length: 13 }, (_, i) => ({ field: `bands[${i}].band`, message: 'duplicate' }));
  const error = ruleProblemsError(problems);
  t.is(error.parameter, 'bands[0].band');
  t.regex(error.message, /bands\[9\]\.band: duplicate; and 3 more\.$/);
  t.false(error.message.includes('bands[10]'));
});

test('publish diagnostics name rules.<rule_id>.<field> and keep the position in the message', (t) => {
  const compiled = compileRuleset([
    rule({ rule_id: 'high_amount', expression: 'payment.amount_cents >' }),
    rule({ rule_id: 'banded', score_delta: 0, bands: [{ band: 'a', expression: 'nope == 1', score_delta: 1 }] }),
  ]);
  t.false(compiled.ok);
  if (compiled.ok) return;
  const error = publishDiagnosticsError(compiled.errors);
  t.is(error.code, 'VALIDATION_ERROR');
  t.is(error.parameter, 'rules.high_amount.expression');
  t.regex(error.message, /^rules\.high_amount\.expression: line 1, column 23: [^;]+; rules\.banded\.bands\[0\]\.expression: line 1, column 1: Unknown variable: nope\. Nothing was published\.$/);
  t.is(diagnosticParameter(compiled.errors[1]!), 'rules.banded.bands[0].expression');
});

test('diagnostics without a rule or a field still name a parameter', (t) => {
  t.is(diagnosticParameter({ rule_id: '', field: 'rules', message: 'a ruleset has at most 1000 rules', position: null }), 'rules');
  t.is(diagnosticParameter({ rule_id: '', field: '', message: 'x', position: null }), 'rules');
  t.is(diagnosticParameter({ rule_id: 'dup', field: 'rule_id', message: 'duplicate', position: null }), 'rules.dup.rule_id');
  t.is(diagnosticParameter({ rule_id: 'r', field: '', message: 'x', position: null }), 'rules.r');
  t.is(publishDiagnosticsError([]).parameter, 'rules');
});

test('the publish body is optional and, when sent, empty', (t) => {
  t.is(parsePublishBody(null), null);
  t.is(parsePublishBody({}), null);
  const error = parsePublishBody({ note: 'x' });
  t.is(error?.parameter, 'note');
  t.is(error?.code, 'VALIDATION_ERROR');
});

test('a policy takes both thresholds and an optional expected version', (t) => {
  t.deepEqual(parsePolicy({ review_threshold: 0, block_threshold: 0 }), { ok: true, value: { review_threshold: 0, block_threshold: 0, expectedVersion: null } });
  t.deepEqual(parsePolicy({ review_threshold: 40, block_threshold: kMaxThreshold, version: 0 }), {
    ok: true,
    value: { review_threshold: 40, block_threshold: kMaxThreshold, expectedVersion: 0 },
  });
});

const policyRefused = test.macro({
  exec(t, body: Record<string, unknown>, parameter: string, message: RegExp) {
    refusedWith(t, parsePolicy(body), parameter, message);
  },
  title: (_title, body: Record<string, unknown>) => `policy refuses ${JSON.stringify(body)}`,
});
test(policyRefused, { block_threshold: 80 }, 'review_threshold', /required/);
test(policyRefused, { review_threshold: 40 }, 'block_threshold', /required/);
test(policyRefused, { review_threshold: -1, block_threshold: 80 }, 'review_threshold', /integer from 0 to 1000000/);
test(policyRefused, { review_threshold: 40.5, block_threshold: 80 }, 'review_threshold', /integer/);
test(policyRefused, { review_threshold: '40', block_threshold: 80 }, 'review_threshold', /integer/);
test(policyRefused, { review_threshold: 40, block_threshold: kMaxThreshold + 1 }, 'block_threshold', /integer from 0 to 1000000/);
test(policyRefused, { review_threshold: 40, block_threshold: null }, 'block_threshold', /integer/);
test(policyRefused, { review_threshold: 81, block_threshold: 80 }, 'review_threshold', /not be above block_threshold/);
test(policyRefused, { review_threshold: 40, block_threshold: 80, allow_threshold: 1 }, 'allow_threshold', /not a field/);
test(policyRefused, { review_threshold: 40, block_threshold: 80, updated_at: 'x' }, 'updated_at', /set by the service/);
test(policyRefused, { review_threshold: 40, block_threshold: 80, version: 'x' }, 'version', /integer/);

test('query strings: unknown, repeated and malformed parameters are refused by name', (t) => {
  t.is(parseNoQuery(''), null);
  t.is(parseNoQuery('status=active')?.parameter, 'status');
  t.deepEqual(parseRuleQuery(''), { ok: true, value: { history: false } });
  t.deepEqual(parseRuleQuery('history=true'), { ok: true, value: { history: true } });
  t.deepEqual(parseRuleQuery('history=false'), { ok: true, value: { history: false } });
  refusedWith(t, parseRuleQuery('history=yes'), 'history', /true or false/);
  refusedWith(t, parseRuleQuery('history=true&history=true'), 'history', /more than once/);
  refusedWith(t, parseRuleQuery('versions=true'), 'versions', /not a query parameter/);
  t.deepEqual(parseRulesetListQuery(''), { ok: true, value: { limit: 20, before: null } });
  t.deepEqual(parseRulesetListQuery('limit=100&before=7'), { ok: true, value: { limit: 100, before: 7 } });
  refusedWith(t, parseRulesetListQuery('limit=0'), 'limit', /1 to 100/);
  refusedWith(t, parseRulesetListQuery('limit=101'), 'limit', /1 to 100/);
  refusedWith(t, parseRulesetListQuery('before=-1'), 'before', /positive integer/);
  t.deepEqual(parseRulesetVersion('12'), { ok: true, value: 12 });
  for (const raw of ['0', '01', 'x', '1.5', '9'.repeat(20)]) refusedWith(t, parseRulesetVersion(raw), 'version', /positive integer/);
});

const policy = { review_threshold: 40, block_threshold: 80, version: 2 };

test('draft changes: new and changed rules, and the policy, against the published ruleset', (t) => {
  const published: DraftSnapshot = { rules: [rule({ rule_id: 'a' }), rule({ rule_id: 'b', version: 2 })], policy };
  t.deepEqual(draftChanges(published, published), { changed_rules: [], policy_changed: false });
  t.true(sameDrafts(published, published));
  const drafts: DraftSnapshot = { rules: [rule({ rule_id: 'c' }), rule({ rule_id: 'a' }), rule({ rule_id: 'b', version: 3, score_delta: 2 })], policy: { ...policy, review_threshold: policy.review_threshold + 1, version: 3 } };
  t.deepEqual(draftChanges(drafts, published), { changed_rules: ['b', 'c'], policy_changed: true });
  t.false(sameDrafts(drafts, published));
  // Edited and edited back: new versions, the published content; no change to publish, but other drafts than those read.
  const editedBack: DraftSnapshot = { rules: [rule({ rule_id: 'a' }), rule({ rule_id: 'b', version: 4 })], policy: { ...policy, version: 5 } };
  t.deepEqual(draftChanges(editedBack, published), { changed_rules: [], policy_changed: false });
  t.false(sameDrafts(editedBack, published));
  t.deepEqual(draftChanges({ rules: [], policy }, published), { changed_rules: ['a', 'b'], policy_changed: false });
  t.deepEqual(draftChanges({ rules: [], policy }, null), { changed_rules: [], policy_changed: true });
});

test('views: times as ISO 8601, the live flag, and the list summary', (t) => {
  const record = { rule: rule({ rule_id: 'a', version: 2 }), created_at: 0, updated_at: 86_400_000 };
  const withHistory = ruleWithHistoryView(record, [{ rule: record.rule, changed_at: 86_400_000, changed_by: 'key_1' }]);
  t.deepEqual(withHistory, {
    rule_id: 'a', kind: 'scoring', status: 'active', expression: 'true', score_delta: 1, bands: null, action: null, description: '', version: 2,
    created_at: '1970-01-01T00:00:00.000Z', updated_at: '1970-01-02T00:00:00.000Z',
    history: [{ rule_id: 'a', kind: 'scoring', status: 'active', expression: 'true', score_delta: 1, bands: null, action: null, description: '', version: 2, changed_at: '1970-01-02T00:00:00.000Z', changed_by: 'key_1' }],
  });
  const ruleset: PublishedRuleset = {
    project_id: 'prj_1', version: 3, max_possible: 1, signals: [], rules: [record.rule], policy, published_at: 0, published_by: 'key_1',
  };
  t.true(rulesetView(ruleset, 3).live);
  t.false(rulesetView(ruleset, 4).live);
  t.false('project_id' in rulesetView(ruleset, 3));
  const list = rulesListView([record], { ...policy, updated_at: 0 }, ruleset);
  t.like(list, { published_version: 3, published_at: '1970-01-01T00:00:00.000Z', drafts_differ: false, changed_rules: [], policy_changed: false });
  t.like(rulesListView([record], { ...policy, updated_at: 0 }, null), { published_version: null, published_at: null, drafts_differ: true });
});
