// The only helpers generated ruleset code may call. loadRuleset() passes this
// module in as the `rt` parameter; emitted code never imports anything.
//
// Value model of emitted code (docs/rules.md, "How rules are evaluated"):
//   bool → boolean, int and double → number (IEEE doubles), string → string,
//   timestamp → epoch milliseconds, duration → milliseconds (may be fractional),
//   list → array, map → object, null → null.
// A CEL error is one of three symbols, so `typeof v === 'symbol'` tells any
// value from an error in one check, and JSON data can never look like one:
//   kAbsent    the value is absent (missing member, JSON null, index out of range)
//   kTypeError a present value of the wrong type: the rule is reported degraded
//   kEvalError any other failure (division by zero, overflow, bad conversion,
//              the event's evaluation budget spent)
//
// The budget (kEventBudget, docs/rules.md "Limits"): every operation whose
// work grows with its input spends from `budget.left` before it runs, in the
// units of the cost estimate (cost.ts), and answers kEvalError instead of
// running once the budget is gone. Emitted loops spend one unit per
// iteration. The ruleset function resets it per event and reports whether it
// ran out; evaluation is synchronous, so one counter per thread is enough.

import { RE2JS } from 're2js';
import { kEventBudget, kIntMax, kIntMin } from '../limits.js';
import { isWhiteSpace } from '../../src/shared/text.js';

export const kAbsent: unique symbol = Symbol('absent');
export const kTypeError: unique symbol = Symbol('type_error');
export const kEvalError: unique symbol = Symbol('eval_error');
export type CelError = typeof kAbsent | typeof kTypeError | typeof kEvalError;

// Runtime kinds. Emitted code passes the static kind of an operand when the
// checker knows it, and K_DYN when only the value can tell.
export const K_DYN = 0;
export const K_INT = 1;
export const K_DBL = 2;
export const K_STR = 3;
export const K_BOOL = 4;
export const K_NULL = 5;
export const K_LIST = 6;
export const K_MAP = 7;
export const K_TS = 8;
export const K_DUR = 9;

const A: typeof kAbsent = kAbsent;
const T: typeof kTypeError = kTypeError;
const X: typeof kEvalError = kEvalError;
const hasOwn = Object.hasOwn;
const isArray = Array.isArray;

/** What is left of the current event's evaluation budget (see above). */
export const budget: { left: number } = { left: kEventBudget };

/**
 * Units for one pass over a string or list of length n: cel-go's
 * StringTraversalCostFactor (0.1), never less than one. cost.ts estimates
 * with the same function, so what a rule spends never exceeds its estimate.
 */
export function traversal(n: number): number {
  // Math.floor, not `| 0`: an estimate's sizes pass 2^31 (a list of a million megabyte values), where
  // an int32 would wrap to a negative cost and let any rule through.
  return 1 + Math.floor(n / 10);
}

/** Spends `n` units; false when the budget is gone (the caller answers kEvalError). */
function spend(n: number): boolean {
  return (budget.left -= n) >= 0;
}

/** Shared stand-in for a missing event or signals object. */
export const kEmpty: Readonly<Record<string, unknown>> = Object.freeze(Object.create(null));

/** Top-level input object: anything that is not a plain object reads as empty. */
export function root(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !isArray(v) ? (v as Record<string, unknown>) : kEmpty;
}

/** A group (`user`, `velocity`, ...) or `extras`: an object, absent, or wrong-typed. */
export function grp(v: unknown): object | CelError {
  if (v === undefined || v === null) return A;
  return typeof v === 'object' && !isArray(v) ? v : T;
}

// Declared field readers: the value when it has the declared type, kAbsent for
// missing/null, kTypeError otherwise.
export function str(v: unknown): string | CelError {
  return typeof v === 'string' ? v : v === undefined || v === null ? A : T;
}
export function bool(v: unknown): boolean | CelError {
  return typeof v === 'boolean' ? v : v === undefined || v === null ? A : T;
}
export function int(v: unknown): number | CelError {
  if (typeof v === 'number') return Number.isInteger(v) ? v : T;
  return v === undefined || v === null ? A : T;
}
export function dbl(v: unknown): number | CelError {
  return typeof v === 'number' ? v : v === undefined || v === null ? A : T;
}
/** Timestamps arrive as RFC 3339 strings and are converted on read. */
export function ts(v: unknown): number | CelError {
  if (typeof v === 'string') {
    const ms = parseTimestamp(v);
    return ms === ms ? ms : T;
  }
  return v === undefined || v === null ? A : T;
}
/** `now` is epoch milliseconds. */
export function nowMs(v: unknown): number | CelError {
  return typeof v === 'number' && Number.isFinite(v) ? v : v === undefined || v === null ? A : T;
}

function forbidden(key: string): boolean {
  return key === '__proto__' || key === 'constructor' || key === 'prototype';
}

