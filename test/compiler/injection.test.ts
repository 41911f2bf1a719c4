// Hostile rules and hostile data: nothing an analyst or a caller writes may
// become code, reach a prototype or a global, or loop.

import test from 'ava';
import type { ExecutionContext } from 'ava';
import vm from 'node:vm';
import { compileRuleset, validateRuleDefinition } from '../../compiler/index.js';
import { compileValue } from '../../compiler/value.js';
import { compile, compileError, input, kNoCostLimit, rule } from './_helpers/rules.js';

const kHostileStrings = [
  '"; process.exit(1); "',
  "'); require('fs'); ('",
  '*/ globalThis.pwned = 1; /*',
  '`${globalThis.pwned = 1}`',
  '${process.exit(1)}',
  '\u2028return 1;\u2029',
  '</script><script>alert(1)</script>',
  '\\"); throw 1; //',
  '\u0000\u001f\ufeff\u200b',
];

/** Source text with every string literal removed: what is left is code. */
function codeOnly(source: string): string {
  return source.replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
}

const stringLiteral = test.macro({
  exec(t: ExecutionContext, hostile: string) {
    // CEL string literal: escape backslash, quote and control characters the CEL lexer refuses raw.
    const cel = JSON.stringify(hostile);
    const fn = compile([rule({ rule_id: 'r', expression: `user.name == ${cel} || extras[${cel}] == true` })]);
    t.true(fn(input({ user: { name: hostile } })).breakdown[0]?.matched, 'the literal round-trips exactly');
    t.false(fn(input({ user: { name: `${hostile}x` } })).breakdown[0]?.matched);
    t.true(fn(input({ extras: { [hostile]: true } })).breakdown[0]?.matched);
    t.is((globalThis as Record<string, unknown>).pwned, undefined);
    const result = compileRuleset([rule({ rule_id: 'r', expression: `user.name == ${cel}` })]);
    t.true(result.ok);
    if (!result.ok) return;
    t.false(/[\u2028\u2029]/.test(result.artifact.source), 'no raw line separators in the source');
    t.notThrows(() => new vm.Script(`(function (rt) {\n${result.artifact.source}\n})`));
  },
  title: (_p, hostile: string) => `hostile string literal ${JSON.stringify(hostile)} stays a literal`,
});

for (const s of kHostileStrings) test(stringLiteral, s);

const refused = test.macro({
  exec(t: ExecutionContext, expression: string, message: RegExp) {
    t.regex(compileError(expression), message);
  },
  title: (_p, expression: string) => `refused at compile time: ${expression}`,
});

// Prototype and constructor access, by every syntax.
test(refused, 'user.__proto__ == null', /member name '__proto__' is not allowed/);
test(refused, "user.constructor == 'x'", /member name 'constructor' is not allowed/);
test(refused, 'extras.prototype == 1', /member name 'prototype' is not allowed/);
test(refused, "extras['__proto__'] == 1", /member name '__proto__' is not allowed/);
test(refused, "payment['constructor'] == 1", /member name 'constructor' is not allowed/);
test(refused, "has(extras.constructor)", /member name 'constructor' is not allowed/);
test(refused, "{'__proto__': 1}['a'] == 1", /member name '__proto__' is not allowed/);
test(refused, "extras.a.constructor == 1", /member name 'constructor' is not allowed/);
test(refused, "'x'.constructor == 1", /line 1, column \d+: /);
// Globals are not variables.
test(refused, 'process.exit(1)', /Unknown variable: process/);
test(refused, "require('fs') == null", /(Unknown variable|no matching overload).*require|require/);
test(refused, 'globalThis == null', /Unknown variable: globalThis/);
test(refused, 'this == null', /Unknown variable: this/);
test(refused, "eval('1') == 1", /eval/);
test(refused, "Function('return 1')() == 1", /line 1/);
test(refused, "user.name.constructor('return process')() == 1", /line 1/);
// Features outside the supported language.
test(refused, 'dyn(now) == now', /dyn\(\) with 1 argument\(s\) is not supported|not supported/);
test(refused, 'type(1) == int', /not supported/);
test(refused, "b'abc' == b'abc'", /not supported/);
test(refused, 'cel.bind(x, 1, x == 1)', /not supported/);
test(refused, "user.email.matches(user.name)", /needs a string literal pattern/);
test(refused, 'user', /must be bool/);
test(refused, 'payment.amount_cents', /must be bool/);
test(refused, '9007199254740993 > payment.amount_cents', /too large/);
test(refused, 'now.getHours("Europe/Paris") == 1', /time zone is not supported/);
test(refused, "timestamp('yesterday') < now", /is not an RFC 3339 timestamp/);
test(refused, "duration('a while') < now - now", /is not a duration/);
test(refused, "duration('2562048h') > duration('0s')", /is beyond the range of a duration \(about ±292 years\)/);
test(refused, "extras.tags.exists(t, t.contains('a')) && extras.tags.exists(t, t.contains('b')) && extras.tags.exists(t, t.contains('c')) && extras.tags.exists(t, t.contains('d')) && extras.tags.exists(t, t.contains('e'))", /each pass over one counts as if it held that many: a rule makes a few at most/);

