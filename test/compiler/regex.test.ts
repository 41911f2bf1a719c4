// matches(): RE2 syntax and semantics (the CEL specification's), linear in the
// input whatever the pattern. Replaces the hand-written backtracking checker.

import test from 'ava';
import { compileRuleset } from '../../compiler/index.js';
import { compile, compileError, input, kNoCostLimit, rule } from './_helpers/rules.js';

// Without the cost limit: the case is refused by it at save time (cost.test.ts); here the
// engine itself is under test.
const matched = (expression: string, extras: Record<string, unknown>): boolean | undefined =>
  compile([rule({ rule_id: 'r', expression })], kNoCostLimit)(input({ extras })).breakdown[0]?.matched;

test('patterns that backtrack catastrophically in JavaScript run in linear time', (t) => {
  // Each of these takes exponential or polynomial time in a backtracking engine on
  // this input (seconds to years); RE2 answers after one pass. Nothing is timed:
  // the test would not finish otherwise.
  const s = `${'a'.repeat(50_000)}!`;
  t.false(matched("extras.s.matches('^(a+)+$')", { s }));
  t.false(matched("extras.s.matches('^(a|aa)*$')", { s }));
  t.false(matched("extras.s.matches('(a*)*b')", { s }));
  t.true(matched("extras.s.matches('a+!$')", { s }));
  // The case: 10,000 searches of a 512-character string.
  t.false(matched("extras.l.exists(x, extras.s.matches('a*b'))", { l: Array.from({ length: 10_000 }, (_, i) => i), s: 'a'.repeat(512) }));
});

test('RE2 syntax: what JavaScript has and RE2 does not is refused with the reason', (t) => {
  t.regex(compileError("user.name.matches('(a)\\\\1')"), /invalid regular expression \(RE2 syntax\)/);
  t.regex(compileError("user.name.matches('a(?=b)')"), /invalid regular expression \(RE2 syntax\)/);
  t.regex(compileError("user.name.matches('(?<!a)b')"), /invalid regular expression/);
  t.regex(compileError("user.name.matches('[a-')"), /invalid regular expression/);
  t.regex(compileError(`user.name.matches('${'a'.repeat(257)}')`), /longer than 256 characters/);
  t.regex(compileError("user.name.matches(user.email)"), /needs a string literal pattern/);
});

test('RE2 syntax: flags, classes and Unicode groups work as RE2 defines them', (t) => {
  t.true(matched("extras.s.matches('(?i)^headless')", { s: 'HeadlessChrome' }));
  t.true(matched("extras.s.matches('^\\\\pL+$')", { s: 'Zoë' }));
  t.true(matched("extras.s.matches('^[[:alpha:]]+$')", { s: 'abc' }));
  t.true(matched("extras.s.matches('^.$')", { s: '😀' }), 'one code point is one character');
  t.false(matched("extras.s.matches('^\\\\d+$')", { s: '١٢٣' }), '\\d is ASCII digits in RE2');
  t.true(matched("extras.s.matches('b')", { s: 'abc' }), 'a search, not a full match');
});

test('a pattern is compiled once per ruleset, however many rules use it', (t) => {
  const result = compileRuleset([
    rule({ rule_id: 'a', expression: "user.name.matches('^x+$')" }),
    rule({ rule_id: 'b', expression: "context.user_agent.matches('^x+$') || user.email.matches('^y$')" }),
  ]);
  t.true(result.ok);
  if (!result.ok) return;
  t.is(result.artifact.source.match(/\\"re\\":/g)?.length, 2, 'two distinct patterns, two constants');
});
