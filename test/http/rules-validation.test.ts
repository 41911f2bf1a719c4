// Every refusal of the rules API over real HTTP: status, code, parameter (and the message where it
// carries information, like an expression's position), and that nothing stored changed.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { createRule, newProject, ruleBody, rulesState } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

let server: TestServer;
/** The project every refused request of this file goes to; no request here may change it. */
let project: { projectId: string; key: string };
let untouched: unknown;

test.before(async () => {
  // The rule-count test creates about a thousand rules through one route.
  server = await startServer({ env: { RATE_LIMIT_PER_ROUTE: '5000' } });
  project = await newProject(server);
  untouched = rulesState(server, project.projectId);
});

test.after.always(async () => {
  await server?.stop();
});

interface Refusal {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly rawBody?: string;
  readonly status?: number;
  readonly code?: string;
  readonly parameter: string;
  readonly message?: RegExp;
}

const refused = test.macro({
  async exec(t: ExecutionContext, refusal: Refusal) {
    const response = await api(server, refusal.method, refusal.path, { key: project.key, body: refusal.body, rawBody: refusal.rawBody });
    t.is(response.status, refusal.status ?? 400, response.text);
    t.is(response.body.status, 0);
    t.is(response.body.data, null);
    t.is(response.body.errors.length, 1);
    t.is(response.body.errors[0].code, refusal.code ?? 'VALIDATION_ERROR');
    t.is(response.body.errors[0].parameter, refusal.parameter);
    if (refusal.message !== undefined) t.regex(response.body.errors[0].message, refusal.message);
    t.deepEqual(rulesState(server, project.projectId), untouched, 'a refused request changes nothing stored');
  },
  title: (_title, refusal: Refusal) => `${refusal.method} ${refusal.path} → ${refusal.parameter}: ${describe(refusal)}`,
});

/** The end of the body, where the tables below put what each case changes; cut to stay readable. */
function describe(refusal: Refusal): string {
  const text = refusal.rawBody ?? JSON.stringify(refusal.body) ?? 'no body';
  return text.length <= 140 ? text : `…${text.slice(-139)}`;
}

const create = (body: Record<string, unknown>, parameter: string, message?: RegExp, code?: string): Refusal => ({ method: 'POST', path: '/v1/rules', body, parameter, message, code });
const scoring = (overrides: Record<string, unknown>): Record<string, unknown> => ruleBody('new_rule', { kind: 'scoring', score_delta: 0, ...overrides });
const band = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ band: 'high', expression: 'payment.amount_cents > 100', score_delta: 10, ...overrides });
const withoutField = (field: string): Record<string, unknown> => Object.fromEntries(Object.entries(ruleBody('new_rule')).filter(([name]) => name !== field));

