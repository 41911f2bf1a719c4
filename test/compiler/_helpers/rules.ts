// Small helpers to build rules and run single expressions through both the
// compiled ruleset and the cel-js reference.

import { compileRuleset, loadRuleset } from '../../../compiler/index.js';
import type { CompileOptions, RuleDefinition, RulesetFunction, RulesetInput } from '../../../compiler/index.js';
import { ReferenceRuleset } from '../../../compiler/reference.js';

export const kNow = Date.parse('2026-11-20T12:30:00Z');

export function rule(partial: Partial<RuleDefinition> & { rule_id: string }): RuleDefinition {
  return {
    kind: 'scoring',
    status: 'active',
    expression: 'true',
    score_delta: partial.kind === undefined || partial.kind === 'scoring' ? 1 : 0,
    bands: null,
    action: null,
    description: '',
    version: 1,
    ...partial,
  };
}

/** Semantics tests exercise expressions over the cost limit (kMaxRuleCost); the cost tests do not use this. */
export const kNoCostLimit: CompileOptions = { maxRuleCost: Number.POSITIVE_INFINITY };

export function compile(rules: readonly RuleDefinition[], options: CompileOptions = {}): RulesetFunction {
  const result = compileRuleset(rules, options);
  if (!result.ok) throw new Error(`compile failed: ${JSON.stringify(result.errors)}`);
  return loadRuleset(result.artifact.source);
}

export function input(event: Record<string, unknown> = {}, signals: Record<string, unknown> = {}, now = kNow): RulesetInput {
  return { event, signals, now };
}

export type Verdict = 'match' | 'no' | 'degraded';

/** The verdict of one expression as a scoring rule, compiled. */
export function verdict(fn: RulesetFunction, data: RulesetInput): Verdict {
  const out = fn(data);
  if (out.degraded.includes('r')) return 'degraded';
  return out.breakdown.find((b) => b.rule_id === 'r')?.matched === true ? 'match' : 'no';
}

const cache = new Map<string, { fn: RulesetFunction; ref: ReferenceRuleset }>();

/** Compiled and reference verdicts of one expression on one input. */
export function both(expression: string, data: RulesetInput): { compiled: Verdict; reference: Verdict } {
  let c = cache.get(expression);
  if (c === undefined) {
    const rules = [rule({ rule_id: 'r', expression })];
    c = { fn: compile(rules, kNoCostLimit), ref: new ReferenceRuleset(rules) };
    cache.set(expression, c);
  }
  const r = c.ref.evaluate(data);
  const reference: Verdict = r.degraded.includes('r') ? 'degraded' : r.breakdown[0]?.matched === true ? 'match' : 'no';
  return { compiled: verdict(c.fn, data), reference };
}

/** A diagnostic message of an expression that must not compile. */
export function compileError(expression: string): string {
  const result = compileRuleset([rule({ rule_id: 'r', expression })]);
  if (result.ok) throw new Error(`expected a compile error for ${expression}`);
  return result.errors.map((e) => e.message).join('\n');
}
