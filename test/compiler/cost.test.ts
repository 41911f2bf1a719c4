// The cost bound of a rule (cost.ts, kMaxRuleCost), checked when a rule is saved
// (validateRuleDefinition) and when a ruleset is published (compileRuleset); and
// the run-time budget, which spends the same units and never more than the estimate.

import test from 'ava';
import type { ExecutionContext } from 'ava';
import { compileRuleset, listPresets, validateRuleDefinition } from '../../compiler/index.js';
import { estimateCost } from '../../compiler/cost.js';
import { checkExpression } from '../../compiler/expression.js';
import { kEventBudget, kMaxBodyBytes, kMaxRuleCost } from '../../compiler/limits.js';
import { budget } from '../../compiler/runtime/index.js';
import { compile, input, kNoCostLimit, rule } from './_helpers/rules.js';

function cost(expression: string): number {
  const checked = checkExpression(expression);
  if (!checked.ok) throw new Error(checked.problem.message);
  return estimateCost(checked.ast);
}

test('every preset rule is far below the limit', (t) => {
  for (const preset of listPresets()) {
    for (const r of preset.rules) {
      const total = [r.expression, ...(r.bands ?? []).map((b) => b.expression)].reduce((sum, e) => sum + cost(e), 0);
      t.true(total <= kMaxRuleCost / 5, `${preset.name}.${r.rule_id}: ${total}`);
    }
    t.true(compileRuleset(preset.rules).ok);
  }
});

// Rules an analyst writes over project data: each loop is over one list of the event.
const kRealistic = [
  "extras.tags.exists(t, t == 'vip')",
  "'vip' in extras.tags",
  "extras.tags.exists(t, t.contains('promo'))",
  "extras.tags.exists(t, t.matches('^promo_[0-9]+$'))",
  "extras.tags.map(t, t.lowerAscii()).exists(x, x == 'b')",
  'extras.items.filter(i, i.price > 100.0).size() > 2',
  'extras.scores.all(k, extras.scores[k] > 0.5)',
  "size(extras.tags + extras.more_tags) > 10",
  "user.email.split('@')[1] in ['mailinator.com', 'yopmail.com']",
  // A value of the event in a list or map of the event: one pass over the list, or one lookup.
  'payment.bin in extras.bins',
  'context.ip in extras.allowed_ips',
  'context.country in extras.blocked_countries',
  "extras.k in extras && 'campaign' in extras",
  "context.user_agent.lowerAscii().matches('(headless|phantomjs|selenium|python-requests|curl/|wget/)') && extras.tags.exists(t, t == 'bot')",
];

for (const expression of kRealistic) {
  test(`realistic rule passes with room: ${expression}`, (t) => {
    t.true(cost(expression) <= kMaxRuleCost / 2, String(cost(expression)));
    t.true(validateRuleDefinition(rule({ rule_id: 'r', expression })).ok);
  });
}

const refused = test.macro({
  exec(t: ExecutionContext, expression: string) {
    const estimate = cost(expression);
    t.true(estimate > kMaxRuleCost);
    const saved = validateRuleDefinition(rule({ rule_id: 'r', expression }));
    t.false(saved.ok);
    if (!saved.ok) {
      t.is(saved.problems.length, 1);
      t.is(saved.problems[0]?.field, 'expression');
      t.regex(saved.problems[0]?.message ?? '', new RegExp(`worst-case cost of the rule is ${Math.ceil(estimate).toLocaleString('en-US')}.*over the limit of 10,000,000`));
    }
    const published = compileRuleset([rule({ rule_id: 'r', expression })]);
    t.false(published.ok);
    if (!published.ok) t.deepEqual(published.errors.map((e) => [e.rule_id, e.field]), [['r', 'expression']]);
  },
  title: (_p, expression: string) => `refused at save and at publish: ${expression}`,
});