// rule_id
test(refused, create(withoutField('rule_id'), 'rule_id', /must match/));
test(refused, create(ruleBody('High'), 'rule_id', /\[a-z\]\[a-z0-9_\]\{0,63\}/));
test(refused, create(ruleBody('1st'), 'rule_id'));
test(refused, create(ruleBody('a'.repeat(65)), 'rule_id'));
test(refused, create({ ...ruleBody('x'), rule_id: 7 }, 'rule_id'));
test(refused, create(ruleBody('publish'), 'rule_id', /reserved/));
test(refused, create(ruleBody('known_fraudster', { kind: 'hard_block' }), 'rule_id', /exists already/));
// kind and status
test(refused, create(withoutField('kind'), 'kind', /one of trust, hard_block, scoring, monitoring/));
test(refused, create(ruleBody('new_rule', { kind: 'block' }), 'kind'));
test(refused, create(withoutField('status'), 'status', /one of active, shadow, archived/));
test(refused, create(ruleBody('new_rule', { status: 'enabled' }), 'status'));
test(refused, create(ruleBody('new_rule', { status: null }), 'status'));
// expression: type, emptiness, length, syntax with its position, type-checking
test(refused, create(withoutField('expression'), 'expression', /must be a string/));
test(refused, create(ruleBody('new_rule', { expression: 42 }), 'expression', /must be a string/));
test(refused, create(ruleBody('new_rule', { expression: '  ' }), 'expression', /must not be empty/));
test(refused, create(ruleBody('new_rule', { expression: `extras.a == "${'x'.repeat(4100)}"` }), 'expression', /longer than 4096/));
test(refused, create(ruleBody('new_rule', { expression: 'payment.amount_cents >' }), 'expression', /^expression: line 1, column 23: /));
test(refused, create(ruleBody('new_rule', { expression: "duration('320000000000s') > duration('0s')" }), 'expression', /is beyond the range of a duration/));
test(refused, create(ruleBody('new_rule', { expression: `duration('${'0h'.repeat(32)}1h') > duration('0s')` }), 'expression', /is longer than 64 characters, the most a duration may be written with/));
// Nesting depth 32, as docs/rules.md says: 32 levels of parentheses or of a member chain are saved, 33 are not.
test(refused, create(ruleBody('new_rule', { expression: `${'('.repeat(33)}true${')'.repeat(33)}` }), 'expression', /Exceeded maxDepth \(32\): nested more than 32 levels deep/));
test(refused, create(ruleBody('new_rule', { expression: `extras${'.a'.repeat(33)} == 1` }), 'expression', /Exceeded maxDepth/));
test('32 levels of nesting are saved: parentheses, a member chain', async (t) => {
  const { key } = await newProject(server);
  for (const [id, expression] of [['deep_parens', `${'('.repeat(32)}true${')'.repeat(32)}`], ['deep_members', `extras${'.a'.repeat(32)} == 1`]]) {
    const saved = await api(server, 'POST', '/v1/rules', { key, body: ruleBody(id!, { expression }) });
    t.is(saved.status, 201, saved.text);
  }
});
// Two-variable macros: the message says so, and what to write instead (not "Unknown variable").
for (const [expression, message] of [
  ['extras.l.exists(i, v, v == 1)', /exists\(\) of two variables is not supported: write the one-variable form, list\.exists\(v, …\)/],
  ['extras.l.transformList(i, v, v).size() > 0', /transformList\(\) is not supported: write list\.map\(v, …\) or list\.filter\(v, …\)/],
  ['extras.l.existsOne(v, v == 1)', /existsOne\(\) is not supported: write list\.exists_one\(v, …\)/],
] as const) {
  test(refused, create(ruleBody('new_rule', { expression }), 'expression', message));
}
test(refused, create(ruleBody('new_rule', { expression: 'user.trusted == true &&\n  (payment.amount_cents > 5' }), 'expression', /^expression: line 2, column \d+: /));
test(refused, create(ruleBody('new_rule', { expression: 'payment.amount_cents + 1' }), 'expression', /must be bool, not int/));
test(refused, create(ruleBody('new_rule', { expression: 'nope == 1' }), 'expression', /line 1, column 1: Unknown variable: nope/));
// cel-js cannot type an element of an empty literal: said plainly, at the literal, once with one period.
test(refused, create(ruleBody('new_rule', { expression: 'extras.n > 1 && [].all(e, e > 0)' }), 'expression', /^expression: line 1, column 17: an element of an empty list or map literal has no type to compare with: [^.]+\.$/));
test(refused, create(ruleBody('new_rule', { expression: 'user.email == 3' }), 'expression', /no such overload/));
// expression: the worst-case cost (issue 12), shown with the limit
test(refused, create(ruleBody('new_rule', { expression: "extras.l.exists(x, extras.s.matches('a*b'))" }), 'expression', /^expression: the estimated worst-case cost of the rule is 54,978,\d{3},\d{3}, over the limit of 10,000,000/));
test(refused, create(ruleBody('new_rule', { expression: 'extras.l.map(x, extras.l + extras.l).size() > 0' }), 'expression', /over the limit of 10,000,000/));
test(refused, create(ruleBody('new_rule', { expression: "user.name.matches('(a)\\\\1')" }), 'expression', /invalid regular expression \(RE2 syntax\)/));
// Sizes past 2^31 (a list of megabyte values built by map()): refused, not estimated below zero.
test(refused, create(ruleBody('new_rule', { expression: 'extras.a in extras.l.map(y, extras.b)' }), 'expression', /over the limit of 10,000,000/));
// Nested lists compared many times: a unit per level entered.
test(refused, create(ruleBody('new_rule', { expression: `extras.a in [${Array.from({ length: 95 }, () => 'extras.b').join(', ')}]` }), 'expression', /over the limit of 10,000,000/));
// has() below a declared scalar, as selecting it.
test(refused, create(ruleBody('new_rule', { expression: '!has(user.email.domain)' }), 'expression', /has\(\): user\.email is of type string and has no fields/));
test(refused, create(ruleBody('new_rule', { expression: 'has(event_type.x)' }), 'expression', /has\(\): event_type is of type string and has no fields/));
// score_delta
test(refused, create(scoring({ score_delta: 2.5 }), 'score_delta', /integer/));
test(refused, create(scoring({ score_delta: '10' }), 'score_delta', /integer/));
test(refused, create(scoring({ score_delta: 2_000_000 }), 'score_delta', /between -1000000 and 1000000/));
test(refused, create(ruleBody('new_rule', { kind: 'hard_block', score_delta: 5 }), 'score_delta', /not a scoring rule/));
test(refused, create(scoring({ score_delta: 5, bands: [band()] }), 'score_delta', /must be 0 when the rule has bands/));
// bands, and each field of a band
test(refused, create(scoring({ bands: 'high' }), 'bands', /array or null/));
test(refused, create(scoring({ bands: [] }), 'bands', /1 to 16 bands/));
test(refused, create(scoring({ bands: Array.from({ length: 17 }, (_, i) => band({ band: `b${i}` })) }), 'bands', /1 to 16 bands/));
test(refused, create(scoring({ bands: ['high'] }), 'bands[0]', /must be an object/));
test(refused, create(scoring({ bands: [band({ band: 'High' })] }), 'bands[0].band', /\[a-z\]/));
test(refused, create(scoring({ bands: [band({ band: undefined })] }), 'bands[0].band'));
test(refused, create(scoring({ bands: [band(), band()] }), 'bands[1].band', /duplicate band/));
test(refused, create(scoring({ bands: [band({ expression: 3 })] }), 'bands[0].expression', /must be a string/));
test(refused, create(scoring({ bands: [band(), band({ band: 'low', expression: 'payment.amount_cents >' })] }), 'bands[1].expression', /^bands\[1\]\.expression: line 1, column 23: /));
test(refused, create(scoring({ bands: [band({ expression: 'payment.currency' })] }), 'bands[0].expression', /must be bool/));
test(refused, create(scoring({ bands: [band({ expression: 'extras.a.exists(x, extras.b.exists(y, x == y))' })] }), 'bands[0].expression', /over the limit of 10,000,000/));
test(refused, create(scoring({ bands: [band({ score_delta: 1.5 })] }), 'bands[0].score_delta', /integer/));
test(refused, create(scoring({ bands: [band({ score_delta: undefined })] }), 'bands[0].score_delta', /integer/));
test(refused, create(scoring({ bands: [band({ weight: 2 })] }), 'bands[0].weight', /unknown property/));
test(refused, create(ruleBody('new_rule', { bands: [band()] }), 'bands[0].score_delta', /not a scoring rule/));
// action and description
test(refused, create(ruleBody('new_rule', { action: 'require_kyc:selfie' }), 'action', /require_kyc:<phone\|document\|liveness\|sanctions\|pep>/));
test(refused, create(ruleBody('new_rule', { action: 'block' }), 'action'));
test(refused, create(ruleBody('new_rule', { action: 5 }), 'action'));
test(refused, create(ruleBody('new_rule', { description: 5 }), 'description', /at most 2000 characters/));
test(refused, create(ruleBody('new_rule', { description: 'd'.repeat(2001) }), 'description', /at most 2000 characters/));
// Lengths count characters (code points), as the documents do: an emoji is one, not two UTF-16 units.
test(refused, create(ruleBody('new_rule', { description: '\u{1F600}'.repeat(2001) }), 'description', /at most 2000 characters/));
test(refused, create(ruleBody('new_rule', { expression: `extras.a == "${'\u{1F600}'.repeat(4100)}"` }), 'expression', /longer than 4096/));
test(refused, create(ruleBody('new_rule', { expression: `user.name.matches("${'\u{1F600}'.repeat(257)}")` }), 'expression', /longer than 256 characters/));
// fields the service sets, unknown fields, several problems at once
test(refused, create(ruleBody('new_rule', { version: 1 }), 'version', /set by the service/));
test(refused, create(ruleBody('new_rule', { created_at: '2026-01-01T00:00:00Z' }), 'created_at', /set by the service/));
test(refused, create(ruleBody('new_rule', { priority: 1 }), 'priority', /unknown property/));
test(refused, create({ rule_id: 'new_rule', kind: 'block', status: 'on', expression: 'x >' }, 'kind', /^kind: must be one of [^;]+; status: must be one of [^;]+; expression: line 1, column 4: [^;]+\.$/));
// what the front end refuses for every body
test(refused, create(ruleBody('new_rule', { expression: 'payment.bin == "4111111111111111"' }), 'expression', undefined, 'CARD_NUMBER_DETECTED'));
test(refused, create(ruleBody('new_rule', { description: 'a\u0000b' }), 'description', undefined, 'NUL_CHARACTER_DETECTED'));
test(refused, { method: 'POST', path: '/v1/rules', rawBody: '{"rule_id": "x",', parameter: 'body', message: /not valid JSON/ });
test(refused, { method: 'POST', path: '/v1/rules', rawBody: '[]', parameter: 'body', message: /JSON object/ });
test(refused, { method: 'POST', path: '/v1/rules', parameter: 'body', message: /empty/ });
test(refused, { method: 'POST', path: '/v1/rules?dry_run=true', body: ruleBody('new_rule'), parameter: 'dry_run' });

