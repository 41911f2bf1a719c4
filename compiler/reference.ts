// The reference evaluation of a ruleset with cel-js's own interpreter: the
// oracle the differential tests hold the compiled function to, and the
// "cel-js" engine of the benchmark. Slow on purpose (it is the specification),
// not exported from index.ts.
//
// How our inputs are presented to cel-js so that its semantics are ours
// (docs/rules.md, "Differences from cel-js"):
//   - an absent group or `extras` is an empty object, so `user.email` raises
//     no_such_key (absent) rather than "unknown variable";
//   - members that are null are dropped: null reads as absent;
//   - declared int fields become BigInt (cel-js ints), timestamps Date;
//     values of the wrong type are passed unchanged so cel-js rejects them;
//   - numbers in dyn data stay doubles, as JSON numbers are in CEL.

import type { ParseResult } from '@marcbachmann/cel-js';
import { collectOpenMembers, environmentFor, parsingEnvironment, setReferenceLists } from './environment.js';
import { parseTimestamp } from './runtime/index.js';
import { kExtras, kGroups, kScalars } from './schema.js';
import type { BreakdownEntry, RuleDefinition, RulesetInput, RulesetOutcome, ShadowOutcome } from './types.js';

/** How a cel-js error counts: absent data, a type error (degraded), or other. */
export type ErrorClass = 'absent' | 'type' | 'other';

const kAbsentCodes = new Set(['no_such_key', 'unknown_variable', 'index_out_of_bounds']);
const kTypeCodes = new Set([
  'field_type_mismatch', 'no_such_overload', 'no_matching_overload', 'invalid_logical_operand',
  'invalid_condition_type', 'list_item_type_mismatch', 'variable_type_mismatch', 'invalid_comprehension_range',
  'unsupported_type', 'invalid_list_element_type', 'invalid_index_type',
]);

export function classifyError(err: unknown): ErrorClass {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && kAbsentCodes.has(code)) return 'absent';
  if (typeof code === 'string' && kTypeCodes.has(code)) return 'type';
  return 'other';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON data as cel-js sees dyn values: null members dropped. */
function dynValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dynValue);
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) Object.defineProperty(out, k, { value: dynValue(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

function groupValue(raw: unknown, fields: Readonly<Record<string, string>>): unknown {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === null || v === undefined) continue;
    let x: unknown;
    switch (Object.hasOwn(fields, k) ? fields[k] : 'dyn') {
      case 'int':
        x = typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v;
        break;
      case 'timestamp': {
        const ms = typeof v === 'string' ? parseTimestamp(v) : NaN;
        x = ms === ms ? new Date(ms) : v;
        break;
      }
      case 'dyn':
        x = dynValue(v);
        break;
      default:
        x = v;
    }
    Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The cel-js evaluation context for a ruleset input. */
export function celContext(input: RulesetInput): Record<string, unknown> {
  // in_list() answers from the input's lists (evaluation is synchronous: one input at a time).
  setReferenceLists(input.lists ?? null);
  const event = isPlainObject(input.event) ? input.event : {};
  const signals = isPlainObject(input.signals) ? (input.signals as Record<string, unknown>) : {};
  const ctx: Record<string, unknown> = {};
  for (const s of kScalars) {
    if (s.source === 'now') {
      if (typeof input.now === 'number' && Number.isFinite(input.now)) ctx.now = new Date(input.now);
    } else if (event[s.name] !== undefined && event[s.name] !== null) ctx[s.name] = event[s.name];
  }
  for (const g of kGroups) ctx[g.name] = groupValue((g.source === 'event' ? event : signals)[g.name], g.fields);
  const extras = event[kExtras.name];
  ctx[kExtras.name] = extras === undefined || extras === null ? {} : dynValue(extras);
  return ctx;
}

/** A parsed, checked expression ready for cel-js evaluation. */
export function parseReference(source: string): ParseResult {
  const env = environmentFor(collectOpenMembers(parsingEnvironment().parse(source).ast));
  const parsed = env.parse(source);
  const checked = parsed.check();
  if (!checked.valid) throw checked.error ?? new Error('invalid expression');
  homogeneousEquality(parsed.ast);
  return parsed;
}

// ---------------------------------------------------------------------------
// Homogeneous equality (docs/rules.md, "Differences from cel-js"). cel-js answers false for
// `==` between values of different kinds ('yes' == true); our rules answer a type error, as
// cel-go's homogeneous equality does, so a wrong-typed value makes the rule degraded. The
// checked AST's `==`, `!=` and `in` nodes are wrapped: the values are checked here, on cel-js's
// own value model, and cel-js computes the answer when they can be compared.

type Kind = 'num' | 'string' | 'bool' | 'null' | 'list' | 'map' | 'ts' | 'dur' | 'other';

function kindOfCel(v: unknown): Kind {
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 'num';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'object':
      if (v === null) return 'null';
      if (Array.isArray(v) || v instanceof Set) return 'list';
      if (v instanceof Date) return 'ts';
      if (v instanceof Map) return 'map';
      // cel-js durations are objects with seconds and nanos.
      if ('seconds' in v && 'nanos' in v && Object.getPrototypeOf(v) !== Object.prototype) return 'dur';
      return 'map';
    default:
      return 'other';
  }
}

function entriesOfCel(v: unknown): [string, unknown][] {
  return v instanceof Map ? [...(v as Map<string, unknown>).entries()] : Object.entries(v as object);
}

/** true, false, or 'type' when a pair of values of different kinds decides first (cel-go's order). */
function strictEqual(a: unknown, b: unknown): boolean | 'type' {
  const x = kindOfCel(a);
  const y = kindOfCel(b);
  if (x === 'null' || y === 'null') return x === y;
  if (x !== y) return 'type';
  switch (x) {
    case 'num':
      return Number(a) === Number(b);
    case 'list': {
      const l = [...(a as Iterable<unknown>)];
      const r = [...(b as Iterable<unknown>)];
      if (l.length !== r.length) return false;
      for (let i = 0; i < l.length; i++) {
        const e = strictEqual(l[i], r[i]);
        if (e !== true) return e;
      }
      return true;
    }
    case 'map': {
      const l = entriesOfCel(a);
      const r = new Map(entriesOfCel(b));
      if (l.length !== r.size) return false;
      for (const [k, v] of l) {
        if (!r.has(k)) return false;
        const e = strictEqual(v, r.get(k));
        if (e !== true) return e;
      }
      return true;
    }
    case 'ts':
      return (a as Date).getTime() === (b as Date).getTime();
    case 'dur':
      return String(a) === String(b);
    default:
      return a === b;
  }
}

function typeMismatch(op: string): Error {
  return Object.assign(new Error(`no such overload: values of different types for ${op}`), { code: 'no_such_overload' });
}

type Handle = (a: unknown, b: unknown, ast: unknown, ev: unknown) => unknown;

function homogeneousEquality(root: unknown): void {
  const seen = new Set<object>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const n = node as { op?: unknown; handle?: unknown };
    if ((n.op === '==' || n.op === '!=' || n.op === 'in') && typeof n.handle === 'function') {
      const original = n.handle as Handle;
      const op = n.op;
      n.handle = (a: unknown, b: unknown, ast: unknown, ev: unknown): unknown => {
        if (op === 'in') {
          const k = kindOfCel(b);
          if (k === 'map' && typeof a !== 'string') throw typeMismatch(op);
          if (k === 'list') {
            let mismatch = false;
            for (const e of b as Iterable<unknown>) {
              const r = strictEqual(a, e);
              if (r === true) return original(a, b, ast, ev);
              if (r === 'type') mismatch = true;
            }
            if (mismatch) throw typeMismatch(op);
          }
        } else if (strictEqual(a, b) === 'type') throw typeMismatch(op);
        return original(a, b, ast, ev);
      };
    }
    for (const v of Object.values(node)) visit(v);
  };
  visit(root);
}

/** Evaluates to true, false, or the class of error (a non-bool result is a type error). */
export function evaluateReference(parsed: ParseResult, ctx: Record<string, unknown>): boolean | ErrorClass {
  try {
    const v: unknown = parsed(ctx);
    if (typeof v === 'boolean') return v;
    return v === null ? 'absent' : 'type';
  } catch (err) {
    return classifyError(err);
  }
}

interface ReferenceRule {
  readonly def: RuleDefinition;
  readonly expression: ParseResult;
  readonly bands: readonly { label: string; delta: number; parsed: ParseResult }[];
}

/** A whole ruleset evaluated by cel-js, with the semantics of compileRuleset. */
export class ReferenceRuleset {
  readonly #rules: readonly ReferenceRule[];
  readonly #shadow: readonly ReferenceRule[];
  readonly #active: readonly ReferenceRule[];
  readonly maxPossible: number;

  constructor(rules: readonly RuleDefinition[]) {
    this.#rules = rules
      .filter((r) => r.status !== 'archived')
      .map((def) => ({
        def,
        expression: parseReference(def.expression),
        bands: (def.bands ?? [{ band: 'match', expression: 'true', score_delta: def.score_delta }]).map((b) => ({
          label: b.band,
          delta: def.kind === 'scoring' ? b.score_delta : 0,
          parsed: parseReference(b.expression),
        })),
      }));
    this.#shadow = this.#rules.filter((r) => r.def.status === 'shadow');
    this.#active = (['trust', 'hard_block', 'scoring', 'monitoring'] as const).flatMap((kind) =>
      this.#rules.filter((r) => r.def.status === 'active' && r.def.kind === kind),
    );
    this.maxPossible = this.#rules
      .filter((r) => r.def.status === 'active' && r.def.kind === 'scoring')
      .reduce((sum, r) => sum + Math.max(0, ...r.bands.map((b) => b.delta)), 0);
  }

  /** Band index when matched, -1 when not, -2 when degraded. */
  static evaluateRule(rule: ReferenceRule, ctx: Record<string, unknown>): number {
    const v = evaluateReference(rule.expression, ctx);
    if (v !== true) return v === 'type' ? -2 : -1;
    let degraded = false;
    for (const [i, band] of rule.bands.entries()) {
      const b = evaluateReference(band.parsed, ctx);
      if (b === true) return i;
      if (b === 'type') degraded = true;
    }
    return degraded ? -2 : -1;
  }

  evaluate(input: RulesetInput): RulesetOutcome {
    const ctx = celContext(input);
    const shadow: ShadowOutcome[] = [];
    for (const rule of this.#shadow) {
      const r = ReferenceRuleset.evaluateRule(rule, ctx);
      const band = r >= 0 ? rule.bands[r] : undefined;
      shadow.push({
        rule_id: rule.def.rule_id, rule_version: rule.def.version, kind: rule.def.kind, matched: band !== undefined,
        band: band?.label ?? null, score_delta: band?.delta ?? 0, degraded: r === -2,
      });
    }
    const degraded: string[] = [];
    const breakdown: BreakdownEntry[] = [];
    const flags: string[] = [];
    const actions: string[] = [];
    let score = 0;
    const entry = (rule: ReferenceRule, r: number): BreakdownEntry => {
      const band = r >= 0 ? rule.bands[r] : undefined;
      const e: BreakdownEntry = {
        rule_id: rule.def.rule_id, rule_version: rule.def.version, score_delta: band?.delta ?? 0,
        band: band?.label ?? null, matched: band !== undefined, reason: rule.def.rule_id,
      };
      if (band !== undefined && rule.def.action !== null) e.action = rule.def.action;
      return e;
    };
    for (const rule of this.#active) {
      const kind = rule.def.kind;
      const r = ReferenceRuleset.evaluateRule(rule, ctx);
      if (r >= 0 && (kind === 'trust' || kind === 'hard_block')) {
        return {
          trust_override: kind === 'trust', hard_block_hit: kind === 'hard_block',
          score: kind === 'trust' ? 0 : this.maxPossible, max_possible: this.maxPossible,
          breakdown: [entry(rule, r)], flags: [], actions: rule.def.action === null ? [] : [rule.def.action],
          degraded, shadow, over_budget: false,
        };
      }
      breakdown.push(entry(rule, r));
      if (r === -2) degraded.push(rule.def.rule_id);
      if (r < 0) continue;
      score += rule.bands[r]?.delta ?? 0;
      if (kind === 'monitoring') flags.push(rule.def.rule_id);
      if (rule.def.action !== null && !actions.includes(rule.def.action)) actions.push(rule.def.action);
    }
    return {
      trust_override: false, hard_block_hit: false, score, max_possible: this.maxPossible,
      breakdown, flags, actions, degraded, shadow, over_budget: false,
    };
  }
}