/**
 * Own-property read for open members, `extras` and dynamic data. Never follows
 * the prototype chain and refuses the three keys that lead to prototypes.
 */
export function own(o: object, key: string): unknown {
  if (forbidden(key) || !hasOwn(o, key)) return A;
  const v = (o as Record<string, unknown>)[key];
  return v === null || v === undefined ? A : v;
}

/**
 * Field selection on a dyn value: only maps have fields. A null reads as absent; a string, number,
 * bool or list has no fields: a type error, which makes the rule degraded (CEL: no such field).
 */
export function field(o: unknown, key: string): unknown {
  if (typeof o === 'object' && o !== null && !isArray(o)) return own(o, key);
  return o === null || o === undefined ? A : T;
}

/** The runtime kind of a value whose static kind is `k` (K_DYN: look at it). */
export function kindOf(v: unknown, k: number): number {
  if (k !== K_DYN) return k;
  switch (typeof v) {
    case 'number':
      return K_DBL; // JSON numbers are doubles in CEL (google.protobuf.Value)
    case 'string':
      return K_STR;
    case 'boolean':
      return K_BOOL;
    case 'object':
      return v === null ? K_NULL : isArray(v) ? K_LIST : K_MAP;
    default:
      return K_DYN;
  }
}

function numeric(k: number): boolean {
  return k === K_INT || k === K_DBL;
}

/** The error for a value that has no overload: null is absent, the rest a type error. */
export function wrong(v: unknown): CelError {
  return v === null ? A : typeof v === 'symbol' ? (v as CelError) : T;
}

/** A logical operand: booleans and errors pass, null is absent, the rest a type error. */
export function lnorm(v: unknown): boolean | CelError {
  if (typeof v === 'boolean' || typeof v === 'symbol') return v as boolean | CelError;
  return v === null ? A : T;
}

/**
 * CEL equality on operands the checker could not type alike (a dyn side, lists, maps): true,
 * false, or kTypeError when the two values are of kinds that cannot be compared — a string
 * against a bool, a number against a string, a list against a map. Ints equal doubles; null is
 * never the wrong type (it only equals null). This is cel-go's homogeneous equality, not
 * cel-js's heterogeneous one (which answers false): a wrong-typed value makes the rule degraded,
 * as the ordering operators do (docs/rules.md, "Missing data, wrong types and degraded").
 * Lists and maps compare member by member, in order; the first pair that is unequal or
 * mismatched decides (cel-go's baseList.Equal).
 */
export function eq(a: unknown, b: unknown, ka: number, kb: number): boolean | typeof kTypeError {
  const x = kindOf(a, ka);
  const y = kindOf(b, kb);
  if (numeric(x) && numeric(y)) return a === b;
  if (x === K_NULL || y === K_NULL) return x === y;
  if (x !== y) return T;
  if (x === K_LIST) {
    const l = a as unknown[];
    const r = b as unknown[];
    // Out of budget: the answer no longer matters, the event is not scored.
    if (l.length !== r.length || !spend(traversal(l.length))) return false;
    for (let i = 0; i < l.length; i++) {
      const e = eq(l[i], r[i], K_DYN, K_DYN);
      if (e !== true) return e;
    }
    return true;
  }
  if (x === K_MAP) {
    const lk = mapKeys(a as object);
    const rk = mapKeys(b as object);
    if (lk.length !== rk.length || !spend(traversal(lk.length))) return false;
    for (const k of lk) {
      const rv = own(b as object, k);
      if (rv === A) return false;
      const e = eq(own(a as object, k), rv, K_DYN, K_DYN);
      if (e !== true) return e;
    }
    return true;
  }
  return a === b;
}

/** `!=`: the negation of eq, a type error staying one. */
export function ne(a: unknown, b: unknown, ka: number, kb: number): boolean | typeof kTypeError {
  const e = eq(a, b, ka, kb);
  return e === T ? T : !e;
}

/**
 * `x in <constant list>` after its Set missed: false when every element's kind can be compared
 * with x's, absent when x is null, else kTypeError. `kinds` has bit K_* set for each kind among
 * the elements (numbers as K_DBL), computed when the rule is compiled.
 */
export function inMiss(x: unknown, kx: number, kinds: number): false | typeof kTypeError | typeof kAbsent {
  // A null (a macro's variable can hold one) reads as absent, as everywhere.
  if (x === null) return A;
  const k = kindOf(x, kx);
  const comparable = numeric(k) ? (1 << K_INT) | (1 << K_DBL) : 1 << k;
  return (kinds & ~comparable) === 0 ? false : T;
}

// Ordering operators, for operands the checker could not type statically.
export const OP_LT = 0;
export const OP_LE = 1;
export const OP_GT = 2;
export const OP_GE = 3;

