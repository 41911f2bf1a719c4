// in_list('<list_id>', value): checking (list ids, arity, types, unknown lists), the lists an
// artifact reads, evaluation through a ListLookup (absent, wrong types, a missing lookup), inside
// macros, its cost entry, and agreement with cel-js's evaluator.
import test from 'ava';
import { compileRuleset, validateRuleDefinition, type ListLookup, type RulesetInput } from '../../compiler/index.js';
import { budget } from '../../compiler/runtime/index.js';
import { kEventBudget } from '../../compiler/limits.js';
import { both, compile, input, rule, verdict } from './_helpers/rules.js';

/** A lookup over plain sets (the service normalises; here values are compared as given). */
function lookup(lists: Record<string, readonly string[]>): ListLookup & { calls: Array<[string, string]> } {
  const sets = new Map(Object.entries(lists).map(([id, values]) => [id, new Set(values)]));
  const calls: Array<[string, string]> = [];
  return {
    calls,
    has(id, value) {
      calls.push([id, value]);
      return sets.get(id)?.has(value) ?? null;
    },
  };
}

function withLists(event: Record<string, unknown>, lists: ListLookup | undefined): RulesetInput {
  return lists === undefined ? input(event) : { ...input(event), lists };
}

function problemsOf(expression: string, lists?: readonly string[]): string {
  const r = validateRuleDefinition(rule({ rule_id: 'r', expression }), lists === undefined ? {} : { lists });
  return r.ok ? '' : r.problems.map((p) => `${p.field}: ${p.message}`).join('\n');
}

test('the list id must be a string literal of a list id', (t) => {
  t.regex(problemsOf('in_list(user.email, user.email)'), /needs the list id as a string literal/);
  t.regex(problemsOf("in_list('Blocked', user.email)"), /'Blocked' is not a list id/);
  t.regex(problemsOf("in_list('', user.email)"), /'' is not a list id/);
});

test('arity and types are checked when the rule is saved', (t) => {
  t.regex(problemsOf("in_list('blocked')"), /no matching overload/);
  t.regex(problemsOf("in_list('blocked', user.email, user.email)"), /no matching overload/);
  t.regex(problemsOf("in_list('blocked', payment.amount_cents)"), /no matching overload/);
  t.regex(problemsOf("in_list('blocked', user.trusted)"), /no matching overload/);
  t.regex(problemsOf("in_list('blocked', user.email) + 1 > 0"), /no matching overload|no such overload/);
  // dyn values (open members, extras) are checked when the event is scored.
  t.is(problemsOf("in_list('blocked', extras.who)"), '');
  t.is(problemsOf("in_list('blocked', user.email) && in_list('vips', external_account_id)"), '');
});

test('an unknown list is refused when the project\'s lists are given, with its position', (t) => {
  t.is(problemsOf("in_list('blocked', user.email)", ['blocked']), '');
  t.regex(problemsOf("user.vip == true || in_list('blockd', user.email)", ['blocked']), /^expression: line 1, column 29: the project has no list 'blockd'/);
  const compiled = compileRuleset([rule({ rule_id: 'r', expression: "in_list('gone', user.email)" })], { lists: [] });
  t.false(compiled.ok);
  if (!compiled.ok) t.deepEqual(compiled.errors.map((e) => [e.rule_id, e.field]), [['r', 'expression']]);
  // Bands are checked too.
  const banded = compileRuleset([rule({ rule_id: 'r', score_delta: 0, bands: [{ band: 'b', expression: "in_list('gone', user.email)", score_delta: 1 }] })], { lists: ['other'] });
  t.false(banded.ok);
  if (!banded.ok) t.is(banded.errors[0]?.field, 'bands[0].expression');
});

test('the artifact and validation name the lists read, sorted, once each; archived rules read none', (t) => {
  const r = validateRuleDefinition(rule({ rule_id: 'r', expression: "in_list('b', user.email) || in_list('a', user.email) || in_list('b', context.ip)" }));
  t.true(r.ok);
  if (r.ok) t.deepEqual(r.lists, ['a', 'b']);
  const compiled = compileRuleset([
    rule({ rule_id: 'r', expression: "in_list('ips', context.ip)" }),
    rule({ rule_id: 's', expression: "in_list('emails', user.email)", score_delta: 0, kind: 'monitoring', status: 'shadow' }),
    rule({ rule_id: 'x', expression: "in_list('archived_only', user.email)", status: 'archived' }),
    rule({ rule_id: 'y', expression: 'user.vip == true' }),
  ]);
  t.true(compiled.ok);
  if (compiled.ok) t.deepEqual(compiled.artifact.lists, ['emails', 'ips']);
  const none = compileRuleset([rule({ rule_id: 'y', expression: 'user.vip == true' })]);
  if (none.ok) t.deepEqual(none.artifact.lists, []);
});