test('hostile rule ids, band names and actions are refused before any code is emitted', (t) => {
  for (const id of ['"; process.exit(1); "', '__proto__', 'Constructor', 'a-b', 'x'.repeat(65), '']) {
    const result = compileRuleset([rule({ rule_id: id })]);
    t.false(result.ok, id);
    if (!result.ok) t.true(result.errors.some((e) => e.field === 'rule_id'));
  }
  const band = validateRuleDefinition(rule({ rule_id: 'r', score_delta: 0, bands: [{ band: '");x("', expression: 'true', score_delta: 1 }] }));
  t.false(band.ok);
  const action = validateRuleDefinition(rule({ rule_id: 'r', action: 'require_kyc:phone"); x("' }));
  t.false(action.ok);
});

test('rule ids and band labels reach the source only as literals', (t) => {
  const result = compileRuleset([
    rule({ rule_id: 'process', expression: 'true' }),
    rule({ rule_id: 'require', kind: 'monitoring', expression: 'true' }),
    rule({ rule_id: 'constructor', score_delta: 0, expression: 'true', bands: [{ band: 'prototype', expression: 'true', score_delta: 1 }] }),
  ]);
  t.true(result.ok);
  if (!result.ok) return;
  const code = codeOnly(result.artifact.source);
  for (const word of ['process', 'require', 'constructor', 'prototype', '__proto__', 'globalThis', 'eval', 'Function', 'import', 'this']) {
    t.false(new RegExp(`\\b${word}\\b`).test(code), `${word} appears outside a string literal`);
  }
});

test('hostile data keys are never followed into prototypes', (t) => {
  const event = JSON.parse('{"extras": {"__proto__": {"polluted": true}, "k": "__proto__", "c": "constructor"}, "user": {"__proto__": {"x": 1}}}') as Record<string, unknown>;
  const fn = compile([
    rule({ rule_id: 'a', expression: 'extras[extras.k].polluted == true' }),
    rule({ rule_id: 'b', expression: 'extras[extras.c] == null' }),
    rule({ rule_id: 'c', expression: "user[extras.k] == null && 'toString' in extras == false" }),
    rule({ rule_id: 'd', expression: 'extras.exists(k, k == extras.k)' }),
  ]);
  const out = fn(input(event));
  t.deepEqual(out.breakdown.map((b) => [b.rule_id, b.matched]), [['a', false], ['b', true], ['c', true], ['d', false]]);
  t.is(({} as Record<string, unknown>).polluted, undefined);
  t.deepEqual(out.degraded, []);
});

