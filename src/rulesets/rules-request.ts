// The rules API's request checks and error mapping (DESIGN §3, docs/rules-api.md). Pure: bodies and
// query strings in, values or the VALIDATION_ERROR naming the parameter out. Field-level checks of
// a rule record (and its expressions) are the compiler's validateRuleDefinition; this module adds
// what belongs to the API around it: fields the service sets, the path/body rule_id, the optimistic
// `version`, the policy bounds, and the mapping of compiler problems and diagnostics to errors.
import type { RuleDiagnostic, RuleProblem } from '../../compiler/index.js';
import { apiError, type ApiError } from '../shared/errors.js';
import { unknownOrRepeatedParameter } from '../shared/query.js';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiError };

/** Highest threshold a policy may set (and the bound on both thresholds: 0 ≤ review ≤ block ≤ this). */
export const kMaxThreshold = 1_000_000;

/** Page size of GET /v1/rulesets: published rulesets carry every rule, so pages stay small. */
export const kDefaultRulesetPage = 20;
export const kMaxRulesetPage = 100;

/** rule_ids the routes make unreachable: /v1/rules/publish and /v1/rules/backtests are routes of their own. */
export const kReservedRuleIds: readonly string[] = ['publish', 'backtests'];

/** Fields of the records that the service sets: a client may not send them (except `version` on replace). */
const kServiceFields = ['created_at', 'updated_at', 'changed_at', 'changed_by'] as const;

function invalid(parameter: string, message: string): { ok: false; error: ApiError } {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, parameter) };
}

function serviceFieldError(body: Readonly<Record<string, unknown>>): { ok: false; error: ApiError } | null {
  for (const field of kServiceFields) {
    if (Object.hasOwn(body, field)) return invalid(field, `${field} is set by the service and cannot be sent.`);
  }
  return null;
}

/** The body of POST /v1/rules, to be checked by validateRuleDefinition. */
export function parseCreateRule(body: Readonly<Record<string, unknown>>): Checked<Record<string, unknown>> {
  const refusal = serviceFieldError(body);
  if (refusal !== null) return refusal;
  // A new rule is version 1; accepting a client's number would make versions mean nothing.
  if (Object.hasOwn(body, 'version')) return invalid('version', 'version is set by the service: a new rule starts at version 1.');
  // /v1/rules/publish and /v1/rules/backtests are routes: a rule of either name could never be read or replaced.
  if (typeof body.rule_id === 'string' && kReservedRuleIds.includes(body.rule_id)) {
    return invalid('rule_id', `${body.rule_id} is reserved (POST /v1/rules/${body.rule_id}); choose another rule_id.`);
  }
  return { ok: true, value: { ...body } };
}

export interface ReplaceRule {
  /** The record to check, with rule_id from the path and without `version`. */
  readonly record: Record<string, unknown>;
  /** The version the caller last read, when given: the change applies only on top of it. */
  readonly expectedVersion: number | null;
}

/** The body of PUT /v1/rules/{rule_id}. */
export function parseReplaceRule(body: Readonly<Record<string, unknown>>, pathRuleId: string): Checked<ReplaceRule> {
  const refusal = serviceFieldError(body);
  if (refusal !== null) return refusal;
  if (Object.hasOwn(body, 'rule_id') && body.rule_id !== pathRuleId) {
    return invalid('rule_id', 'rule_id in the body must be the rule_id of the path, or be left out. A rule cannot be renamed.');
  }
  const expected = parseExpectedVersion(body.version);
  if (!expected.ok) return expected;
  const { version: _version, ...rest } = body;
  return { ok: true, value: { record: { ...rest, rule_id: pathRuleId }, expectedVersion: expected.value } };
}

/** `version` in a replace body: absent or null (no check) or the positive integer last read. */
function parseExpectedVersion(value: unknown): Checked<number | null> {
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    return invalid('version', 'version must be the integer version you last read (or be left out).');
  }
  return { ok: true, value };
}

/** The error for a rule whose current version is not the one the caller sent. */
export function versionMismatch(what: string, expected: number, current: number): ApiError {
  return apiError(
    'VALIDATION_ERROR',
    `version ${expected} is not the current version of ${what} (${current}): it changed since you read it. Read it again and apply your change to that version.`,
    'version',
  );
}

/** Problems listed in full in one message; the rest are counted. */
export const kMaxListedProblems = 10;

/**
 * Problems as one message, every one with its field ("kind: must be one of ...; expression: line
 * 1, column 5: ..."): the envelope carries one error per failure, whose `parameter` names the first.
 */
function listProblems(problems: ReadonlyArray<{ readonly parameter: string; readonly message: string }>): string {
  const listed = problems.slice(0, kMaxListedProblems).map((problem) => `${problem.parameter}: ${problem.message}`);
  const unlisted = problems.length - listed.length;
  return `${listed.join('; ')}${unlisted > 0 ? `; and ${unlisted} more` : ''}.`;
}

/** A rule record's problems (validateRuleDefinition), all of them, as one error naming the first field. */
export function ruleProblemsError(problems: readonly RuleProblem[]): ApiError {
  const named = problems.map((problem) => ({ parameter: problem.field === '' ? 'body' : problem.field, message: problem.message }));
  if (named.length === 0) named.push({ parameter: 'body', message: 'is not a valid rule' });
  return apiError('VALIDATION_ERROR', listProblems(named), named[0]!.parameter);
}