// PUT /v1/rules/{rule_id}: the same checks, and those of a replacement
const replace = (body: Record<string, unknown>, parameter: string, message?: RegExp): Refusal => ({ method: 'PUT', path: '/v1/rules/known_fraudster', body, parameter, message });
const fraudster = (overrides: Record<string, unknown>): Record<string, unknown> => ({ kind: 'hard_block', status: 'active', expression: 'user.is_known_fraud == true', ...overrides });
test(refused, replace(fraudster({ rule_id: 'other_rule' }), 'rule_id', /rule_id of the path/));
test(refused, replace(fraudster({ version: 'latest' }), 'version', /integer version you last read/));
test(refused, replace(fraudster({ version: 7 }), 'version', /version 7 is not the current version of rule known_fraudster \(1\)/));
test(refused, replace(fraudster({ updated_at: '2026-01-01T00:00:00Z' }), 'updated_at', /set by the service/));
test(refused, replace(fraudster({ status: 'disabled' }), 'status'));
test(refused, replace(fraudster({ kind: undefined }), 'kind'));
test(refused, replace(fraudster({ expression: 'user.is_known_fraud == ' }), 'expression', /line 1, column \d+/));
test(refused, replace(fraudster({ enabled: false }), 'enabled', /unknown property/));
test(refused, replace(fraudster({ expression: "extras.l.exists(x, extras.s.matches('a*b'))" }), 'expression', /worst-case cost .* over the limit of 10,000,000/));
test(refused, { method: 'PUT', path: '/v1/rules/known_fraudster', rawBody: 'null', parameter: 'body' });

