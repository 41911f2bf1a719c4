// The emitted source: it parses, and it is made only of known identifiers.
// Analyst text may appear inside string literals and nowhere else.

import test from 'ava';
import fc from 'fast-check';
import vm from 'node:vm';
import { compileRuleset, kExtras, kGroups, kScalars, listPresets } from '../../compiler/index.js';
import type { RuleDefinition } from '../../compiler/index.js';
import * as runtime from '../../compiler/runtime/index.js';
import { checkExpression } from '../../compiler/expression.js';
import { ruleArb } from './_helpers/arbitraries.js';
import { kNoCostLimit } from './_helpers/rules.js';

// Generated names are a prefix plus a counter (ir.ts, emit.ts, lower.ts).
const kGenerated = /^(?:[ghktvmrsbdeoc]\d+|rt_[A-Za-z]+)$/;
const kFixed = new Set([
  'A', 'T', 'X', 'B', 'I', 'E', 'S', 'K', 'V', 'SH', 'DG', 'FL', 'AC', 'BD', 'SC', 'sc', 'MP', 'rt', 'ruleset', 'input', 'shadow', 'degraded', 'flags', 'actions',
  'score', 'r', 'c', 'l', 'i', 'e', 'o', 'u', 'd', 'v',
  'const', 'let', 'function', 'return', 'if', 'else', 'typeof', 'true', 'false', 'null', 'undefined', 'try', 'catch', 'for', 'break',
  'trust_override', 'hard_block_hit', 'max_possible', 'breakdown', 'over_budget',
]);
const kProperties = new Set<string>([
  ...Object.keys(runtime), ...kGroups.flatMap((g) => [g.name, ...Object.keys(g.fields)]), ...kScalars.map((s) => s.name),
  kExtras.name, 'event', 'signals', 'now', 'push', 'includes', 'length', 'has', 'startsWith', 'endsWith', 'toLowerCase',
  'toUpperCase', 'trim', 'left',
]);

function check(source: string): string[] {
  const problems: string[] = [];
  try {
    new vm.Script(`(function (rt) {\n${source}\n})`);
  } catch (err) {
    problems.push(`does not parse: ${(err as Error).message}`);
  }
  const code = source.replace(/"(?:[^"\\\n]|\\.)*"/g, '""').replace(/^\/\/.*$/gm, '');
  for (const m of code.matchAll(/(\.?)\b([A-Za-z_$][\w$]*)\b/g)) {
    const [, dot, word] = m as unknown as [string, string, string];
    if (/^\d/.test(word)) continue;
    const known = dot === '.' ? kProperties.has(word) : kGenerated.test(word) || kFixed.has(word);
    if (!known) problems.push(`unknown identifier ${dot}${word}`);
  }
  return [...new Set(problems)];
}

for (const preset of listPresets()) {
  test(`preset ${preset.name}: the emitted source parses and uses only known identifiers`, (t) => {
    const result = compileRuleset(preset.rules);
    t.true(result.ok);
    if (result.ok) t.deepEqual(check(result.artifact.source), []);
  });
}

test('random rulesets: the emitted source parses and uses only known identifiers', (t) => {
  fc.assert(
    fc.property(fc.tuple(ruleArb('a'), ruleArb('b'), ruleArb('c')), (rules: RuleDefinition[]) => {
      fc.pre(rules.every((r) => checkExpression(r.expression).ok && (r.bands ?? []).every((b) => checkExpression(b.expression).ok)));
      const result = compileRuleset(rules, kNoCostLimit);
      if (!result.ok) return false;
      const problems = check(result.artifact.source);
      if (problems.length > 0) throw new Error(problems.join('\n'));
      return true;
    }),
    { seed: 7, numRuns: 120 },
  );
  t.pass();
});

test('a chunked ruleset: the emitted source parses and uses only known identifiers', (t) => {
  const rules = fc.sample(fc.tuple(...Array.from({ length: 110 }, (_, i) => ruleArb(`r${i}`))), { seed: 8, numRuns: 1 })[0] as RuleDefinition[];
  const usable = rules.filter((r) => checkExpression(r.expression).ok && (r.bands ?? []).every((b) => checkExpression(b.expression).ok));
  const result = compileRuleset(usable, kNoCostLimit);
  t.true(result.ok);
  if (!result.ok) return;
  t.true(result.artifact.source.includes('function c1('));
  t.deepEqual(check(result.artifact.source), []);
});

test('the checker itself catches a stray identifier', (t) => {
  t.deepEqual(check('const A = 1; return process;'), ['unknown identifier process']);
  t.deepEqual(check('return x.constructor;'), ['unknown identifier x', 'unknown identifier .constructor']);
});