export function cmp(op: number, a: unknown, b: unknown, ka: number, kb: number): boolean | CelError {
  const x = kindOf(a, ka);
  const y = kindOf(b, kb);
  if (x === K_NULL || y === K_NULL) return A;
  const ok =
    (numeric(x) && numeric(y)) ||
    (x === y && (x === K_STR || x === K_BOOL || x === K_TS || x === K_DUR));
  if (!ok) return T;
  if (x === K_STR) return ordered(op, strCmp(a as string, b as string));
  const l = a as number;
  const r = b as number;
  switch (op) {
    case OP_LT:
      return l < r;
    case OP_LE:
      return l <= r;
    case OP_GT:
      return l > r;
    default:
      return l >= r;
  }
}

function ordered(op: number, c: number): boolean {
  return op === OP_LT ? c < 0 : op === OP_LE ? c <= 0 : op === OP_GT ? c > 0 : c >= 0;
}

/**
 * Strings in the order of their code points, as CEL orders them. JavaScript's `<` compares UTF-16
 * units, which differs only where a surrogate (U+D800–U+DFFF, half of a character above U+FFFF)
 * meets a unit of U+E000–U+FFFF: there the surrogate's character is the greater.
 */
export function strCmp(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit;
}

/** Checks an int result against the CEL int64 range. */
export function ichk(v: number): number | CelError {
  return v < kIntMax && v >= kIntMin ? v : X;
}

/**
 * Timestamp plus duration, as cel-js does it: whole seconds of the duration,
 * plus its sub-second part rounded down to a millisecond.
 */
export function durWhole(d: number): number {
  const seconds = Math.trunc(d / 1000);
  return seconds * 1000 + Math.floor(d - seconds * 1000);
}

export const OP_ADD = 0;
export const OP_SUB = 1;
export const OP_MUL = 2;
export const OP_DIV = 3;
export const OP_MOD = 4;

/** Arithmetic with at least one dyn operand: dispatch on the runtime kinds. */
export function arith(op: number, a: unknown, b: unknown, ka: number, kb: number): unknown {
  const x = kindOf(a, ka);
  const y = kindOf(b, kb);
  if (x === K_NULL || y === K_NULL) return A;
  const l = a as number;
  const r = b as number;
  if (x === K_INT && y === K_INT) {
    switch (op) {
      case OP_ADD:
        return ichk(l + r);
      case OP_SUB:
        return ichk(l - r);
      case OP_MUL:
        return ichk(l * r);
      case OP_DIV:
        return r === 0 ? X : ichk(Math.trunc(l / r));
      default:
        return r === 0 ? X : l % r;
    }
  }
  if (x === K_DBL && y === K_DBL) {
    switch (op) {
      case OP_ADD:
        return l + r;
      case OP_SUB:
        return l - r;
      case OP_MUL:
        return l * r;
      case OP_DIV:
        return l / r;
      default:
        return T;
    }
  }
  if (op === OP_ADD) {
    if (x === K_STR && y === K_STR) return strcat(a as string, b as string);
    if (x === K_LIST && y === K_LIST) return concat(a as unknown[], b as unknown[]);
    if (x === K_TS && y === K_DUR) return tsChk(l + durWhole(r));
    if (x === K_DUR && y === K_TS) return tsChk(r + durWhole(l));
    if (x === K_DUR && y === K_DUR) return durChk(l + r);
  }
  if (op === OP_SUB) {
    if (x === K_TS && y === K_TS) return durChk(l - r);
    if (x === K_TS && y === K_DUR) return tsChk(l - durWhole(r));
    if (x === K_DUR && y === K_DUR) return durChk(l - r);
  }
  return T;
}

/** Unary minus on a dyn operand. */
export function neg(a: unknown, ka: number): unknown {
  const x = kindOf(a, ka);
  if (x === K_INT) return ichk(-(a as number));
  if (x === K_DBL || x === K_DUR) return -(a as number);
  return wrong(a);
}

/** `x in c` when c is dyn (a list or a map) or a list that is not constant. */
export function inOp(x: unknown, c: unknown, kx: number, kc: number): boolean | CelError {
  const y = kindOf(c, kc);
  if (y === K_LIST) {
    const l = c as unknown[];
    if (!spend(l.length)) return X;
    // cel-go's Contains: any equal element wins; otherwise an element of a kind x cannot be
    // compared with is a type error (as `x == e0 || x == e1 || ...` would be).
    let mismatch = false;
    for (let i = 0; i < l.length; i++) {
      const e = eq(x, l[i], kx, K_DYN);
      if (e === true) return true;
      if (e === T) mismatch = true;
    }
    return mismatch ? T : false;
  }
  // Map keys are strings: any other key is of the wrong type.
  if (y === K_MAP) return typeof x === 'string' ? own(c as object, x) !== A : wrong(x);
  return wrong(c);
}

/** Keys of a map value: own, enumerable, not null-valued (null reads as absent). */
export function mapKeys(o: object): string[] {
  const out: string[] = [];
  for (const k of Object.keys(o)) {
    const v = (o as Record<string, unknown>)[k];
    if (v !== null && v !== undefined && !forbidden(k)) out.push(k);
  }
  return out;
}

