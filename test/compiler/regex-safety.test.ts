// The matches() pattern checker: what it accepts, what it refuses and why.

import test from 'ava';
import type { ExecutionContext } from 'ava';
import { checkRegex } from '../../compiler/regex-safety.js';

const accepted = test.macro({
  exec(t: ExecutionContext, pattern: string) {
    t.is(checkRegex(pattern), null);
  },
  title: (_p, pattern: string) => `accepts ${pattern}`,
});

const refused = test.macro({
  exec(t: ExecutionContext, pattern: string, reason: RegExp) {
    const problem = checkRegex(pattern);
    t.not(problem, null);
    t.regex(problem?.message ?? '', reason);
  },
  title: (_p, pattern: string) => `refuses ${pattern}`,
});

for (const p of [
  '^[a-z0-9._%+-]+@[a-z0-9-]+\\.[a-z]{2,}$',
  '^[a-z0-9.]+@([a-z0-9-]+\\.)+[a-z]{2,}$',
  '(headless|phantomjs|selenium)',
  '^\\+44\\d{10}$',
  '\\w+@\\w+\\.com',
  '(?:bot|crawl|spider)s?',
  '^(\\d{3}-){2}\\d{4}$',
  '(?:ab|cd)+',
  '.*x',
  '[^@]+@[^@]+',
  '^$',
  '',
  '\\bfoo\\b',
  '(?<word>ab)c',
  '[\\]\\-]',
  'a{2}b{1,3}?',
]) test(accepted, p);

test(refused, '(a+)+$', /nested quantifier/);
test(refused, '(a*)*', /empty string/);
test(refused, '(\\d+\\.?)+', /nested quantifier/);
test(refused, '(.+,)+x', /nested quantifier/);
test(refused, '(a|a)*b', /same character/);
test(refused, '(a|ab)*c', /same character/);
test(refused, '(|a)+', /empty string/);
test(refused, '\\d+\\d+x', /same characters/);
test(refused, '.*.*=.*', /same characters/);
test(refused, 'a.*b.*c', /same characters/);
test(refused, '(x.*)(y.*)', /same characters/);
test(refused, '(a)\\1', /backreferences/);
test(refused, '(?<n>a)\\k<n>', /named backreferences/);
test(refused, 'a(?=b)', /lookahead and lookbehind/);
test(refused, '(?<!a)b', /lookahead and lookbehind/);
test(refused, '(?i)abc', /inline flags/);
test(refused, 'a{2', /quantifier like \{2,5\}/);
test(refused, 'a**', /cannot follow a quantifier/);
test(refused, '*a', /nothing to repeat/);
test(refused, '(ab', /missing '\)'/);
test(refused, '[ab', /missing '\]'/);
test(refused, '\\p{L}', /unknown escape/);
test(refused, '^\\b*', /assertion/);
test(refused, 'x'.repeat(257), /longer than 256/);
test(refused, '[z-a]', /out of order/);

test('offsets point into the pattern', (t) => {
  t.is(checkRegex('abc(?=d)')?.offset, 3);
  t.is(checkRegex('ab\\1')?.offset, 2);
});
