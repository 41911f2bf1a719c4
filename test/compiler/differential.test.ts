// Differential tests: the compiled function against cel-js's own evaluator
// (compiler/reference.ts), which maps cel-js errors to "not matched" (and type
// errors to degraded). Seeded, so a failure reproduces; about 3,000 runs in all.

import test from 'ava';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { checkExpression } from '../../compiler/expression.js';
import { compileRuleset, listPresets, loadRuleset } from '../../compiler/index.js';
import type { RuleDefinition, RulesetInput } from '../../compiler/index.js';
import { ReferenceRuleset } from '../../compiler/reference.js';
import { expr, inputArb, ruleArb } from './_helpers/arbitraries.js';
import { kNoCostLimit, rule } from './_helpers/rules.js';

const kSeed = 20261120;

/** Outcomes as plain data (frozen shared entries compare like fresh ones). */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v));
}

function same(rules: readonly RuleDefinition[], inputs: readonly RulesetInput[]): boolean {
  const compiled = compileRuleset(rules, kNoCostLimit);
  if (!compiled.ok) throw new Error(`does not compile: ${JSON.stringify(compiled.errors)}`);
  const fn = loadRuleset(compiled.artifact.source);
  const ref = new ReferenceRuleset(rules);
  for (const input of inputs) {
    const a = plain(fn(input));
    const b = plain(ref.evaluate(input));
    if (!isDeepStrictEqual(a, b)) {
      throw new Error(`outcomes differ\nrules: ${JSON.stringify(rules)}\ninput: ${JSON.stringify(input)}\ncompiled: ${JSON.stringify(a)}\ncel-js:   ${JSON.stringify(b)}`);
    }
  }
  return true;
}

for (const preset of listPresets()) {
  test(`preset ${preset.name}: every rule agrees with cel-js on generated events`, (t) => {
    const fn = loadRuleset((compileRuleset(preset.rules) as { artifact: { source: string } }).artifact.source);
    const ref = new ReferenceRuleset(preset.rules);
    let matchedRules = new Set<string>();
    fc.assert(
      fc.property(inputArb, (input) => {
        const a = plain(fn(input)) as { breakdown: { rule_id: string; matched: boolean }[] };
        t.deepEqual(a, plain(ref.evaluate(input)));
        for (const b of a.breakdown) if (b.matched) matchedRules.add(b.rule_id);
        return true;
      }),
      { seed: kSeed, numRuns: 400 },
    );
    // The generated events must actually exercise the preset.
    t.true(matchedRules.size >= preset.rules.length / 2, `only ${matchedRules.size} rules ever matched`);
    matchedRules = new Set();
  });

  test(`preset ${preset.name}: each rule alone, as a scoring rule, agrees with cel-js`, (t) => {
    // Trust and hard-block rules end evaluation early; alone, each is observed on every event.
    const inputs = fc.sample(inputArb, { seed: kSeed + 1, numRuns: 60 });
    for (const r of preset.rules) {
      t.true(same([{ ...r, kind: 'scoring', status: 'active', score_delta: r.bands === null ? 1 : 0, bands: r.bands?.map((b) => ({ ...b, score_delta: 1 })) ?? null }], inputs), r.rule_id);
    }
  });
}

test('random expressions agree with cel-js', (t) => {
  let checked = 0;
  fc.assert(
    fc.property(expr.bool, fc.array(inputArb, { minLength: 6, maxLength: 6 }), (expression, inputs) => {
      // The grammar is typed, but a few combinations are not CEL (e.g. int == double).
      fc.pre(checkExpression(expression).ok);
      // int() of a double beyond ±2^63 is an error in CEL and here, a value in cel-js: a documented
      // divergence (docs/rules.md), covered in semantics.test.ts. Random doubles reach it often.
      fc.pre(!expression.includes('int('));
      checked++;
      return same([rule({ rule_id: 'r', expression })], inputs);
    }),
    { seed: kSeed + 2, numRuns: 300 },
  );
  t.true(checked >= 250, `only ${checked} expressions type-checked`);
});

test('random rulesets (kinds, statuses, bands, actions) agree with cel-js', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.nat(), { minLength: 1, maxLength: 6 }).chain((ids) => fc.tuple(...ids.map((_, i) => ruleArb(`r${i}`)))),
      fc.array(inputArb, { minLength: 5, maxLength: 5 }),
      (rules, inputs) => {
        fc.pre(rules.every((r) => checkExpression(r.expression).ok && (r.bands ?? []).every((b) => checkExpression(b.expression).ok)));
        return same(rules, inputs);
      },
    ),
    { seed: kSeed + 3, numRuns: 150 },
  );
  t.pass();
});

test('a large ruleset (several emitted chunks) agrees with cel-js', (t) => {
  // More rules than fit one emitted function: exercises the chunked layout.
  const rules = fc
    .sample(fc.tuple(...Array.from({ length: 130 }, (_, i) => ruleArb(`r${i}`))), { seed: kSeed + 4, numRuns: 1 })[0] as RuleDefinition[];
  const usable = rules.filter((r) => checkExpression(r.expression).ok && (r.bands ?? []).every((b) => checkExpression(b.expression).ok));
  t.true(usable.length > 100);
  const result = compileRuleset(usable, kNoCostLimit);
  t.true(result.ok && result.artifact.source.includes('function c2('), 'emitted in chunks');
  t.true(same(usable, fc.sample(inputArb, { seed: kSeed + 5, numRuns: 150 })));
});