// The two cases, and their relatives.
test(refused, "extras.l.exists(x, extras.s.matches('a*b'))");
test(refused, 'extras.l.map(x, extras.l + extras.l).size() > 0');
test(refused, 'extras.l.exists(x, extras.l.exists(y, x == y))');
test(refused, 'extras.ids.exists(i, i in extras.blocked)');
test(refused, "extras.l.exists(x, extras.s.split(',').size() > 3)");
test(refused, "extras.l.all(x, (extras.s + extras.s).contains('q'))");
// Sizes past 2^31 (a list of a million megabyte values): the estimate must not wrap to a negative cost.
test(refused, 'extras.a in extras.l.map(y, extras.b)');
test(refused, 'extras.l.map(y, extras.b) == extras.l.map(y, extras.b)');
test(refused, "extras.s.matches('a+b') || extras.a in extras.l.map(y, extras.l)");
// Lists nested deep cost a unit per level when compared: a value of the event compared many times.
test(refused, `extras.a in [${Array.from({ length: 95 }, () => 'extras.b').join(', ')}]`);


test('bands count with the expression; the most expensive one is named', (t) => {
  const heavy = "extras.tags.exists(t, t.matches('^promo_[0-9]+$'))"; // about 4.2 million
  const r = rule({
    rule_id: 'r', score_delta: 0, expression: heavy,
    bands: [{ band: 'a', expression: heavy, score_delta: 1 }, { band: 'b', expression: `${heavy} && ${heavy}`, score_delta: 2 }],
  });
  const saved = validateRuleDefinition(r);
  t.false(saved.ok);
  if (!saved.ok) {
    t.is(saved.problems[0]?.field, 'bands[1].expression');
    t.regex(saved.problems[0]?.message ?? '', /the expression and all bands count together/);
  }
  const published = compileRuleset([r]);
  t.false(published.ok);
  if (!published.ok) t.is(published.errors[0]?.field, 'bands[1].expression');
});

// What a rule spends at run time never exceeds its estimate, on inputs at the bounds.
/** [[[…[]…]]], `depth` lists deep. */
const nested = (depth: number): unknown[] => (depth === 0 ? [] : [nested(depth - 1)]);

const kAtTheBounds: readonly [string, Record<string, unknown>][] = [
  ["extras.tags.exists(t, t == 'vip')", { tags: Array.from({ length: kMaxBodyBytes / 4 }, () => 'x') }],
  ["extras.tags.exists(t, t.contains('promo'))", { tags: ['a'.repeat(kMaxBodyBytes / 2), ...Array.from({ length: 1000 }, () => 'b')] }],
  ["extras.s.lowerAscii().matches('(headless|curl/)')", { s: 'A'.repeat(kMaxBodyBytes - 100) }],
  ["'vip' in extras.tags", { tags: Array.from({ length: kMaxBodyBytes / 4 }, (_, i) => i) }],
  ['extras.bin in extras.bins', { bin: '4'.repeat(kMaxBodyBytes / 4), bins: Array.from({ length: 1000 }, () => '4'.repeat(kMaxBodyBytes / 4000 - 3)) }],
  ['extras.bin in extras.card_bins', { bin: '411111', card_bins: Array.from({ length: kMaxBodyBytes / 10 }, () => '411112') }],
  // A list nested 27 deep, 8,000 times, compared: eq spends a unit per level entered.
  ['extras.a in [extras.b]', { a: [...Array.from({ length: 8000 }, () => nested(27)), 1], b: [...Array.from({ length: 8000 }, () => nested(27)), 2] }],
  ['extras.a == extras.b', { a: [...Array.from({ length: 8000 }, () => nested(27)), 1], b: [...Array.from({ length: 8000 }, () => nested(27)), 2] }],
  ['extras.a != extras.a', { a: Array.from({ length: 8000 }, () => nested(27)) }],
  ['extras.l in extras.ls', { l: Array.from({ length: 1000 }, () => 1), ls: Array.from({ length: 100 }, () => Array.from({ length: 1000 }, () => 1)).concat([[2]]) }],
  ['size(extras.a + extras.b) > 10', { a: Array.from({ length: 200_000 }, () => 1), b: Array.from({ length: 200_000 }, () => 2) }],
  ["extras.tags.map(t, t + '!').exists(x, x == 'b!')", { tags: Array.from({ length: 100_000 }, () => 'abc') }],
  ['extras.scores.all(k, extras.scores[k] > 0.5)', { scores: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 1])) }],
  // Many short strings, each passed over by the body: the iteration's own charge must not count
  // again what the body's calls spend themselves.
  ["extras.s.split('').exists(t, size(t) == 2)", { s: 'a'.repeat(kMaxBodyBytes - 100) }],
  ["extras.s.split('').exists(t, t.contains('b') || t.startsWith('b'))", { s: 'a'.repeat(kMaxBodyBytes - 100) }],
  ["extras.tags.exists(t, t.contains('b') || t.endsWith('b') || t.matches('b+c'))", { tags: Array.from({ length: kMaxBodyBytes / 4 - 10 }, () => 'a') }],
  ["extras.tags.exists(t, t + t == 'bb')", { tags: Array.from({ length: kMaxBodyBytes / 4 - 10 }, () => 'a') }],
  ["extras.tags.exists(t, t.split('').size() == 2)", { tags: Array.from({ length: kMaxBodyBytes / 4 - 10 }, () => 'a') }],
];

