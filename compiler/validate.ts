// Field-level validation of a rule record as it arrives from the rules API.
// Pure; collects every problem instead of stopping at the first.

import { FunctionFrame, RulesetScope } from './ir.js';
import { compileExpression, ruleCostProblem } from './expression.js';
import {
  kBandPattern, kMaxAbsDelta, kMaxBands, kMaxDescriptionLength, kRuleIdPattern,
} from './limits.js';
import type { RuleBand, RuleDefinition, RuleKind, RuleProblem, RuleStatus } from './types.js';
import { characterLength } from '../src/shared/text.js';

export const kRuleKinds: readonly RuleKind[] = ['trust', 'hard_block', 'scoring', 'monitoring'];
export const kRuleStatuses: readonly RuleStatus[] = ['active', 'shadow', 'archived'];
export const kActionPattern = /^require_kyc:(phone|document|liveness|sanctions|pep)$/;

const kRuleFields = new Set([
  'rule_id', 'kind', 'status', 'expression', 'score_delta', 'bands', 'action', 'description', 'version',
]);
const kBandFields = new Set(['band', 'expression', 'score_delta']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkDelta(v: unknown, field: string, problems: RuleProblem[]): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    problems.push({ field, message: 'must be an integer' });
    return 0;
  }
  if (Math.abs(v) > kMaxAbsDelta) problems.push({ field, message: `must be between -${kMaxAbsDelta} and ${kMaxAbsDelta}` });
  return v;
}

/**
 * Checks the record's fields without compiling its expressions. Missing
 * optional fields get their defaults: score_delta 0, bands null, action null,
 * description '', version 1.
 */
export function validateRecord(input: unknown): { rule: RuleDefinition | null; problems: RuleProblem[] } {
  const problems: RuleProblem[] = [];
  if (!isPlainObject(input)) return { rule: null, problems: [{ field: '', message: 'a rule must be a JSON object' }] };
  for (const key of Object.keys(input)) {
    if (!kRuleFields.has(key)) problems.push({ field: key, message: 'unknown property' });
  }

  const ruleId = input.rule_id;
  if (typeof ruleId !== 'string' || !kRuleIdPattern.test(ruleId)) {
    problems.push({ field: 'rule_id', message: 'must match [a-z][a-z0-9_]{0,63}' });
  }
  const kind = input.kind;
  if (!kRuleKinds.includes(kind as RuleKind)) problems.push({ field: 'kind', message: `must be one of ${kRuleKinds.join(', ')}` });
  const status = input.status;
  if (!kRuleStatuses.includes(status as RuleStatus)) {
    problems.push({ field: 'status', message: `must be one of ${kRuleStatuses.join(', ')}` });
  }
  if (typeof input.expression !== 'string') problems.push({ field: 'expression', message: 'must be a string' });

  const scoring = kind === 'scoring';
  const knownKind = kRuleKinds.includes(kind as RuleKind);
  const hasBands = input.bands !== undefined && input.bands !== null;
  const scoreDelta = input.score_delta === undefined ? 0 : checkDelta(input.score_delta, 'score_delta', problems);
  if (scoreDelta !== 0 && knownKind && !scoring) problems.push({ field: 'score_delta', message: 'must be 0 for a rule that is not a scoring rule' });
  if (scoreDelta !== 0 && scoring && hasBands) {
    problems.push({ field: 'score_delta', message: 'must be 0 when the rule has bands: the matching band gives the delta' });
  }

  let bands: RuleBand[] | null = null;
  if (hasBands) {
    if (!Array.isArray(input.bands)) problems.push({ field: 'bands', message: 'must be an array or null' });
    else if (input.bands.length === 0 || input.bands.length > kMaxBands) {
      problems.push({ field: 'bands', message: `must have 1 to ${kMaxBands} bands (or be null)` });
    } else {
      bands = [];
      const seen = new Set<string>();
      input.bands.forEach((b: unknown, i: number) => {
        const at = `bands[${i}]`;
        if (!isPlainObject(b)) {
          problems.push({ field: at, message: 'must be an object with band, expression and score_delta' });
          return;
        }
        for (const key of Object.keys(b)) {
          if (!kBandFields.has(key)) problems.push({ field: `${at}.${key}`, message: 'unknown property' });
        }
        if (typeof b.band !== 'string' || !kBandPattern.test(b.band)) {
          problems.push({ field: `${at}.band`, message: 'must match [a-z][a-z0-9_]{0,31}' });
        } else if (seen.has(b.band)) {
          problems.push({ field: `${at}.band`, message: `duplicate band '${b.band}'` });
        } else seen.add(b.band);
        if (typeof b.expression !== 'string') problems.push({ field: `${at}.expression`, message: 'must be a string' });
        const delta = checkDelta(b.score_delta, `${at}.score_delta`, problems);
        if (delta !== 0 && knownKind && !scoring) {
          problems.push({ field: `${at}.score_delta`, message: 'must be 0 for a rule that is not a scoring rule' });
        }
        bands?.push({ band: b.band as string, expression: b.expression as string, score_delta: delta });
      });
    }
  }

  const action = input.action ?? null;
  if (action !== null && (typeof action !== 'string' || !kActionPattern.test(action))) {
    problems.push({ field: 'action', message: 'must be null or require_kyc:<phone|document|liveness|sanctions|pep>' });
  }
  const description = input.description ?? '';
  if (typeof description !== 'string' || characterLength(description) > kMaxDescriptionLength) {
    problems.push({ field: 'description', message: `must be a string of at most ${kMaxDescriptionLength} characters` });
  }
  const version = input.version ?? 1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    problems.push({ field: 'version', message: 'must be an integer >= 1' });
  }

  if (problems.length > 0) return { rule: null, problems };
  return {
    rule: {
      rule_id: ruleId as string,
      kind: kind as RuleKind,
      status: status as RuleStatus,
      expression: input.expression as string,
      score_delta: scoreDelta,
      bands,
      action: action as string | null,
      description: description as string,
      version: version as number,
    },
    problems,
  };
}