/** What a comprehension iterates: list elements or map keys. */
export function iterable(c: unknown, kc: number): readonly unknown[] | CelError {
  const y = kindOf(c, kc);
  if (y === K_LIST) return c as unknown[];
  if (y === K_MAP) return spend(traversal(Object.keys(c as object).length)) ? mapKeys(c as object) : X;
  return wrong(c);
}

/** Length in code points, as CEL's size() counts. */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** size() of a string: a pass over it. */
export function strSize(s: string): number | CelError {
  return spend(traversal(s.length)) ? codePoints(s) : X;
}

export function size(v: unknown, k: number): number | CelError {
  const x = kindOf(v, k);
  if (x === K_STR) return strSize(v as string);
  if (x === K_LIST) return (v as unknown[]).length;
  if (x === K_MAP) return mapKeys(v as object).length;
  return wrong(v);
}

/** List index on a list or dyn value. */
export function index(c: unknown, i: unknown, kc: number, ki: number): unknown {
  const y = kindOf(c, kc);
  if (y === K_LIST) {
    const x = kindOf(i, ki);
    if (!numeric(x)) return wrong(i);
    const n = i as number;
    if (!Number.isInteger(n)) return T;
    const l = c as unknown[];
    if (n < 0 || n >= l.length) return A;
    const v = l[n];
    return v === null || v === undefined ? A : v;
  }
  if (y === K_MAP) return typeof i === 'string' ? own(c as object, i) : A;
  return wrong(c);
}

/**
 * matches(): an RE2 search (re2js, linear in the input). `weight` is the
 * pattern's share of the cost, cel-go's RegexStringLengthCostFactor (0.25) of
 * its length (cost.ts regexWeight).
 */
export function reTest(re: RE2JS, s: string, weight: number): boolean | CelError {
  return spend(traversal(s.length) * weight) ? re.test(s) : X;
}

// ---------------------------------------------------------------------------
// Timestamps and durations

const kMinTimestamp = -62135596800000; // 0001-01-01T00:00:00Z, CEL's range
const kMaxTimestamp = 253402300799999; // 9999-12-31T23:59:59.999Z
/**
 * CEL's duration range as the conformance tests hold it: that of int64
 * nanoseconds (cel-go's time.Duration), ±9,223,372,036.854 s (about 292
 * years), in ms.
 */
const kMaxDurationMs = 9_223_372_036_854;

/** A timestamp result (timestamp ± duration): an error outside 0001-01-01 to 9999-12-31. */
export function tsChk(ms: number): number | CelError {
  return ms >= kMinTimestamp && ms <= kMaxTimestamp ? ms : X;
}

/** A duration result: an error outside ±292 years. */
export function durChk(ms: number): number | CelError {
  return ms >= -kMaxDurationMs && ms <= kMaxDurationMs ? ms : X;
}
const kDaysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Days since 1970-01-01 of a proleptic Gregorian date: integer arithmetic
 * (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"), no Date object.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The number in s[at, at+n) if it is all ASCII digits, else -1. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * Epoch milliseconds of a strict RFC 3339 timestamp, NaN when invalid:
 * YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), fraction truncated to ms.
 * Hand-rolled because it runs on every evaluation that reads one.
 */
export function parseTimestamp(s: string): number {
  const n = s.length;
  if (n < 20 || n > 35) return NaN;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  const h = digits(s, 11, 2);
  const mi = digits(s, 14, 2);
  const se = digits(s, 17, 2);
  const t = s.charCodeAt(10);
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || (t !== 84 && t !== 116) ||
      s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) return NaN;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (d > (mo === 2 && leap ? 29 : (kDaysInMonth[mo - 1] as number))) return NaN;
  let i = 19;
  let frac = 0;
  if (s.charCodeAt(i) === 46) {
    let scale = 100;
    i++;
    const start = i;
    while (i < n) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      frac += c * scale;
      scale /= 10;
      i++;
    }
    if (i === start || i - start > 9) return NaN;
    frac = Math.trunc(frac);
  }
  let offset = 0;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) i++;
  else if (z === 43 || z === 45) {
    const oh = digits(s, i + 1, 2);
    const om = digits(s, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59 || s.charCodeAt(i + 3) !== 58) return NaN;
    offset = (oh * 60 + om) * 60000 * (z === 43 ? 1 : -1);
    i += 6;
  } else return NaN;
  if (i !== n) return NaN;
  const ms = daysFromCivil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + se * 1000 + frac - offset;
  return ms >= kMinTimestamp && ms <= kMaxTimestamp ? ms : NaN;
}

/** timestamp(string) */
export function toTimestamp(s: string): number | CelError {
  const ms = parseTimestamp(s);
  return ms === ms ? ms : X;
}

