// The rules compiler thread (a one-thread piscina pool, see rules-compiler.ts). Checking a rule
// takes about a millisecond and compiling a ruleset tens of milliseconds (35 rules; up to a second
// for the largest): work that must not stall the HTTP thread, which answers payment backends, nor
// the writer thread, which commits their events. Normalising the 10,000 values of a list request
// (phone numbers take ~10 µs each) runs here for the same reason. Results are plain data.
import {
  compileRuleset, validateRuleDefinition, type CompileResult, type RuleDefinition, type RuleDiagnostic, type RuleProblem,
} from '../../compiler/index.js';
import { normalizeListItem, type ListKind } from '../lists/list-kinds.js';
import { announceThread } from '../shared/threads.js';

announceThread('compile');

export type ValidateOutcome =
  | { readonly ok: true; readonly rule: RuleDefinition; readonly lists: string[] }
  | { readonly ok: false; readonly problems: RuleProblem[] };

/**
 * Field-level check of one rule record, its expressions parsed and type-checked; `lists`, the
 * project's list ids, makes in_list() of any other id a problem.
 */
export function validate({ input, lists }: { input: unknown; lists: string[] }): ValidateOutcome {
  return validateRuleDefinition(input, { lists });
}

/** Compiles a whole ruleset (the drafts of a project), its in_list() ids checked against `lists`. */
export function compile({ rules, lists }: { rules: RuleDefinition[]; lists: string[] }): CompileResult {
  return compileRuleset(rules, { lists });
}

export type RuleListsOutcome =
  | { readonly ok: true; readonly lists: Record<string, string[]> }
  | { readonly ok: false; readonly errors: RuleDiagnostic[] };

/**
 * The lists each of `rules` reads, by rule id, in_list() ids checked against `lists`. For archived
 * rules, which compileRuleset skips (it compiles only what scores) but whose lists stay in use
 * (docs/lists.md): a restore saves them without compiling them.
 */
export function ruleLists({ rules, lists }: { rules: RuleDefinition[]; lists: string[] }): RuleListsOutcome {
  const read: Record<string, string[]> = {};
  const errors: RuleDiagnostic[] = [];
  for (const rule of rules) {
    const checked = validateRuleDefinition(rule, { lists });
    if (checked.ok) read[rule.rule_id] = checked.lists;
    else for (const problem of checked.problems) errors.push({ rule_id: rule.rule_id, field: problem.field, message: problem.message, position: null });
  }
  return errors.length === 0 ? { ok: true, lists: read } : { ok: false, errors };
}

export type NormalizeOutcome =
  | { readonly ok: true; readonly values: string[] }
  /** The first value that is not one of the kind, by its index. */
  | { readonly ok: false; readonly index: number; readonly message: string };

/** List values normalised by the list's kind (list-kinds.ts), all or the first refusal. */
export function normalizeListValues({ kind, values }: { kind: ListKind; values: unknown[] }): NormalizeOutcome {
  const out: string[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const normalized = normalizeListItem(kind, values[i]);
    if (!normalized.ok) return { ok: false, index: i, message: normalized.message };
    out[i] = normalized.value;
  }
  return { ok: true, values: out };
}