// PUT /v1/policy
const policy = (body: Record<string, unknown>, parameter: string, message?: RegExp): Refusal => ({ method: 'PUT', path: '/v1/policy', body, parameter, message });
test(refused, policy({ block_threshold: 80 }, 'review_threshold', /required/));
test(refused, policy({ review_threshold: 40 }, 'block_threshold', /required/));
test(refused, policy({ review_threshold: -1, block_threshold: 80 }, 'review_threshold', /integer from 0 to 1000000/));
test(refused, policy({ review_threshold: 40.5, block_threshold: 80 }, 'review_threshold', /integer/));
test(refused, policy({ review_threshold: '40', block_threshold: 80 }, 'review_threshold', /integer/));
test(refused, policy({ review_threshold: 40, block_threshold: 1_000_001 }, 'block_threshold', /integer from 0 to 1000000/));
test(refused, policy({ review_threshold: 90, block_threshold: 80 }, 'review_threshold', /not be above block_threshold/));
test(refused, policy({ review_threshold: 40, block_threshold: 80, allow_below: 10 }, 'allow_below', /not a field of the policy/));
test(refused, policy({ review_threshold: 41, block_threshold: 80, version: 5 }, 'version', /not the current version of the policy \(1\)/));

// POST /v1/rules/publish and the query strings of the read routes
test(refused, { method: 'POST', path: '/v1/rules/publish', body: { note: 'friday release' }, parameter: 'note', message: /send no body or \{\}/ });
test(refused, { method: 'POST', path: '/v1/rules/publish?force=true', parameter: 'force' });
test(refused, { method: 'GET', path: '/v1/rules?status=active', parameter: 'status', message: /not a query parameter/ });
test(refused, { method: 'GET', path: '/v1/rules/known_fraudster?history=yes', parameter: 'history', message: /true or false/ });
test(refused, { method: 'GET', path: '/v1/policy?version=1', parameter: 'version' });
test(refused, { method: 'GET', path: '/v1/rulesets?limit=0', parameter: 'limit', message: /1 to 100/ });
test(refused, { method: 'GET', path: '/v1/rulesets?limit=500', parameter: 'limit' });
test(refused, { method: 'GET', path: '/v1/rulesets?before=first', parameter: 'before' });
test(refused, { method: 'GET', path: '/v1/rulesets/0', parameter: 'version', message: /positive integer/ });
test(refused, { method: 'GET', path: '/v1/rulesets/1?rules=false', parameter: 'rules' });

