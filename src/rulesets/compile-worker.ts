// The rules compiler thread (a one-thread piscina pool, see rules-compiler.ts). Checking a rule
// takes about a millisecond and compiling a ruleset tens of milliseconds (35 rules; up to a second
// for the largest): work that must not stall the HTTP thread, which answers payment backends, nor
// the writer thread, which commits their events. Results are plain data.
import {
  compileRuleset, validateRuleDefinition, type CompileResult, type RuleDefinition, type RuleProblem,
} from '../../compiler/index.js';
import { announceThread } from '../shared/threads.js';

announceThread('compile');

export type ValidateOutcome = { readonly ok: true; readonly rule: RuleDefinition } | { readonly ok: false; readonly problems: RuleProblem[] };

/** Field-level check of one rule record, its expressions parsed and type-checked. */
export function validate(input: unknown): ValidateOutcome {
  return validateRuleDefinition(input);
}

/** Compiles a whole ruleset (the drafts of a project). */
export function compile(rules: RuleDefinition[]): CompileResult {
  return compileRuleset(rules);
}