/** Options of validateRuleDefinition. */
export interface ValidateOptions {
  /** The ids of the project's lists: in_list() of any other id is a problem. Left out: not checked. */
  readonly lists?: readonly string[];
}

/**
 * Field-level validation of a rule record as it arrives from the API, with
 * the expressions parsed, type-checked and lowered for early feedback. A valid
 * rule comes back with the sorted ids of the lists it reads.
 */
export function validateRuleDefinition(
  input: unknown,
  options: ValidateOptions = {},
): { ok: true; rule: RuleDefinition; lists: string[] } | { ok: false; problems: RuleProblem[] } {
  const { rule, problems } = validateRecord(input);
  const record = isPlainObject(input) ? input : {};
  // Expressions are checked even when other fields are wrong: drafts get all feedback at once.
  const scope = new RulesetScope(options.lists === undefined ? null : new Set(options.lists));
  const costs: { field: string; cost: number }[] = [];
  const check = (source: unknown, field: string): void => {
    if (typeof source !== 'string') return;
    const r = compileExpression(source, scope, new FunctionFrame());
    if (!r.ok) problems.push({ field, message: r.problem.message });
    else costs.push({ field, cost: r.cost });
  };
  check(record.expression, 'expression');
  if (Array.isArray(record.bands)) {
    record.bands.forEach((b: unknown, i: number) => {
      if (isPlainObject(b)) check(b.expression, `bands[${i}].expression`);
    });
  }
  const tooCostly = ruleCostProblem(costs.map((c) => c.cost));
  if (tooCostly !== null) problems.push({ field: costs[tooCostly.index]?.field ?? 'expression', message: tooCostly.message });
  if (problems.length > 0 || rule === null) return { ok: false, problems };
  return { ok: true, rule, lists: [...scope.lists].sort() };
}
