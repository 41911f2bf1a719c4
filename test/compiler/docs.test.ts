// docs/rules.md must keep up with the code: every variable and signal, every
// function, every limit and every preset is documented.

import test from 'ava';
import { readFileSync } from 'node:fs';
import { kExtras, kGroups, kScalars, listPresets } from '../../compiler/index.js';
import * as limits from '../../compiler/limits.js';
import { supportedFunctionNames } from '../../compiler/ops.js';

const doc = readFileSync(new URL('../../../docs/rules.md', import.meta.url), 'utf8');
const mentions = (text: string): boolean => doc.includes(`\`${text}\``) || doc.includes(`\`${text},`) || doc.includes(`, ${text}\``) || new RegExp(`\`[^\`]*\\b${text.replace(/[.*()]/g, (c) => `\\${c}`)}`).test(doc);

test('every variable and every field is documented', (t) => {
  for (const s of kScalars) t.true(mentions(s.name), s.name);
  t.true(mentions(kExtras.name));
  for (const g of kGroups) for (const f of Object.keys(g.fields)) t.true(mentions(`${g.name}.${f}`), `${g.name}.${f}`);
});

test('every supported function is documented', (t) => {
  for (const f of supportedFunctionNames()) {
    const name = f.replace(/^\./, '').replace(/\(\)$/, '');
    t.true(doc.includes(`${name}(`), f);
  }
});

test('every limit is documented with its value', (t) => {
  const n = (v: number): string => v.toLocaleString('en-US');
  for (const v of [limits.kMaxExpressionLength, limits.kCelLimits.maxAstNodes, limits.kMaxNestingDepth, limits.kCelLimits.maxListElements,
    limits.kCelLimits.maxMapEntries, limits.kCelLimits.maxCallArguments, limits.kMaxBands, limits.kMaxRules, limits.kMaxAbsDelta,
    limits.kMaxDescriptionLength, limits.kMaxRegexPatternLength, limits.kMaxRuleCost, limits.kEventBudget]) {
    t.true(doc.includes(n(v)), n(v));
  }
});

test('every preset and every preset rule quoted in the docs exists', (t) => {
  const presets = listPresets();
  for (const p of presets) t.true(doc.includes(`\`${p.name}\``), p.name);
  const ids = new Set(presets.flatMap((p) => p.rules.map((r) => r.rule_id)));
  for (const m of doc.matchAll(/^\/\/ ([a-z_]+)[ ,]/gm)) t.true(ids.has(m[1] as string), m[1]);
  const expressions = new Set(presets.flatMap((p) => p.rules.map((r) => r.expression)));
  const block = doc.slice(doc.indexOf('Some rules of `default`'));
  for (const line of block.slice(0, block.indexOf('## ')).split('\n')) {
    if (line.trim() === '' || line.startsWith('//') || line.startsWith('```') || line.startsWith('Some')) continue;
    t.true(expressions.has(line.trim()), line);
  }
});