for (const [expression, extras] of kAtTheBounds) {
  test(`run time spends no more than the estimate: ${expression}`, (t) => {
    const fn = compile([rule({ rule_id: 'r', expression })]);
    const out = fn(input({ extras }));
    const spent = kEventBudget - budget.left;
    t.false(out.over_budget);
    t.true(spent > 0, 'it spent something');
    t.true(spent <= cost(expression), `spent ${spent}, estimated ${cost(expression)}`);
  });
}

test('without the limit the same rule compiles (the option the semantics tests use)', (t) => {
  t.true(compileRuleset([rule({ rule_id: 'r', expression: "extras.l.exists(x, extras.s.matches('a*b'))" })], kNoCostLimit).ok);
});

test('shadow rules have a budget of their own: one that spends much never puts the event over budget, and is reported degraded', (t) => {
  // Each rule spends about 6.8 million on a 1 MB string; two active ones stay within the 20 million.
  const pattern = `(${'a'.repeat(125)}|${'b'.repeat(126)})x`;
  const big = { event_type: 'payment', extras: { s: 'c'.repeat(1_048_000) } };
  const active = [
    rule({ rule_id: 'ua_a', expression: `extras.s.matches('${pattern}')` }),
    rule({ rule_id: 'ua_b', expression: `extras.s.contains('zz') || extras.s.matches('${pattern}')` }),
  ];
  t.false(compile(active)(input(big)).over_budget);
  const shadows = [0, 1, 2].map((i) => rule({ rule_id: `try_${i}`, status: 'shadow', expression: `extras.s.matches('${pattern}') || extras.n == ${i}` }));
  for (const count of [1, 3]) {
    const out = compile([...active, ...shadows.slice(0, count)])(input(big));
    t.false(out.over_budget, `${count} shadow rules`);
    t.deepEqual(out.breakdown.map((entry) => entry.rule_id), ['ua_a', 'ua_b']);
    t.deepEqual(out.degraded, []);
    if (count === 3) t.true(out.shadow.at(-1)!.degraded, 'the shadow rule that ran out is degraded');
  }
  // Shadow rules only, past their budget: the event is still scored.
  t.false(compile(shadows)(input(big)).over_budget);
  // Active rules past theirs: over budget, as before.
  t.true(compile([...active, rule({ rule_id: 'ua_c', expression: `extras.s.matches('${pattern}') || extras.n == 9` })])(input(big)).over_budget);
});