/** timestamp(int): seconds since the epoch. */
export function toTimestampFromSeconds(n: number): number | CelError {
  const ms = n * 1000;
  return ms >= kMinTimestamp && ms <= kMaxTimestamp ? ms : X;
}

const kDurationUnitNanos: Readonly<Record<string, bigint>> = {
  h: 3_600_000_000_000n,
  m: 60_000_000_000n,
  s: 1_000_000_000n,
  ms: 1_000_000n,
  us: 1_000n,
  'µs': 1_000n,
  ns: 1n,
};
/** The most characters a duration's text may have: bounds the parse of a text the caller sends. */
export const kMaxDurationTextLength = 64;
const kDurationPart = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/;

/**
 * Milliseconds of a Go-style duration ("1h30m", "-1.5s", "250ms"), NaN when
 * invalid. Exact to the nanosecond like cel-js, then expressed in ms.
 */
export function parseDuration(input: string): number {
  if (input.length === 0 || input.length > kMaxDurationTextLength) return NaN;
  let s = input;
  const negative = s[0] === '-';
  if (s[0] === '-' || s[0] === '+') s = s.slice(1);
  if (s.length === 0) return NaN;
  // Go's time.ParseDuration (and so cel-go) takes a bare "0" without a unit.
  if (s === '0') return 0;
  let nanos = 0n;
  while (s.length > 0) {
    const m = kDurationPart.exec(s);
    if (m === null) return NaN;
    const unit = kDurationUnitNanos[m[2] as string] as bigint;
    const [intPart = '0', fracPart = ''] = (m[1] as string).split('.');
    nanos += BigInt(intPart || '0') * unit;
    if (fracPart) nanos += (BigInt(fracPart.slice(0, 13).padEnd(13, '0')) * unit) / 10_000_000_000_000n;
    s = s.slice(m[0].length);
  }
  const seconds = nanos / 1_000_000_000n;
  const rest = Number(nanos % 1_000_000_000n);
  const ms = Number(seconds) * 1000 + rest / 1_000_000;
  if (ms > kMaxDurationMs) return NaN;
  return negative ? -ms : ms;
}

/** Whether `input` is written as a duration ("720h", "1h30m"), whatever its size: parseDuration also refuses one beyond ±292 years. */
export function isDurationText(input: string): boolean {
  return input.length <= kMaxDurationTextLength && kDurationText.test(input);
}
const kDurationText = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/;

/** duration(string) */
export function toDuration(s: string): number | CelError {
  const ms = parseDuration(s);
  return ms === ms ? ms : X;
}

export const TS_FULL_YEAR = 0;
export const TS_MONTH = 1;
export const TS_DATE = 2;
export const TS_DAY_OF_MONTH = 3;
export const TS_DAY_OF_WEEK = 4;
export const TS_HOURS = 5;
export const TS_MINUTES = 6;
export const TS_SECONDS = 7;
export const TS_MILLISECONDS = 8;
export const TS_DAY_OF_YEAR = 9;

/** Timestamp accessors, in UTC. */
export function tsPart(ms: number, part: number): number {
  const d = new Date(ms);
  switch (part) {
    case TS_FULL_YEAR:
      return d.getUTCFullYear();
    case TS_MONTH:
      return d.getUTCMonth();
    case TS_DATE:
      return d.getUTCDate();
    case TS_DAY_OF_MONTH:
      return d.getUTCDate() - 1;
    case TS_DAY_OF_WEEK:
      return d.getUTCDay();
    case TS_HOURS:
      return d.getUTCHours();
    case TS_MINUTES:
      return d.getUTCMinutes();
    case TS_SECONDS:
      return d.getUTCSeconds();
    case TS_DAY_OF_YEAR: {
      // Not Date.UTC(year, 0, 1): it reads the years 0–99 as 1900–1999.
      const januaryFirst = new Date(0);
      januaryFirst.setUTCFullYear(d.getUTCFullYear(), 0, 1);
      return Math.floor((ms - januaryFirst.getTime()) / 86_400_000);
    }
    default:
      return d.getUTCMilliseconds();
  }
}

export const DUR_HOURS = 0;
export const DUR_MINUTES = 1;
export const DUR_SECONDS = 2;
export const DUR_MILLISECONDS = 3;

/** Duration accessors: whole units, truncated toward zero like cel-js. */
export function durPart(ms: number, part: number): number {
  const seconds = Math.trunc(ms / 1000);
  switch (part) {
    case DUR_HOURS:
      return Math.trunc(seconds / 3600);
    case DUR_MINUTES:
      return Math.trunc(seconds / 60);
    case DUR_SECONDS:
      return seconds;
    default:
      return seconds * 1000 + Math.floor(ms - seconds * 1000);
  }
}

// ---------------------------------------------------------------------------
// Conversions (the semantics of cel-js's int(), double(), string(), bool())