test('a project holds at most 1000 rules (archived ones count): the next create is refused and nothing is stored', async (t) => {
  const full = await newProject(server, 'none');
  const ids = Array.from({ length: 1000 }, (_, i) => `rule_${String(i).padStart(4, '0')}`);
  // A few at a time: the creates are real requests, each checked on the compiler thread.
  for (let i = 0; i < ids.length; i += 25) {
    await Promise.all(ids.slice(i, i + 25).map((id) => createRule(server, full.key, ruleBody(id, { status: i === 0 ? 'archived' : 'active' }))));
  }
  const before = rulesState(server, full.projectId);
  const response = await api(server, 'POST', '/v1/rules', { key: full.key, body: ruleBody('one_too_many') });
  t.is(response.status, 400, response.text);
  t.is(response.body.errors[0].code, 'VALIDATION_ERROR');
  t.is(response.body.errors[0].parameter, 'rule_id');
  t.regex(response.body.errors[0].message, /1000 rules/);
  t.deepEqual(rulesState(server, full.projectId), before);
  // The full project still publishes: the limit is the compiler's.
  const published = await api(server, 'POST', '/v1/rules/publish', { key: full.key });
  t.is(published.status, 201, published.text.slice(0, 500));
  t.is(published.body.data.rules.length, 1000);
});

test('lengths count characters: a description and an expression of emoji at their limits, and a pattern of more UTF-16 units than its limit, are accepted', async (t) => {
  const other = await newProject(server);
  const emoji = '\u{1F600}';
  const expression = `extras.a == "${emoji.repeat(4096 - 'extras.a == ""'.length)}"`;
  t.is([...expression].length, 4096);
  const bodies = [
    ruleBody('emoji_description', { description: emoji.repeat(2000) }),
    ruleBody('emoji_expression', { expression }),
    // 150 characters, 300 UTF-16 units (the limit is 256 characters); a longer pattern on a field
    // bounded only by the body would be over the rule's cost limit (docs/rules.md, "Limits").
    ruleBody('emoji_pattern', { expression: `user.name.matches("${emoji.repeat(150)}")` }),
  ];
  for (const body of bodies) {
    const response = await createRule(server, other.key, body);
    t.is(response.status, 201, response.text);
  }
  const read = await api(server, 'GET', '/v1/rules/emoji_description', { key: other.key });
  t.is(read.body.data.description, emoji.repeat(2000));
});