test('a rule cannot loop: an event spends at most its evaluation budget, then is not scored', (t) => {
  // Over the cost limit, so compiled without it: this is the run-time guard behind it.
  const fn = compile([
    rule({ rule_id: 'nested', expression: 'extras.mid.exists(x, extras.mid.exists(y, x + y == -1.0))' }),
    rule({ rule_id: 'fine', expression: 'extras.small.exists(x, x == 1.0)' }),
  ], kNoCostLimit);
  const mid = Array.from({ length: 5000 }, (_, i) => i); // 25 million iterations, over kEventBudget
  const out = fn(input({ extras: { mid, small: [1] } }));
  t.true(out.over_budget, 'the outcome says it must not be used');
  t.false(out.breakdown[0]?.matched);
  t.deepEqual(out.degraded, [], 'running out of budget is not a type error');
  // The budget is per event: the next one starts afresh.
  const small = fn(input({ extras: { mid: [0, -1], small: [1] } }));
  t.false(small.over_budget);
  t.deepEqual(small.breakdown.map((b) => b.matched), [true, true]);
});

test('list concatenation spends one unit per element: an event cannot allocate without bound', (t) => {
  const fn = compile([rule({ rule_id: 'grow', expression: 'extras.l.map(x, extras.l + extras.l + extras.l).size() > 0' })], kNoCostLimit);
  const l = Array.from({ length: 100_000 }, (_, i) => i); // 30 billion elements if it ran to the end
  const out = fn(input({ extras: { l } }));
  t.true(out.over_budget);
  t.false(out.breakdown[0]?.matched);
});

test('expression size is bounded', (t) => {
  t.regex(compileError(`${'1 + '.repeat(1100)}1 > 0`), /longer than 4096 characters/);
  t.regex(compileError(`${'('.repeat(40)}true${')'.repeat(40)}`), /maxDepth|Exceeded/);
  t.regex(compileError(`[${Array.from({ length: 300 }, (_, i) => i).join(', ')}].size() > 0`), /maxListElements|Exceeded/);
});

// Issue 12 added code paths that take analyst text: RE2 patterns (a constant, a cost weight),
// per-iteration costs, and compiler/value.ts (the conformance runner's entry). None may let text out.
for (const hostile of kHostileStrings) {
  test(`hostile text in a matches() pattern stays a literal: ${JSON.stringify(hostile)}`, (t) => {
    // Quoted for RE2 (\Q...\E matches the text literally) and for CEL.
    const pattern = `\\Q${hostile.replace(/\\E/g, '')}\\E`;
    const result = compileRuleset([rule({ rule_id: 'r', expression: `user.name.matches(${JSON.stringify(pattern)})` })]);
    if (!result.ok) {
      // RE2 may refuse it (a NUL, say): refused before any code exists is also no escape.
      t.true(result.errors.every((e) => e.field === 'expression'));
      return;
    }
    t.notThrows(() => new vm.Script(`(function (rt) {\n${result.artifact.source}\n})`));
    const fn = compile([rule({ rule_id: 'r', expression: `user.name.matches(${JSON.stringify(pattern)})` })]);
    t.true(fn(input({ user: { name: `x${hostile}y` } })).breakdown[0]?.matched);
    t.is((globalThis as Record<string, unknown>).pwned, undefined);
  });

  test(`hostile text through compileValue stays a value: ${JSON.stringify(hostile)}`, (t) => {
    const compiled = compileValue(`[${JSON.stringify(hostile)}, {${JSON.stringify(hostile)}: ${JSON.stringify(hostile)}}]`);
    t.true(compiled.ok);
    if (!compiled.ok) return;
    t.false(/[\u2028\u2029]/.test(compiled.value.source));
    const got = compiled.value.evaluate(input({})) as [string, Record<string, string>];
    t.is(got[0], hostile);
    t.is(got[1]?.[hostile], hostile);
    t.is((globalThis as Record<string, unknown>).pwned, undefined);
  });
}

test('the budget and the iteration costs reach the source as numbers only', (t) => {
  const result = compileRuleset([rule({ rule_id: 'r', expression: "extras.l.exists(x, x.matches('(a|b)+'))" })]);
  t.true(result.ok);
  if (!result.ok) return;
  const code = codeOnly(result.artifact.source);
  t.regex(code, /B\.left = 20000000;/);
  t.regex(code, /\(B\.left -= \d+\) < 0/);
  t.regex(code, /rt_reTest\(k\d+, [a-z]\d+, \d+\)/);
});