/**
 * int(double): truncated toward zero; an error outside the int64 range, as in
 * cel-go (the open interval (-2^63, 2^63): both ends are doubles exactly).
 */
export function intOfDouble(v: number): number | CelError {
  // `+ 0`: int(-0.5) is 0, not -0 (an int has no sign of zero; -0 would turn 1.0 / double(...)
  // into -Infinity where cel-js gives +Infinity).
  return v > kIntMin && v < kIntMax ? Math.trunc(v) + 0 : X;
}

/** int(s): decimal digits with an optional sign, as CEL (Go's strconv.ParseInt base 10); else an error. */
export function intOfString(v: string): number | CelError {
  // BigInt alone would also take '' (0), '0x1F', '0b101' and '0o17'.
  if (!/^[+-]?[0-9]{1,19}$/.test(v)) return X;
  const n = BigInt(v);
  return n <= 9223372036854775807n && n >= -9223372036854775808n ? Number(n) : X;
}

export function doubleOfString(v: string): number | CelError {
  if (!v || v !== v.trim()) return X;
  switch (v.toLowerCase()) {
    case 'inf':
    case '+inf':
    case 'infinity':
    case '+infinity':
      return Infinity;
    case '-inf':
    case '-infinity':
      return -Infinity;
    case 'nan':
      return NaN;
    default: {
      // As Go's strconv.ParseFloat: a decimal, or a hexadecimal with its p exponent; a value
      // beyond the double range is an error. JavaScript's Number() would also take '0x10',
      // '0b101', '0o17' (integers of other bases) and '1e999' (Infinity).
      if (kDecimalFloat.test(v)) {
        const n = Number(v);
        return Number.isFinite(n) ? n : X;
      }
      const hex = kHexFloat.exec(v);
      const mantissa = hex === null ? '' : (hex[2] ?? '') + (hex[3] ?? '');
      if (hex === null || mantissa === '') return X;
      const n = (hex[1] === '-' ? -1 : 1) * parseInt(mantissa, 16) * 2 ** (Number(hex[4]) - 4 * (hex[3] ?? '').length);
      return Number.isFinite(n) ? n : X;
    }
  }
}

const kDecimalFloat = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const kHexFloat = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$/;

export function boolOfString(v: string): boolean | CelError {
  switch (v) {
    case '1': case 't': case 'true': case 'TRUE': case 'True':
      return true;
    case '0': case 'f': case 'false': case 'FALSE': case 'False':
      return false;
    default:
      return X;
  }
}

/** string(timestamp): RFC 3339 in UTC, the fraction without trailing zeros (Go's RFC3339Nano, as cel-go). */
export function stringOfTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso.replace(/0{1,2}Z$/, 'Z');
}

/** string(duration): seconds with the fraction, then 's' ("1.5s", "-0.001s"), as cel-go. */
export function stringOfDuration(ms: number): string {
  return `${ms / 1000}s`;
}

/** int(timestamp): whole seconds since the epoch, rounded down (Go's Unix()). */
export function intOfTimestamp(ms: number): number {
  return Math.floor(ms / 1000);
}

export function stringOfDouble(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return `${v}`;
}

// ---------------------------------------------------------------------------
// Strings. CEL counts lengths and positions in code points; JavaScript strings
// are UTF-16, where a character outside the Basic Multilingual Plane (an
// emoji) is two units. When a string has no such character the two agree and
// the native methods are used as they are; otherwise positions are converted.

