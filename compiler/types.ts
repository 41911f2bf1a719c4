// Public types of the compiler (the contract the service codes against).

import type { Signals } from './signals.js';

export type RuleKind = 'trust' | 'hard_block' | 'scoring' | 'monitoring';
export type RuleStatus = 'active' | 'shadow' | 'archived';

/** One band of a banded rule: first band whose expression is true wins. */
export interface RuleBand {
  band: string;
  expression: string;
  score_delta: number;
}

/** A rule record. */
export interface RuleDefinition {
  /** `[a-z][a-z0-9_]{0,63}`, unique in the project. */
  rule_id: string;
  kind: RuleKind;
  status: RuleStatus;
  /** CEL, must be bool. */
  expression: string;
  /** Integer, may be negative; meaningful for scoring rules without bands, 0 otherwise. */
  score_delta: number;
  /** Ordered, first match wins; null: the rule has the single band "match". */
  bands: RuleBand[] | null;
  /** null or require_kyc:<phone|document|liveness|sanctions|pep>. */
  action: string | null;
  description: string;
  /** Integer >= 1, incremented on every change. */
  version: number;
}

/** A field-level problem of a rule record ('rule_id', 'bands[1].score_delta', ...). */
export interface RuleProblem {
  field: string;
  message: string;
}

/** A compile error of a ruleset, naming the rule and the field. */
export interface RuleDiagnostic {
  rule_id: string;
  /** 'expression', 'bands[0].expression', 'rule_id', ... */
  field: string;
  /** Includes the position, e.g. "line 1, column 14: ...". */
  message: string;
  /** 1-based line and column, 0-based offset; null when not about a position. */
  position: { line: number; column: number; offset: number } | null;
}

/** What compileRuleset produces; stored with the ruleset version. */
export interface RulesetArtifact {
  /** JavaScript source, built only from escaped literals and known identifiers. */
  source: string;
  /** Sum over active scoring rules of their largest positive delta. */
  max_possible: number;
  /** Sorted dotted paths of computed signals read; a group read dynamically is listed whole. */
  signals: string[];
  /** The compiled (non-archived) rules, in evaluation order. */
  rules: Array<{ rule_id: string; version: number; kind: RuleKind; status: RuleStatus; lists: string[] }>;
  /** Sorted ids of the lists the compiled rules read with in_list(). */
  lists: string[];
}

export type CompileResult = { ok: true; artifact: RulesetArtifact } | { ok: false; errors: RuleDiagnostic[] };

/**
 * The project's block and allow lists, as in_list() reads them. The service implements it (the
 * compiler knows list ids only): `has` normalises `value` by the list's kind and answers whether
 * the list holds it, or null when the project has no list `listId` (the rule then cannot match).
 */
export interface ListLookup {
  has(listId: string, value: string): boolean | null;
  /**
   * Budget units a lookup in `listId` costs beyond the pass over the value (the service's lookups
   * cost what the list's kind makes them); absent: none.
   */
  lookupUnits?(listId: string): number;
}

export interface RulesetInput {
  /** The validated event body (JSON). */
  event: Record<string, unknown>;
  /** Computed signals; a missing group or member reads as absent. */
  signals: Partial<Signals>;
  /** Epoch milliseconds, the value of `now`. */
  now: number;
  /** The project's lists; needed only by rulesets that call in_list() (artifact.lists). */
  lists?: ListLookup;
}

export interface BreakdownEntry {
  rule_id: string;
  rule_version: number;
  /** Applied delta: 0 when not matched or not a scoring rule. */
  score_delta: number;
  /** null when not matched. */
  band: string | null;
  matched: boolean;
  /** Equals rule_id. */
  reason: string;
  /** Only when matched and the rule has an action. */
  action?: string;
}

export interface ShadowOutcome {
  rule_id: string;
  rule_version: number;
  kind: RuleKind;
  matched: boolean;
  band: string | null;
  score_delta: number;
  degraded: boolean;
}

export interface RulesetOutcome {
  trust_override: boolean;
  hard_block_hit: boolean;
  /** Raw sum of matched active scoring deltas (not floored); 0 on trust; max_possible on hard block. */
  score: number;
  max_possible: number;
  /** One per active rule in evaluation order; only the winning rule on trust or hard block. */
  breakdown: BreakdownEntry[];
  /** rule_ids of matched active monitoring rules. */
  flags: string[];
  /** Actions of matched active rules, deduplicated, in order. */
  actions: string[];
  /** Active rules that met a present value of the wrong type. */
  degraded: string[];
  /** Every shadow rule, always evaluated. */
  shadow: ShadowOutcome[];
  /**
   * The event spent its whole evaluation budget (kEventBudget): some rules
   * could not finish, so the outcome must not be used (docs/rules.md, "Limits").
   */
  over_budget: boolean;
}

export type RulesetFunction = (input: RulesetInput) => RulesetOutcome;
