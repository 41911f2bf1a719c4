// `==`, `!=` and `in` on a value of the wrong type (docs/rules.md, "Missing data, wrong types and
// degraded"): like the ordering operators, a comparison between kinds that cannot be compared
// makes the rule degraded instead of quietly false (or, for `!=`, true). Absent values stay
// absent. Each case is checked on the compiled function and on cel-js made homogeneous
// (compiler/reference.ts). Regression: `extras.block == true` with "yes" silently did not match.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import type { RulesetInput } from '../../compiler/index.js';
import { both, compile, input, rule } from './_helpers/rules.js';
import type { Verdict } from './_helpers/rules.js';

const ex = (extras: Record<string, unknown>): RulesetInput => input({ extras });

const verdicts = test.macro({
  exec(t: ExecutionContext, expression: string, data: RulesetInput, expected: Verdict) {
    const { compiled, reference } = both(expression, data);
    t.is(compiled, expected, 'compiled verdict');
    t.is(reference, expected, 'reference verdict');
  },
  title: (provided, expression: string, data: RulesetInput, expected: Verdict) =>
    `${provided ?? ''} ${expression} on ${JSON.stringify(data.event)} → ${expected}`.trim(),
});

// == and != against a literal of another kind.
test('bool vs string', verdicts, 'extras.block == true', ex({ block: 'yes' }), 'degraded');
test('bool vs "true"', verdicts, 'extras.block == true', ex({ block: 'true' }), 'degraded');
test('!= bool vs string', verdicts, 'extras.block != true', ex({ block: 'yes' }), 'degraded');
test('bool vs bool still matches', verdicts, 'extras.block == true', ex({ block: true }), 'match');
test('bool vs bool false', verdicts, 'extras.block == true', ex({ block: false }), 'no');
test('absent is not wrong-typed', verdicts, 'extras.block == true', ex({}), 'no');
test('null is absent', verdicts, 'extras.block == true', ex({ block: null }), 'no');
test('!= on absent', verdicts, 'extras.block != true', ex({}), 'no');
test('number vs string', verdicts, "extras.code == '42'", ex({ code: 42 }), 'degraded');
test('string vs number', verdicts, 'extras.code == 42', ex({ code: '42' }), 'degraded');
test('!= string vs number', verdicts, 'extras.code != 42', ex({ code: '42' }), 'degraded');
test('number vs int: cross-type numbers compare', verdicts, 'extras.code == 42', ex({ code: 42 }), 'match');
test('number vs double', verdicts, 'extras.code != 42.5', ex({ code: 42 }), 'match');
test('list vs string', verdicts, "extras.tags == 'a'", ex({ tags: ['a'] }), 'degraded');
test('map vs list', verdicts, "extras.m == ['a']", ex({ m: { a: 1 } }), 'degraded');
test('string vs timestamp', verdicts, 'extras.at == now', ex({ at: '2026-11-20T12:30:00Z' }), 'degraded');
test('string vs duration', verdicts, "extras.d == duration('1h')", ex({ d: '1h' }), 'degraded');
test('declared string vs dyn number', verdicts, 'user.email == extras.v', input({ user: { email: 'a@b.c' }, extras: { v: 5 } }), 'degraded');
test('two dyn values', verdicts, 'extras.a == extras.b', ex({ a: 1, b: '1' }), 'degraded');
test('open member of the wrong type', verdicts, "user.loyalty_tier == 'gold'", input({ user: { loyalty_tier: 3 } }), 'degraded');
test('== null is a presence test, not a type check', verdicts, 'extras.tag == null', ex({ tag: 3 }), 'no');
test('!= null on a present value', verdicts, 'extras.tag != null', ex({ tag: 3 }), 'match');

// Lists and maps compare member by member; the first unequal or mismatched pair decides.
test('list of the wrong element type', verdicts, 'extras.l == [1.0, 2.0]', ex({ l: ['a', 'b'] }), 'degraded');
test('list unequal before the mismatch', verdicts, 'extras.l == [1.0, 2.0]', ex({ l: [5, 'b'] }), 'no');
test('list of another length', verdicts, 'extras.l == [1.0, 2.0]', ex({ l: ['a'] }), 'no');
test('map member of the wrong type', verdicts, "extras.m == {'a': 1.0}", ex({ m: { a: 'x' } }), 'degraded');
test('list equal', verdicts, 'extras.l == [1.0, 2.0]', ex({ l: [1, 2] }), 'match');