/** UTF-16 offset of code point `cp` in s (s.length past the end). */
function unitOffset(s: string, cp: number): number {
  let i = 0;
  for (let n = 0; n < cp && i < s.length; n++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i;
}

/** Code point position of UTF-16 offset `unit` in s. */
function pointOffset(s: string, unit: number): number {
  return unit < 0 ? unit : codePoints(s.slice(0, unit));
}

/** s.contains(t) */
export function contains(s: string, t: string): boolean | CelError {
  return spend(traversal(s.length)) ? s.includes(t) : X;
}

/**
 * in_list(id, v): whether the project's list `id` holds `v`, normalised by the list's kind (the
 * service's ListLookup does that). Spent before it runs: one pass over `v`, and what the lookup
 * says a lookup in that list costs (a phone list parses the number: thousands of units), so the
 * budget bounds the time of many lookups — at run time that can be more than the rule's estimate,
 * which counts the pass only. A lookup that is missing, or that does not know the list, is an
 * evaluation error: the rule cannot match, and is not degraded.
 */
export function inList(lists: unknown, id: string, v: string): boolean | CelError {
  if (typeof lists !== 'object' || lists === null) return (spend(traversal(v.length)), X);
  const units = (lists as { lookupUnits?: unknown }).lookupUnits;
  const extra: unknown = typeof units === 'function' ? units.call(lists, id) : 0;
  if (!spend(traversal(v.length) + (typeof extra === 'number' && extra > 0 ? extra : 0))) return X;
  const has = (lists as { has?: unknown }).has;
  if (typeof has !== 'function') return X;
  const r: unknown = has.call(lists, id, v);
  return typeof r === 'boolean' ? r : X;
}

/** s.startsWith(t) */
export function startsWith(s: string, t: string): boolean | CelError {
  return spend(traversal(t.length)) ? s.startsWith(t) : X;
}

/** s.endsWith(t) */
export function endsWith(s: string, t: string): boolean | CelError {
  return spend(traversal(t.length)) ? s.endsWith(t) : X;
}

const kNonAscii = /[^\x00-\x7f]/;

/**
 * s.lowerAscii(): only A-Z change (CEL strings extension); other letters
 * stay. On an ASCII string that is what toLowerCase() does, and faster.
 */
export function lowerAscii(s: string): string | CelError {
  if (!spend(traversal(s.length))) return X;
  return kNonAscii.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase();
}

/** s.upperAscii(): only a-z change. */
export function upperAscii(s: string): string | CelError {
  if (!spend(traversal(s.length))) return X;
  return kNonAscii.test(s) ? s.replace(/[a-z]+/g, (m) => m.toUpperCase()) : s.toUpperCase();
}

/** s.trim(): leading and trailing Unicode White_Space removed (a loop, no regex: linear). */
export function trim(s: string): string | CelError {
  if (!spend(traversal(s.length))) return X;
  let start = 0;
  let end = s.length;
  while (start < end && isWhiteSpace(s.charCodeAt(start))) start++;
  while (end > start && isWhiteSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** s.split(sep[, limit]); an empty separator splits into code points. */
export function split(s: string, sep: string, limit: number): string[] | CelError {
  if (!spend(traversal(s.length))) return X;
  if (limit === 0) return [];
  const parts = sep === '' ? Array.from(s) : s.split(sep);
  if (limit < 0 || parts.length <= limit) return parts;
  const out = parts.slice(0, limit - 1);
  out.push(parts.slice(limit - 1).join(sep));
  return out;
}

/** list<string>.join(sep): every element must be a string. */
export function joinList(l: readonly unknown[], sep: string): string | CelError {
  if (!spend(l.length)) return X;
  for (let i = 0; i < l.length; i++) if (typeof l[i] !== 'string') return T;
  const out = l.join(sep);
  return spend(traversal(out.length)) ? out : X;
}

/**
 * s.indexOf(t[, from]) and s.lastIndexOf(t[, from]) in code points, as
 * cel-go's strings extension: an empty t is found at `from`; `from` must be
 * a position inside s; lastIndexOf searches backwards from it.
 */
export function indexOf(s: string, search: string, from: number, hasFrom: boolean, last: boolean): number | CelError {
  if (!spend(traversal(s.length))) return X;
  const n = codePoints(s);
  if (hasFrom) {
    if (search === '') return from;
    if (from < 0 || from >= n) return X;
  }
  if (n === s.length) {
    if (!hasFrom) return last ? s.lastIndexOf(search) : s.indexOf(search);
    return last ? s.lastIndexOf(search, from) : s.indexOf(search, from);
  }
  const at = hasFrom ? unitOffset(s, from) : last ? s.length : 0;
  return pointOffset(s, last ? s.lastIndexOf(search, at) : s.indexOf(search, at));
}

/** s.substring(start[, end]) in code points; out-of-range positions are errors. */
export function substring(s: string, start: number, end: number, hasEnd: boolean): string | CelError {
  if (!spend(traversal(s.length))) return X;
  const n = codePoints(s);
  const stop = hasEnd ? end : n;
  if (start < 0 || start > n || stop < start || stop > n) return X;
  if (n === s.length) return s.substring(start, stop);
  const from = unitOffset(s, start);
  return s.substring(from, from + unitOffset(s.slice(from), stop - start));
}

/** s.charAt(i): the code point at i, '' at the end, an error beyond (cel-go strings extension). */
export function charAt(s: string, i: number): string | CelError {
  if (!spend(traversal(s.length))) return X;
  const n = codePoints(s);
  if (i < 0 || i > n) return X;
  if (n === s.length) return s.charAt(i);
  const from = unitOffset(s, i);
  return s.slice(from, unitOffset(s, i + 1));
}

export function isList(v: unknown): boolean {
  return isArray(v);
}

/** list + list: a copy of both, paid per element (it also bounds what an event can allocate). */
export function concat(a: readonly unknown[], b: readonly unknown[]): unknown[] | CelError {
  return spend(a.length + b.length) ? a.concat(b) : X;
}

/** string + string. */
export function strcat(a: string, b: string): string | CelError {
  return spend(traversal(a.length + b.length)) ? a + b : X;
}

/** int / int: truncated, like cel-js's BigInt division. */
export function idiv(a: number, b: number): number | CelError {
  return b === 0 ? X : ichk(Math.trunc(a / b));
}

/** int % int: sign of the dividend, like BigInt %. */
export function imod(a: number, b: number): number | CelError {
  // -2^63 % -1 overflows int64 in CEL (cel-go's checked modulo), as -2^63 / -1 does.
  return b === 0 || (b === -1 && a === kIntMin) ? X : a % b;
}

// Conversions of a dyn value: dispatch on what it holds (numbers are doubles).
export function intOf(v: unknown): number | CelError {
  if (typeof v === 'number') return intOfDouble(v);
  if (typeof v === 'string') return intOfString(v);
  return wrong(v);
}
export function doubleOf(v: unknown): number | CelError {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return doubleOfString(v);
  return wrong(v);
}
export function stringOf(v: unknown): string | CelError {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return stringOfDouble(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return wrong(v);
}
export function boolOf(v: unknown): boolean | CelError {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return boolOfString(v);
  return wrong(v);
}

/** Reads a declared field of kind `k` (schema FieldType as a K_* code). */
export function read(k: number, v: unknown): unknown {
  switch (k) {
    case K_STR:
      return str(v);
    case K_BOOL:
      return bool(v);
    case K_INT:
      return int(v);
    case K_DBL:
      return dbl(v);
    default:
      return ts(v);
  }
}

/**
 * A group member chosen at run time (`velocity[key]`): declared fields are
 * read with their type, other members only on open groups, never inherited.
 */
export function gget(g: object, key: unknown, fields: Readonly<Record<string, number>>, open: boolean): unknown {
  if (typeof key !== 'string') return wrong(key);
  if (forbidden(key)) return A;
  if (hasOwn(fields, key)) return read(fields[key] as number, (g as Record<string, unknown>)[key]);
  return open ? own(g, key) : A;
}

/**
 * has() on the last member of a chain: present and not null. On a null, false; on a value that has
 * no fields (a string, number, bool or list), a type error, as selecting the field would be.
 */
export function hasField(o: unknown, key: string): boolean | typeof kTypeError {
  if (typeof o === 'object' && o !== null && !isArray(o)) return own(o, key) !== A;
  return o === null || o === undefined ? false : T;
}

/**
 * has() as rulesets compiled before 2026-11-29 call it (their code stored with each published
 * version expects a boolean): false on a value that has no fields.
 */
export function has(o: unknown, key: string): boolean {
  return typeof o === 'object' && o !== null && !isArray(o) && own(o, key) !== A;
}

/** A map literal with computed parts: [k0, v0, k1, v1, ...]. */
export function mapOf(parts: readonly unknown[]): Record<string, unknown> {
  const o = Object.create(null) as Record<string, unknown>;
  for (let i = 0; i < parts.length; i += 2) o[parts[i] as string] = parts[i + 1];
  return o;
}

// ---------------------------------------------------------------------------
// Load-time construction of constants and outcome entries

/** A constant the emitted code refers to as K[i]; built once per load. */
export type ConstantSpec =
  | { readonly re: string }
  | { readonly set: readonly (string | number | boolean)[] }
  | { readonly list: readonly unknown[] }
  | { readonly map: readonly (readonly [string, unknown])[] };

/** Builds the constants from their JSON text (a string literal in the source). */
export function constants(json: string): readonly unknown[] {
  const specs = JSON.parse(json) as ConstantSpec[];
  return Object.freeze(
    specs.map((spec) => {
      // Compiled once per loaded ruleset: the cache of compiled patterns.
      if ('re' in spec) return RE2JS.compile(spec.re);
      if ('set' in spec) return new Set(spec.set);
      if ('list' in spec) return Object.freeze(spec.list.slice());
      const o = Object.create(null) as Record<string, unknown>;
      for (const [k, v] of spec.map) if (!forbidden(k)) o[k] = v;
      return Object.freeze(o);
    }),
  );
}

/** A breakdown of a chunked ruleset: its final length from the start, each rule fills its slot. */
export function slots(n: number): unknown[] {
  return new Array<unknown>(n);
}

/** A breakdown entry (shared and frozen: the emitted function reuses it). */
export function entry(
  ruleId: string,
  version: number,
  delta: number,
  band: string | null,
  matched: boolean,
  action: string | null,
): Readonly<Record<string, unknown>> {
  const e: Record<string, unknown> = {
    rule_id: ruleId,
    rule_version: version,
    score_delta: delta,
    band,
    matched,
    reason: ruleId,
  };
  if (matched && action !== null) e.action = action;
  return Object.freeze(e);
}

/** A shadow outcome (shared and frozen). */
export function shadow(
  ruleId: string,
  version: number,
  kind: string,
  matched: boolean,
  band: string | null,
  delta: number,
  degraded: boolean,
): Readonly<Record<string, unknown>> {
  return Object.freeze({ rule_id: ruleId, rule_version: version, kind, matched, band, score_delta: delta, degraded });
}