/** Dotted path of a diagnostic inside the ruleset: rules.<rule_id>.<field>. */
export function diagnosticParameter(diagnostic: RuleDiagnostic): string {
  if (diagnostic.rule_id === '') return diagnostic.field === '' ? 'rules' : diagnostic.field;
  return diagnostic.field === '' ? `rules.${diagnostic.rule_id}` : `rules.${diagnostic.rule_id}.${diagnostic.field}`;
}

/** The compile errors of a publish as one error naming the first rule and field (messages with their positions). */
export function publishDiagnosticsError(diagnostics: readonly RuleDiagnostic[]): ApiError {
  const named = diagnostics.map((diagnostic) => ({ parameter: diagnosticParameter(diagnostic), message: diagnostic.message }));
  if (named.length === 0) named.push({ parameter: 'rules', message: 'the ruleset does not compile' });
  return apiError('VALIDATION_ERROR', `${listProblems(named)} Nothing was published.`, named[0]!.parameter);
}

/**
 * The body of POST /v1/rules/publish (and of POST /v1/rulesets/{version}/restore, `request`
 * 'restore'): optional, and when sent an empty object (room for options later).
 */
export function parsePublishBody(body: Readonly<Record<string, unknown>> | null, request: 'publish' | 'restore' = 'publish'): ApiError | null {
  const field = body === null ? undefined : Object.keys(body)[0];
  return field === undefined ? null : apiError('VALIDATION_ERROR', `${field} is not a field of a ${request} request; send no body or {}.`, field);
}

export interface PolicyChange {
  readonly review_threshold: number;
  readonly block_threshold: number;
  readonly expectedVersion: number | null;
}

const kPolicyFields = new Set(['review_threshold', 'block_threshold', 'version']);

/** The body of PUT /v1/policy: both thresholds, integers, 0 ≤ review ≤ block ≤ kMaxThreshold. */
export function parsePolicy(body: Readonly<Record<string, unknown>>): Checked<PolicyChange> {
  const refusal = serviceFieldError(body);
  if (refusal !== null) return refusal;
  for (const field of Object.keys(body)) {
    if (!kPolicyFields.has(field)) return invalid(field, `${field} is not a field of the policy.`);
  }
  const thresholds: Record<'review_threshold' | 'block_threshold', number> = { review_threshold: 0, block_threshold: 0 };
  for (const field of ['review_threshold', 'block_threshold'] as const) {
    const value = body[field];
    if (value === undefined) return invalid(field, `${field} is required.`);
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > kMaxThreshold) {
      return invalid(field, `${field} must be an integer from 0 to ${kMaxThreshold}.`);
    }
    thresholds[field] = value;
  }
  if (thresholds.review_threshold > thresholds.block_threshold) {
    return invalid('review_threshold', 'review_threshold must not be above block_threshold.');
  }
  const expected = parseExpectedVersion(body.version);
  if (!expected.ok) return expected;
  return { ok: true, value: { ...thresholds, expectedVersion: expected.value } };
}

function queryParameters(query: string, allowed: ReadonlySet<string>): Checked<URLSearchParams> {
  const params = new URLSearchParams(query);
  const refused = unknownOrRepeatedParameter(params, allowed);
  return refused === null ? { ok: true, value: params } : { ok: false, error: refused };
}

const kNoParameters = new Set<string>();
const kRuleParameters = new Set(['history']);
const kRulesetListParameters = new Set(['limit', 'before']);

/** Routes without query parameters refuse any, so that a misspelt filter is not silently ignored. */
export function parseNoQuery(query: string): ApiError | null {
  const params = queryParameters(query, kNoParameters);
  return params.ok ? null : params.error;
}

/** GET /v1/rules/{rule_id}: `history=true` adds every version of the rule. */
export function parseRuleQuery(query: string): Checked<{ history: boolean }> {
  const params = queryParameters(query, kRuleParameters);
  if (!params.ok) return params;
  const history = params.value.get('history');
  if (history !== null && history !== 'true' && history !== 'false') return invalid('history', 'history must be true or false.');
  return { ok: true, value: { history: history === 'true' } };
}

export interface RulesetListQuery {
  readonly limit: number;
  /** Only versions below this one (the next_before of the previous page); null: from the newest. */
  readonly before: number | null;
}

const kPositiveInteger = /^[1-9][0-9]{0,14}$/;

export function parseRulesetListQuery(query: string): Checked<RulesetListQuery> {
  const params = queryParameters(query, kRulesetListParameters);
  if (!params.ok) return params;
  const rawLimit = params.value.get('limit');
  let limit = kDefaultRulesetPage;
  if (rawLimit !== null) {
    if (!kPositiveInteger.test(rawLimit) || Number(rawLimit) > kMaxRulesetPage) return invalid('limit', `limit must be an integer from 1 to ${kMaxRulesetPage}.`);
    limit = Number(rawLimit);
  }
  const rawBefore = params.value.get('before');
  if (rawBefore !== null && !kPositiveInteger.test(rawBefore)) return invalid('before', 'before must be a ruleset version (a positive integer).');
  return { ok: true, value: { limit, before: rawBefore === null ? null : Number(rawBefore) } };
}

/** The {version} of GET /v1/rulesets/{version}. */
export function parseRulesetVersion(raw: string): Checked<number> {
  if (!kPositiveInteger.test(raw)) return invalid('version', 'version must be a ruleset version (a positive integer).');
  return { ok: true, value: Number(raw) };
}