// in: a constant list, a list from the event, a map.
test('in a literal list of strings, a number', verdicts, "extras.tier in ['banned', 'fraud']", ex({ tier: 1 }), 'degraded');
test('in a literal list of bools, a string', verdicts, 'extras.block in [true]', ex({ block: 'yes' }), 'degraded');
test('in a literal list, found', verdicts, "extras.tier in ['banned', 'fraud']", ex({ tier: 'fraud' }), 'match');
test('in a literal list, not found', verdicts, "extras.tier in ['banned', 'fraud']", ex({ tier: 'ok' }), 'no');
test('in a literal list, absent', verdicts, "extras.tier in ['banned', 'fraud']", ex({}), 'no');
test('in a literal list of numbers', verdicts, 'extras.n in [1, 2]', ex({ n: 2 }), 'match');
test('in a mixed literal, found', verdicts, "extras.v in [1, 'a']", ex({ v: 'a' }), 'match');
test('in a mixed literal, missed: like v == 1 || v == "a"', verdicts, "extras.v in [1, 'a']", ex({ v: 'b' }), 'degraded');
test('a list in a literal list', verdicts, "extras.l in ['a']", ex({ l: ['a'] }), 'degraded');
test('declared string in a literal list is unaffected', verdicts, "context.country in ['NG', 'GH']", input({ context: { country: 'US' } }), 'no');
test('in an event list of another type', verdicts, "'vip' in extras.tags", ex({ tags: [1, 2] }), 'degraded');
test('in an event list, found among mixed', verdicts, "'vip' in extras.tags", ex({ tags: [1, 'vip'] }), 'match');
test('in an event list of strings, not found', verdicts, "'vip' in extras.tags", ex({ tags: ['a'] }), 'no');
test('in an empty event list', verdicts, "'vip' in extras.tags", ex({ tags: [] }), 'no');
test('a number as a map key', verdicts, 'extras.k in extras.m', ex({ k: 1, m: { a: 1 } }), 'degraded');
test('a number in a literal map', verdicts, "extras.k in {'a': 1}", ex({ k: 1 }), 'degraded');
test('a string key in a map', verdicts, "extras.k in {'a': 1}", ex({ k: 'a' }), 'match');

// Other operators with a dyn operand were already checked; kept here as the full list.
test('startsWith on a number', verdicts, "extras.v.startsWith('a')", ex({ v: 1 }), 'degraded');
test('matches on a bool', verdicts, "extras.v.matches('a')", ex({ v: true }), 'degraded');
test('size of a bool', verdicts, 'size(extras.v) == 1', ex({ v: true }), 'degraded');
test('ordering on a string', verdicts, 'extras.score > 5.0', ex({ score: 'x' }), 'degraded');

// Error absorption is unchanged: a decided || or && hides the type error.
test('type error || true', verdicts, "extras.block == true || extras.tier == 'x'", ex({ block: 'yes', tier: 'x' }), 'match');
test('false && type error', verdicts, 'extras.a == 1.0 && extras.block == true', ex({ a: 2, block: 'yes' }), 'no');
test('exists: a mismatched element does not hide a match', verdicts, "extras.items.exists(x, x == 'a')", ex({ items: [1, 'a'] }), 'match');
test('exists: only mismatches', verdicts, "extras.items.exists(x, x == 'a')", ex({ items: [1, 2] }), 'degraded');

test('in_list of a non-string from extras is degraded', (t) => {
  const fn = compile([rule({ rule_id: 'r', kind: 'hard_block', score_delta: 0, expression: "in_list('blocked', extras.email)" })]);
  const lists = { has: (_id: string, v: string) => v === 'x@y.z' };
  t.deepEqual(fn({ ...ex({ email: 5 }), lists }).degraded, ['r']);
  t.true(fn({ ...ex({ email: 'x@y.z' }), lists }).hard_block_hit);
  t.deepEqual(fn({ ...ex({}), lists }).degraded, []);
});

test('the audit case: a hard block on extras.block == true is degraded, active and shadow', (t) => {
  const fn = compile([
    rule({ rule_id: 'block_flag', kind: 'hard_block', score_delta: 0, expression: 'extras.block == true' }),
    rule({ rule_id: 'shadow_flag', kind: 'hard_block', status: 'shadow', score_delta: 0, expression: 'extras.block == true' }),
    rule({ rule_id: 'points', kind: 'scoring', score_delta: 5, expression: "extras.block != 'x'" }),
  ]);
  const out = fn(ex({ block: 'yes' }));
  t.false(out.hard_block_hit);
  t.false(out.over_budget);
  t.deepEqual(out.degraded, ['block_flag']);
  t.is(out.score, 5, "'yes' != 'x': the scoring rule still matches");
  t.like(out.breakdown[0], { rule_id: 'block_flag', matched: false, band: null });
  t.like(out.shadow[0], { rule_id: 'shadow_flag', matched: false, degraded: true });

  const blocked = fn(ex({ block: true }));
  t.true(blocked.hard_block_hit);
  t.like(blocked.shadow[0], { rule_id: 'shadow_flag', matched: true, degraded: false });
  t.deepEqual(blocked.degraded, [], 'a hard block ends evaluation before the scoring rule');
  t.deepEqual(fn(ex({ block: false })).degraded, ['points'], "false != 'x' is a type error too");
});