test('evaluation: membership, absent values, wrong types, unknown lists and a missing lookup', (t) => {
  const fn = compile([rule({ rule_id: 'r', expression: "in_list('blocked', user.email)" })]);
  const lists = lookup({ blocked: ['a@example.com'] });
  t.is(verdict(fn, withLists({ user: { email: 'a@example.com' } }, lists)), 'match');
  t.is(verdict(fn, withLists({ user: { email: 'b@example.com' } }, lists)), 'no');
  t.deepEqual(lists.calls, [['blocked', 'a@example.com'], ['blocked', 'b@example.com']]);
  // Absent: no lookup, no match, not degraded.
  t.is(verdict(fn, withLists({}, lists)), 'no');
  t.is(lists.calls.length, 2);
  // A declared string field of the wrong type degrades the rule.
  t.is(verdict(fn, withLists({ user: { email: 42 } }, lists)), 'degraded');
  // The project has no such list (deleted behind a published ruleset's back), or no lookup is
  // given: the rule cannot match, and is not degraded.
  t.is(verdict(fn, withLists({ user: { email: 'a@example.com' } }, lookup({}))), 'no');
  t.is(verdict(fn, withLists({ user: { email: 'a@example.com' } }, undefined)), 'no');

  const dyn = compile([rule({ rule_id: 'r', expression: "in_list('blocked', extras.who)" })]);
  t.is(verdict(dyn, withLists({ extras: { who: 'a@example.com' } }, lists)), 'match');
  t.is(verdict(dyn, withLists({ extras: { who: 7 } }, lists)), 'degraded');
  t.is(verdict(dyn, withLists({ extras: {} }, lists)), 'no');
});

test('negated, in bands, inside macros and in rulesets of several chunks', (t) => {
  const lists = lookup({ allow: ['vip-1'], tags: ['bad'] });
  const negated = compile([rule({ rule_id: 'r', expression: "!in_list('allow', external_account_id)" })]);
  t.is(verdict(negated, withLists({ external_account_id: 'vip-1' }, lists)), 'no');
  t.is(verdict(negated, withLists({ external_account_id: 'other' }, lists)), 'match');
  const macro = compile([rule({ rule_id: 'r', expression: "extras.tags.exists(x, in_list('tags', x))" })]);
  t.is(verdict(macro, withLists({ extras: { tags: ['ok', 'bad'] } }, lists)), 'match');
  t.is(verdict(macro, withLists({ extras: { tags: ['ok'] } }, lists)), 'no');
  const banded = compile([rule({ rule_id: 'r', score_delta: 0, bands: [{ band: 'listed', expression: "in_list('allow', external_account_id)", score_delta: 5 }, { band: 'rest', expression: 'true', score_delta: 1 }] })]);
  const out = banded(withLists({ external_account_id: 'vip-1' }, lists));
  t.is(out.breakdown[0]?.band, 'listed');
  // 60 rules: the ruleset is split into chunk functions, each reading its own inputs.
  const many = Array.from({ length: 60 }, (_, i) => rule({ rule_id: `r${i}`, expression: i === 59 ? "in_list('allow', external_account_id)" : `extras.n == ${i}.0` }));
  const chunked = compile(many)(withLists({ external_account_id: 'vip-1' }, lists));
  t.true(chunked.breakdown.find((b) => b.rule_id === 'r59')?.matched);
});

test('a ruleset without in_list never touches the lookup', (t) => {
  const fn = compile([rule({ rule_id: 'r', expression: "user.email == 'a@example.com'" })]);
  const touched: string[] = [];
  const trap = new Proxy({}, { get: (_target, name) => { touched.push(String(name)); return undefined; } }) as ListLookup;
  t.is(verdict(fn, withLists({ user: { email: 'a@example.com' } }, trap)), 'match');
  t.deepEqual(touched, []);
});

test('cost: one pass over the value, spent at run time within the estimate', (t) => {
  const saved = validateRuleDefinition(rule({ rule_id: 'r', expression: "extras.l.exists(x, in_list('tags', x))" }));
  t.true(saved.ok, 'a loop of lookups over an event list is within the limit');
  const fn = compile([rule({ rule_id: 'r', expression: "in_list('tags', extras.s)" })]);
  fn(withLists({ extras: { s: 'x'.repeat(100_000) } }, lookup({ tags: [] })));
  // traversal(100,000) = 10,001 units; the estimate adds one for the call and one per read.
  t.is(kEventBudget - budget.left, 10_001);
});

test('agrees with cel-js on membership, absence and wrong types', (t) => {
  const lists = lookup({ blocked: ['a@example.com', '7'] });
  const cases: Array<[string, Record<string, unknown>]> = [
    ["in_list('blocked', user.email)", { user: { email: 'a@example.com' } }],
    ["in_list('blocked', user.email)", { user: { email: 'b@example.com' } }],
    ["in_list('blocked', user.email)", {}],
    ["in_list('blocked', extras.v)", { extras: { v: 7 } }],
    ["in_list('blocked', extras.v)", { extras: { v: '7' } }],
    ["in_list('blocked', user.email) || user.vip == true", { user: { vip: true } }],
    ["in_list('missing', user.email)", { user: { email: 'a@example.com' } }],
  ];
  for (const [expression, event] of cases) {
    const { compiled, reference } = both(expression, withLists(event, lists));
    t.is(compiled, reference, `${expression} on ${JSON.stringify(event)}`);
  }
});
