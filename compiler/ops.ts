// The op table: every CEL operator and function a rule may use, with the
// emitter that lowers it. Anything not in these tables is refused at compile
// time with a clear message, so the supported language is exactly this file.
//
// Conventions (cel-js is the reference, see docs/rules.md):
//   - binary operators evaluate left then right; the first error wins;
//   - calls evaluate their arguments right to left, the receiver last;
//   - a dyn operand is checked at run time; a value of the wrong kind is a
//     type error (the rule is degraded), a null is absent.

import type { ASTNode } from '@marcbachmann/cel-js';
import { Code, _ } from './codegen.js';
import {
  CompileError, ExprContext, Lowered, N, Ty, guarded, isNumeric, kBool, kDouble, kDuration, kDyn, kInt,
  kString, kTimestamp, kindCode, lowered,
} from './ir.js';
import { RE2JS } from 're2js';
import type { Estimate, SizeBound } from './size.js';
import { elementsOf, kScalarSize, maxSize } from './size.js';
import { kListIdPattern, kMaxRegexPatternLength } from './limits.js';
import * as runtime from './runtime/index.js';
import { characterLength } from '../src/shared/text.js';

// ---------------------------------------------------------------------------
// Binary operators

export interface BinaryOpDef {
  /** Internal name. */
  readonly name: string;
  /** CEL spelling. */
  readonly wire: string;
  lower(ctx: ExprContext, node: ASTNode, l: Lowered, r: Lowered, resultTy: Ty): Lowered;
  /** Worst-case cost of the operator itself and the size of its result (cost.ts). */
  cost(args: BinaryCostArgs): Estimate;
}

export interface BinaryCostArgs {
  readonly left: SizeBound;
  readonly right: SizeBound;
  /** The checked type of the result ('string', 'list', 'dyn', ...). */
  readonly kind: string;
  /** The checked types of the operands. */
  readonly leftKind: string;
  readonly rightKind: string;
  /** The right side is a list of literals (`in` becomes a Set lookup). */
  readonly rightIsLiteralList: boolean;
}

const kScalarEstimate: Estimate = { cost: 1, size: kScalarSize };
const scalarCost = (): Estimate => kScalarEstimate;

/** Ordering two values reads the shorter (runtime order: strings, numbers, times). */
function compareCost({ left, right }: BinaryCostArgs): Estimate {
  return { cost: 1 + runtime.traversal(Math.min(left.deep, right.deep)), size: kScalarSize };
}

/** Whether a value of this checked kind may hold lists or maps, which eq walks. */
function mayNest(kind: string): boolean {
  return kind === 'dyn' || kind === 'list' || kind === 'map';
}

/**
 * What runtime eq spends walking two values of which the smaller holds at most `elements`
 * elements: for each list or map it enters in both, a unit and a pass over its length. There are
 * no more of those than elements, so a unit per element and a pass over them all bound it (a
 * value nested 27 deep spends a unit per level: a pass alone, a tenth per element, undercounted).
 */
function walkCost(elements: number): number {
  return elements + runtime.traversal(elements);
}

/** `==`, `!=`: scalars compare at once; lists and maps are walked (runtime eq). */
function equalityCost(args: BinaryCostArgs): Estimate {
  if (!mayNest(args.leftKind) || !mayNest(args.rightKind)) return compareCost(args);
  return { cost: 1 + walkCost(Math.min(args.left.deep, args.right.deep)), size: kScalarSize };
}

/**
 * `x in c` (runtime inOp): a list of literals is one Set lookup, a map one lookup of x; any other
 * list compares x with every element, a unit each and a pass over the smaller of the two at most.
 * The elements share the list's size, so those passes together read at most the whole list once
 * (or x once per element).
 */
function inCost({ left, right, leftKind, rightKind, rightIsLiteralList }: BinaryCostArgs): Estimate {
  if (rightIsLiteralList || rightKind === 'map') return kScalarEstimate;
  // A list, or a value of no declared type (dyn), which may also be a map: the list's cost bounds both.
  const n = elementsOf(right);
  const compared = Math.min(n * left.deep, right.deep);
  return { cost: 1 + n + (mayNest(leftKind) ? walkCost(compared) : runtime.traversal(compared)), size: kScalarSize };
}

/** `+`: strings and lists are copied (runtime strcat, concat); numbers and times cost one. */
function addCost({ left, right, kind }: BinaryCostArgs): Estimate {
  const strings: Estimate = {
    cost: 1 + runtime.traversal(left.len + right.len),
    size: { len: left.len + right.len, deep: left.deep + right.deep, input: false },
  };
  const lists: Estimate = {
    cost: 1 + left.len + right.len,
    size: { len: left.len + right.len, deep: left.deep + right.deep, input: left.input && right.input },
  };
  if (kind === 'string') return strings;
  if (kind === 'list') return lists;
  if (kind === 'dyn') return { cost: Math.max(strings.cost, lists.cost), size: maxSize(strings.size, lists.size) };
  return kScalarEstimate;
}

const kStaticComparable = new Set(['string', 'bool', 'timestamp', 'duration']);

function staticallyComparable(a: Ty, b: Ty): boolean {
  return (isNumeric(a) && isNumeric(b)) || (a.k === b.k && kStaticComparable.has(a.k));
}

function lowerEquality(ctx: ExprContext, l: Lowered, r: Lowered, negate: boolean): Lowered {
  if (l.ty.k === 'null' || r.ty.k === 'null') {
    const other = l.ty.k === 'null' ? r : l;
    if (other.ty.k === 'null') return constant(!negate, kBool);
    // Absent reads as null: `x == null` tests absence (docs/rules.md).
    const t = other.simple ? other.code : _`${ctx.frame.temp()}`;
    const head = other.simple ? _`` : _`${t} = ${other.code}, `;
    return lowered(
      _`(${head}${t} === ${N.absent} || ${t} === null ? ${!negate} : typeof ${t} === "symbol" ? ${t} : ${negate})`,
      kBool,
      other.err,
    );
  }
  const primitive =
    (isNumeric(l.ty) && isNumeric(r.ty)) || (l.ty.k === r.ty.k && kStaticComparable.has(l.ty.k));
  if (primitive) {
    const op = negate ? _`!==` : _`===`;
    return lowered(guarded(ctx, [l, r], ([a, b]) => _`(${a} ${op} ${b})`), kBool, l.err || r.err);
  }
  // A dyn side, a list or a map: the runtime compares the kinds, and answers kTypeError when they
  // cannot be compared (`extras.block == true` with "yes"): the rule is degraded, as for `<`.
  const fn = ctx.rt(negate ? 'ne' : 'eq');
  return lowered(guarded(ctx, [l, r], ([a, b]) => _`${fn}(${a}, ${b}, ${kindCode(l.ty)}, ${kindCode(r.ty)})`), kBool, true);
}

function lowerOrdering(ctx: ExprContext, l: Lowered, r: Lowered, js: string, opCode: number): Lowered {
  if (l.ty.k === 'string' && r.ty.k === 'string') {
    // By code point, as CEL orders strings (JavaScript's operators compare UTF-16 units).
    const op = jsOperator(js);
    const strCmp = ctx.rt('strCmp');
    return lowered(guarded(ctx, [l, r], ([a, b]) => _`(${strCmp}(${a}, ${b}) ${op} 0)`), kBool, l.err || r.err);
  }
  if (staticallyComparable(l.ty, r.ty)) {
    const op = jsOperator(js);
    return lowered(guarded(ctx, [l, r], ([a, b]) => _`(${a} ${op} ${b})`), kBool, l.err || r.err);
  }
  const cmp = ctx.rt('cmp');
  return lowered(
    guarded(ctx, [l, r], ([a, b]) => _`${cmp}(${opCode}, ${a}, ${b}, ${kindCode(l.ty)}, ${kindCode(r.ty)})`),
    kBool,
    true,
  );
}

// The handful of JavaScript operator spellings emitted code uses.
const kJsOperators: Readonly<Record<string, Code>> = {
  '<': _`<`, '<=': _`<=`, '>': _`>`, '>=': _`>=`, '+': _`+`, '-': _`-`, '*': _`*`, '/': _`/`,
};

function jsOperator(op: string): Code {
  const code = kJsOperators[op];
  if (code === undefined) throw new Error(`no JavaScript operator for ${op}`);
  return code;
}

function lowerIn(ctx: ExprContext, l: Lowered, r: Lowered): Lowered {
  const k = r.konst?.value;
  if (Array.isArray(k) && k.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) {
    // Membership in a constant list: one Set lookup, built at load time.
    const set = ctx.ruleset.constant({ set: k as (string | number | boolean)[] });
    const kinds = [...new Set((k as unknown[]).map((v) => (typeof v === 'string' ? runtime.K_STR : typeof v === 'number' ? runtime.K_DBL : runtime.K_BOOL)))];
    const lk = kindCode(l.ty);
    // The elements' kinds are known here: when x's static kind matches them all, a miss is false
    // and the Set lookup is all there is. Otherwise (x is dyn, or the literal mixes kinds) a miss
    // is a type error unless every element can be compared with x (runtime inMiss), as for
    // `x == e0 || x == e1 || ...`.
    const comparable = (e: number): boolean =>
      e === lk || (e === runtime.K_DBL && (lk === runtime.K_INT || lk === runtime.K_DBL));
    if (lk !== runtime.K_DYN && kinds.every(comparable)) {
      return lowered(guarded(ctx, [l], ([a]) => _`${set}.has(${a})`), kBool, l.err);
    }
    const miss = ctx.rt('inMiss');
    return lowered(
      guarded(ctx, [l], ([a]) => _`(${set}.has(${a}) || ${miss}(${a}, ${lk}, ${kinds.reduce((m, e) => m | (1 << e), 0)}))`),
      kBool,
      true,
    );
  }
  const inOp = ctx.rt('inOp');
  return lowered(
    guarded(ctx, [l, r], ([a, b]) => _`${inOp}(${a}, ${b}, ${kindCode(l.ty)}, ${kindCode(r.ty)})`),
    kBool,
    // A miss with an element of another kind, or a non-string key of a map, is a type error.
    true,
  );
}

const kArithCodes: Readonly<Record<string, number>> = {
  '+': runtime.OP_ADD, '-': runtime.OP_SUB, '*': runtime.OP_MUL, '/': runtime.OP_DIV, '%': runtime.OP_MOD,
};

function lowerArithmetic(ctx: ExprContext, node: ASTNode, l: Lowered, r: Lowered, op: string, resultTy: Ty): Lowered {
  const a = l.ty.k;
  const b = r.ty.k;
  const both = (x: string, y: string): boolean => a === x && b === y;
  const ops = [l, r];
  if (a !== 'dyn' && b !== 'dyn') {
    if (both('int', 'int')) {
      if (op === '/') return call(ctx, ops, kInt, true, (v) => _`${ctx.rt('idiv')}(${v[0]}, ${v[1]})`);
      if (op === '%') return call(ctx, ops, kInt, true, (v) => _`${ctx.rt('imod')}(${v[0]}, ${v[1]})`);
      return call(ctx, ops, kInt, true, (v) => _`${ctx.rt('ichk')}(${v[0]} ${jsOperator(op)} ${v[1]})`);
    }
    if (both('double', 'double') && op !== '%') {
      return call(ctx, ops, kDouble, false, (v) => _`(${v[0]} ${jsOperator(op)} ${v[1]})`);
    }
    if (both('string', 'string') && op === '+') return call(ctx, ops, kString, true, (v) => _`${ctx.rt('strcat')}(${v[0]}, ${v[1]})`);
    if (both('list', 'list') && op === '+') {
      return call(ctx, ops, resultTy, true, (v) => _`${ctx.rt('concat')}(${v[0]}, ${v[1]})`);
    }
    const whole = (): Code => _`${ctx.rt('durWhole')}`;
    // Results outside CEL's ranges (years 1 to 9999, durations of ±10,000 years) are errors.
    const ts = (): Code => _`${ctx.rt('tsChk')}`;
    const dur = (): Code => _`${ctx.rt('durChk')}`;
    if (both('timestamp', 'timestamp') && op === '-') return call(ctx, ops, kDuration, true, (v) => _`${dur()}(${v[0]} - ${v[1]})`);
    if (both('timestamp', 'duration') && (op === '+' || op === '-')) {
      return call(ctx, ops, kTimestamp, true, (v) => _`${ts()}(${v[0]} ${jsOperator(op)} ${whole()}(${v[1]}))`);
    }
    if (both('duration', 'timestamp') && op === '+') return call(ctx, ops, kTimestamp, true, (v) => _`${ts()}(${v[1]} + ${whole()}(${v[0]}))`);
    if (both('duration', 'duration') && (op === '+' || op === '-')) {
      return call(ctx, ops, kDuration, true, (v) => _`${dur()}(${v[0]} ${jsOperator(op)} ${v[1]})`);
    }
    throw new CompileError(`operator ${op} is not supported on ${describe(l.ty)} and ${describe(r.ty)}`, node);
  }
  const arith = ctx.rt('arith');
  return call(ctx, ops, resultTy.k === 'dyn' ? kDyn : resultTy, true,
    (v) => _`${arith}(${kArithCodes[op] as number}, ${v[0]}, ${v[1]}, ${kindCode(l.ty)}, ${kindCode(r.ty)})`);
}

function ordering(js: string, code: number): BinaryOpDef['lower'] {
  return (ctx, _node, l, r) => lowerOrdering(ctx, l, r, js, code);
}

function arithmetic(op: string): BinaryOpDef['lower'] {
  return (ctx, node, l, r, ty) => lowerArithmetic(ctx, node, l, r, op, ty);
}

export const kBinaryOps: Readonly<Record<string, BinaryOpDef>> = {
  '==': { name: 'EQ', wire: '==', lower: (ctx, _n, l, r) => lowerEquality(ctx, l, r, false), cost: equalityCost },
  '!=': { name: 'NE', wire: '!=', lower: (ctx, _n, l, r) => lowerEquality(ctx, l, r, true), cost: equalityCost },
  '<': { name: 'LT', wire: '<', lower: ordering('<', runtime.OP_LT), cost: compareCost },
  '<=': { name: 'LE', wire: '<=', lower: ordering('<=', runtime.OP_LE), cost: compareCost },
  '>': { name: 'GT', wire: '>', lower: ordering('>', runtime.OP_GT), cost: compareCost },
  '>=': { name: 'GE', wire: '>=', lower: ordering('>=', runtime.OP_GE), cost: compareCost },
  in: { name: 'IN', wire: 'in', lower: (ctx, _n, l, r) => lowerIn(ctx, l, r), cost: inCost },
  '+': { name: 'ADD', wire: '+', lower: arithmetic('+'), cost: addCost },
  '-': { name: 'SUB', wire: '-', lower: arithmetic('-'), cost: scalarCost },
  '*': { name: 'MUL', wire: '*', lower: arithmetic('*'), cost: scalarCost },
  '/': { name: 'DIV', wire: '/', lower: arithmetic('/'), cost: scalarCost },
  '%': { name: 'MOD', wire: '%', lower: arithmetic('%'), cost: scalarCost },
};

// ---------------------------------------------------------------------------
// Functions and methods

/** What a parameter accepts; a dyn argument is checked at run time. */
type Param = 'string' | 'int' | 'double' | 'bool' | 'list' | 'timestamp' | 'duration';

interface CallArgs {
  readonly ctx: ExprContext;
  readonly node: ASTNode;
  /** Receiver first for methods, then the arguments. */
  readonly operands: readonly Lowered[];
  /** The AST nodes of the operands, same order. */
  readonly nodes: readonly ASTNode[];
  readonly resultTy: Ty;
}

export interface FunctionDef {
  /** Internal name. */
  readonly name: string;
  /** CEL spelling. */
  readonly wire: string;
  /** Called as a method on a receiver (`s.startsWith(x)`) or as a function (`size(x)`). */
  readonly receiver: boolean;
  readonly arity: readonly number[];
  lower(args: CallArgs): Lowered;
  /** Worst-case cost of the call itself and the size of its result (cost.ts). */
  cost(args: CallCostArgs): Estimate;
}

export interface CallCostArgs {
  /** Receiver first for methods, then the arguments. */
  readonly sizes: readonly SizeBound[];
  /** The literal pattern of matches(). */
  readonly pattern: string | null;
  readonly kind: string;
}

const kAnySize: SizeBound = { len: 1, deep: 1, input: false };
const first = (sizes: readonly SizeBound[]): SizeBound => sizes[0] ?? kAnySize;

/** One pass over the receiver (or the first argument); the result is a scalar or, with `keep`, at most the receiver. */
function passCost(keep = false): (args: CallCostArgs) => Estimate {
  return ({ sizes }) => ({ cost: 1 + runtime.traversal(first(sizes).len), size: keep ? first(sizes) : kScalarSize });
}

export function constant(value: boolean | number | string | null, ty: Ty): Lowered {
  return { code: _`${value}`, ty, err: false, simple: true, konst: { value } };
}

function describe(ty: Ty): string {
  switch (ty.k) {
    case 'list':
      return `list<${describe(ty.elem)}>`;
    case 'map':
      return `map<${describe(ty.key)}, ${describe(ty.val)}>`;
    case 'group':
      return `the object '${ty.group.name}'`;
    default:
      return ty.k;
  }
}

/**
 * Emits a call: errors in cel-js order (arguments right to left, then the
 * receiver), then run-time kind checks for dyn operands, then `body`.
 */
function call(
  ctx: ExprContext,
  operands: readonly Lowered[],
  ty: Ty,
  mayFail: boolean,
  body: (values: Code[]) => Code,
  params?: readonly (Param | null)[],
  order: 'ltr' | 'rtl' = 'ltr',
): Lowered {
  const ordered = order === 'rtl' ? operands.slice().reverse() : operands.slice();
  let dynChecked = false;
  const code = guarded(ctx, ordered, (refsInOrder) => {
    const refs = order === 'rtl' ? refsInOrder.slice().reverse() : refsInOrder;
    let inner = body(refs);
    for (let i = refs.length - 1; i >= 0; i--) {
      const param = params?.[i] ?? null;
      const op = operands[i] as Lowered;
      if (param === null || op.ty.k !== 'dyn') continue;
      dynChecked = true;
      inner = _`(${kindTest(ctx, refs[i] as Code, param)} ? ${inner} : ${ctx.rt('wrong')}(${refs[i] as Code}))`;
    }
    return inner;
  });
  return lowered(code, ty, mayFail || dynChecked || operands.some((o) => o.err));
}

/** The run-time test that a dyn value can be passed as `param`. */
function kindTest(ctx: ExprContext, ref: Code, param: Param): Code {
  switch (param) {
    case 'string':
      return _`typeof ${ref} === "string"`;
    case 'double':
      return _`typeof ${ref} === "number"`;
    case 'bool':
      return _`typeof ${ref} === "boolean"`;
    case 'list':
      return _`${ctx.rt('isList')}(${ref})`;
    default:
      // dyn never holds an int (JSON numbers are doubles), a timestamp or a duration.
      return _`false`;
  }
}

function accepts(ty: Ty, param: Param): boolean {
  return ty.k === 'dyn' || ty.k === param;
}

function requireParams(node: ASTNode, fn: string, operands: readonly Lowered[], params: readonly Param[]): void {
  operands.forEach((op, i) => {
    const p = params[i] as Param;
    if (!accepts(op.ty, p)) {
      throw new CompileError(`${fn} expects ${p}, got ${describe(op.ty)}`, node);
    }
  });
}

/** A method on strings: receiver and arguments must be strings (or dyn). */
function stringMethod(
  name: string, wire: string, arity: number, body: (ctx: ExprContext, v: Code[]) => Code, ty: Ty, mayFail: boolean, cost: FunctionDef['cost'],
): FunctionDef {
  const params = Array<Param>(arity + 1).fill('string');
  return {
    name, wire, receiver: true, arity: [arity], cost,
    lower: ({ ctx, node, operands }) => {
      requireParams(node, wire, operands, params);
      return call(ctx, operands, ty, mayFail, (v) => body(ctx, v), params, 'rtl');
    },
  };
}

/**
 * Why a matches() pattern is refused, or null. Patterns are RE2 syntax (the
 * CEL specification's), compiled by re2js: matching is linear in the input
 * whatever the pattern, so no pattern is refused for being slow; only syntax
 * RE2 does not have (backreferences, lookarounds) or that does not parse.
 */
export function regexProblem(source: string): string | null {
  if (characterLength(source) > kMaxRegexPatternLength) return `the pattern is longer than ${kMaxRegexPatternLength} characters`;
  try {
    RE2JS.compile(source);
    return null;
  } catch (err) {
    return `invalid regular expression (RE2 syntax): ${(err as Error).message}`;
  }
}

/** The pattern's factor in the cost of matches(): cel-go's RegexStringLengthCostFactor (0.25) of its length. */
export function regexWeight(source: string): number {
  return Math.max(1, Math.ceil(source.length * 0.25));
}

const kListCreateCost = 10;

/** startsWith / endsWith compare as many units as the argument has. */
function prefixCost({ sizes }: CallCostArgs): Estimate {
  return { cost: 1 + runtime.traversal((sizes[1] ?? kAnySize).len), size: kScalarSize };
}

/** Folds a string-literal argument, for patterns, timestamps and durations. */
function literalString(op: Lowered): string | null {
  return typeof op.konst?.value === 'string' ? op.konst.value : null;
}

const kTimestampParts: Readonly<Record<string, number>> = {
  getFullYear: runtime.TS_FULL_YEAR, getMonth: runtime.TS_MONTH, getDate: runtime.TS_DATE,
  getDayOfMonth: runtime.TS_DAY_OF_MONTH, getDayOfWeek: runtime.TS_DAY_OF_WEEK, getHours: runtime.TS_HOURS,
  getMinutes: runtime.TS_MINUTES, getSeconds: runtime.TS_SECONDS, getMilliseconds: runtime.TS_MILLISECONDS,
  getDayOfYear: runtime.TS_DAY_OF_YEAR,
};
const kDurationParts: Readonly<Record<string, number>> = {
  getHours: runtime.DUR_HOURS, getMinutes: runtime.DUR_MINUTES, getSeconds: runtime.DUR_SECONDS,
  getMilliseconds: runtime.DUR_MILLISECONDS,
};

function timeAccessor(wire: string): FunctionDef {
  return {
    name: `TIME_${wire.toUpperCase()}`, wire, receiver: true, arity: [0, 1], cost: scalarCost,
    lower: ({ ctx, node, operands }) => {
      const [recv] = operands as [Lowered];
      if (operands.length > 1) throw new CompileError(`${wire}() with a time zone is not supported; times are UTC`, node);
      if (recv.ty.k === 'timestamp' && kTimestampParts[wire] !== undefined) {
        return call(ctx, [recv], kInt, false, (v) => _`${ctx.rt('tsPart')}(${v[0]}, ${kTimestampParts[wire] as number})`);
      }
      if (recv.ty.k === 'duration' && kDurationParts[wire] !== undefined) {
        return call(ctx, [recv], kInt, false, (v) => _`${ctx.rt('durPart')}(${v[0]}, ${kDurationParts[wire] as number})`);
      }
      if (recv.ty.k === 'dyn') return call(ctx, [recv], kInt, true, (v) => _`${ctx.rt('wrong')}(${v[0]})`);
      throw new CompileError(`${wire}() is not defined on ${describe(recv.ty)}`, node);
    },
  };
}

function sizeOf({ ctx, node, operands }: CallArgs): Lowered {
  const [v] = operands as [Lowered];
  const k = v.konst?.value;
  if (typeof k === 'string') return constant(runtime.codePoints(k), kInt);
  if (Array.isArray(k)) return constant(k.length, kInt);
  switch (v.ty.k) {
    case 'string':
      return call(ctx, [v], kInt, true, (r) => _`${ctx.rt('strSize')}(${r[0]})`);
    case 'list':
      return call(ctx, [v], kInt, false, (r) => _`${r[0]}.length`);
    case 'map':
    case 'dyn':
      return call(ctx, [v], kInt, v.ty.k === 'dyn', (r) => _`${ctx.rt('size')}(${r[0]}, ${kindCode(v.ty)})`);
    default:
      throw new CompileError(`size() is not defined on ${describe(v.ty)}`, node);
  }
}

function conversion(wire: 'int' | 'double' | 'string' | 'bool'): FunctionDef {
  const ty = { int: kInt, double: kDouble, string: kString, bool: kBool }[wire];
  const dynHelper = ({ int: 'intOf', double: 'doubleOf', string: 'stringOf', bool: 'boolOf' } as const)[wire];
  return {
    name: `TO_${wire.toUpperCase()}`, wire, receiver: false, arity: [1],
    // Parsing or printing one value; string() of a string is that string.
    cost: ({ sizes }) => ({ cost: 1 + runtime.traversal(first(sizes).len), size: wire === 'string' ? maxSize(first(sizes), { len: 32, deep: 32, input: false }) : kScalarSize }),
    lower: ({ ctx, node, operands }) => {
      const [v] = operands as [Lowered];
      const from = v.ty.k;
      if (from === wire || (wire === 'double' && from === 'int')) return { ...v, ty };
      if (from === 'dyn') return call(ctx, [v], ty, true, (r) => _`${ctx.rt(dynHelper)}(${r[0]})`);
      const pick = (helper: keyof typeof runtime, mayFail: boolean): Lowered =>
        call(ctx, [v], ty, mayFail, (r) => _`${ctx.rt(helper)}(${r[0]})`);
      if (wire === 'int' && from === 'double') return pick('intOfDouble', true);
      if (wire === 'int' && from === 'string') return pick('intOfString', true);
      if (wire === 'double' && from === 'string') return pick('doubleOfString', true);
      if (wire === 'string' && from === 'int') return call(ctx, [v], ty, false, (r) => _`("" + ${r[0]})`);
      if (wire === 'string' && from === 'double') return pick('stringOfDouble', false);
      if (wire === 'string' && from === 'bool') return call(ctx, [v], ty, false, (r) => _`(${r[0]} ? "true" : "false")`);
      if (wire === 'bool' && from === 'string') return pick('boolOfString', true);
      if (wire === 'int' && from === 'timestamp') return pick('intOfTimestamp', false);
      if (wire === 'string' && from === 'timestamp') return pick('stringOfTimestamp', false);
      if (wire === 'string' && from === 'duration') return pick('stringOfDuration', false);
      throw new CompileError(`${wire}() does not accept ${describe(v.ty)}`, node);
    },
  };
}

const kFunctionList: readonly FunctionDef[] = [
  // size() of a string counts its code points: one pass (runtime strSize).
  { name: 'SIZE', wire: 'size', receiver: false, arity: [1], lower: sizeOf, cost: passCost() },
  { name: 'SIZE', wire: 'size', receiver: true, arity: [0], lower: sizeOf, cost: passCost() },
  stringMethod('CONTAINS', 'contains', 1, (c, v) => _`${c.rt('contains')}(${v[0]}, ${v[1]})`, kBool, true, passCost()),
  stringMethod('STARTS_WITH', 'startsWith', 1, (c, v) => _`${c.rt('startsWith')}(${v[0]}, ${v[1]})`, kBool, true, prefixCost),
  stringMethod('ENDS_WITH', 'endsWith', 1, (c, v) => _`${c.rt('endsWith')}(${v[0]}, ${v[1]})`, kBool, true, prefixCost),
  stringMethod('LOWER_ASCII', 'lowerAscii', 0, (c, v) => _`${c.rt('lowerAscii')}(${v[0]})`, kString, true, passCost(true)),
  stringMethod('UPPER_ASCII', 'upperAscii', 0, (c, v) => _`${c.rt('upperAscii')}(${v[0]})`, kString, true, passCost(true)),
  stringMethod('TRIM', 'trim', 0, (c, v) => _`${c.rt('trim')}(${v[0]})`, kString, true, passCost(true)),
  {
    name: 'MATCHES', wire: 'matches', receiver: true, arity: [1],
    // One pass per quarter character of the pattern (runtime reTest).
    cost: ({ sizes, pattern }) => ({
      cost: 1 + runtime.traversal(first(sizes).len) * regexWeight(pattern ?? 'x'.repeat(kMaxRegexPatternLength)),
      size: kScalarSize,
    }),
    lower: ({ ctx, node, operands, nodes }) => {
      const [recv, pattern] = operands as [Lowered, Lowered];
      const patternNode = nodes[1] ?? node;
      requireParams(node, 'matches', [recv], ['string']);
      const source = literalString(pattern);
      if (source === null) {
        throw new CompileError('matches() needs a string literal pattern, so it can be checked before it runs', patternNode);
      }
      const problem = regexProblem(source);
      if (problem !== null) throw new CompileError(problem, patternNode);
      const re = ctx.ruleset.constant({ re: source });
      return call(ctx, [recv], kBool, true, (v) => _`${ctx.rt('reTest')}(${re}, ${v[0]}, ${regexWeight(source)})`, ['string']);
    },
  },
  ...(['indexOf', 'lastIndexOf'] as const).map((wire): FunctionDef => ({
    name: wire === 'indexOf' ? 'INDEX_OF' : 'LAST_INDEX_OF', wire, receiver: true, arity: [1, 2], cost: passCost(),
    lower: ({ ctx, node, operands }) => {
      const params: Param[] = ['string', 'string', 'int'];
      requireParams(node, wire, operands, params);
      const last = wire === 'lastIndexOf';
      return call(ctx, operands, kInt, operands.length === 3, (v) =>
        _`${ctx.rt('indexOf')}(${v[0]}, ${v[1]}, ${v[2] ?? _`0`}, ${operands.length === 3}, ${last})`, params, 'rtl');
    },
  })),
  {
    name: 'SUBSTRING', wire: 'substring', receiver: true, arity: [1, 2], cost: passCost(true),
    lower: ({ ctx, node, operands }) => {
      const params: Param[] = ['string', 'int', 'int'];
      requireParams(node, 'substring', operands, params);
      return call(ctx, operands, kString, true, (v) =>
        _`${ctx.rt('substring')}(${v[0]}, ${v[1]}, ${v[2] ?? _`0`}, ${operands.length === 3})`, params, 'rtl');
    },
  },
  {
    name: 'CHAR_AT', wire: 'charAt', receiver: true, arity: [1], cost: passCost(),
    lower: ({ ctx, node, operands }) => {
      const params: Param[] = ['string', 'int'];
      requireParams(node, 'charAt', operands, params);
      return call(ctx, operands, kString, true, (v) => _`${ctx.rt('charAt')}(${v[0]}, ${v[1]})`, params, 'rtl');
    },
  },
  {
    name: 'SPLIT', wire: 'split', receiver: true, arity: [1, 2],
    // One pass; at most one part per code unit plus one, all of them together no longer than the string.
    cost: ({ sizes }) => {
      const n = first(sizes).len;
      return { cost: 1 + kListCreateCost + runtime.traversal(n), size: { len: n + 1, deep: 2 * n + 1, input: false } };
    },
    lower: ({ ctx, node, operands, resultTy }) => {
      const params: Param[] = ['string', 'string', 'int'];
      requireParams(node, 'split', operands, params);
      return call(ctx, operands, resultTy, true, (v) => _`${ctx.rt('split')}(${v[0]}, ${v[1]}, ${v[2] ?? _`-1`})`, params, 'rtl');
    },
  },
  {
    name: 'JOIN', wire: 'join', receiver: true, arity: [0, 1],
    // Every element once, then a pass over the result (runtime joinList).
    cost: ({ sizes }) => {
      const list = first(sizes);
      const n = elementsOf(list);
      const out = list.deep + n * (sizes[1]?.len ?? 0);
      return { cost: 1 + n + runtime.traversal(out), size: { len: out, deep: out, input: false } };
    },
    lower: ({ ctx, node, operands }) => {
      const params: Param[] = ['list', 'string'];
      requireParams(node, 'join', operands, params);
      return call(ctx, operands, kString, true, (v) => _`${ctx.rt('joinList')}(${v[0]}, ${v[1] ?? _`""`})`, params, 'rtl');
    },
  },
  {
    name: 'TIMESTAMP', wire: 'timestamp', receiver: false, arity: [1], cost: passCost(),
    lower: ({ ctx, node, operands }) => {
      const [v] = operands as [Lowered];
      const text = literalString(v);
      if (text !== null) {
        const ms = runtime.parseTimestamp(text);
        if (ms !== ms) throw new CompileError(`timestamp(${JSON.stringify(text)}) is not an RFC 3339 timestamp`, node);
        return constant(ms, kTimestamp);
      }
      if (v.ty.k === 'int') return call(ctx, [v], kTimestamp, true, (r) => _`${ctx.rt('toTimestampFromSeconds')}(${r[0]})`);
      requireParams(node, 'timestamp', [v], ['string']);
      return call(ctx, [v], kTimestamp, true, (r) => _`${ctx.rt('toTimestamp')}(${r[0]})`, ['string']);
    },
  },
  {
    name: 'DURATION', wire: 'duration', receiver: false, arity: [1], cost: passCost(),
    lower: ({ ctx, node, operands }) => {
      const [v] = operands as [Lowered];
      const text = literalString(v);
      if (text !== null) {
        const ms = runtime.parseDuration(text);
        if (ms !== ms && text.length > runtime.kMaxDurationTextLength) throw new CompileError(`duration(${JSON.stringify(text)}) is longer than ${runtime.kMaxDurationTextLength} characters, the most a duration may be written with`, node);
        if (ms !== ms && runtime.isDurationText(text)) throw new CompileError(`duration(${JSON.stringify(text)}) is beyond the range of a duration (about ±292 years)`, node);
        if (ms !== ms) throw new CompileError(`duration(${JSON.stringify(text)}) is not a duration like "720h" or "1h30m"`, node);
        return constant(ms, kDuration);
      }
      requireParams(node, 'duration', [v], ['string']);
      return call(ctx, [v], kDuration, true, (r) => _`${ctx.rt('toDuration')}(${r[0]})`, ['string']);
    },
  },
  {
    name: 'IN_LIST', wire: 'in_list', receiver: false, arity: [2],
    // One pass to normalise the value (runtime inList); the probes after it are a bounded number
    // of hash lookups whatever the list's size (one per prefix length of an ip list, per label of
    // an email domain): O(1) in the list.
    cost: ({ sizes }) => ({ cost: 1 + runtime.traversal((sizes[1] ?? kAnySize).len), size: kScalarSize }),
    lower: ({ ctx, node, operands, nodes }) => {
      const [id, value] = operands as [Lowered, Lowered];
      const idNode = nodes[0] ?? node;
      const listId = literalString(id);
      if (listId === null) {
        throw new CompileError("in_list() needs the list id as a string literal, e.g. in_list('blocked_emails', user.email)", idNode);
      }
      if (!kListIdPattern.test(listId)) throw new CompileError(`'${listId}' is not a list id (lower-case letters, digits and _, starting with a letter)`, idNode);
      if (ctx.ruleset.knownLists !== null && !ctx.ruleset.knownLists.has(listId)) {
        throw new CompileError(`the project has no list '${listId}' (create it with POST /v1/lists first)`, idNode);
      }
      requireParams(node, 'in_list', [value], ['string']);
      ctx.ruleset.lists.add(listId);
      ctx.ruleset.ruleLists.add(listId);
      const lists = ctx.ruleset.listsVar();
      ctx.frame.reads.add(lists);
      return call(ctx, [value], kBool, true, (v) => _`${ctx.rt('inList')}(${lists}, ${listId}, ${v[0]})`, ['string']);
    },
  },
  conversion('int'),
  conversion('double'),
  conversion('string'),
  conversion('bool'),
  ...[...new Set([...Object.keys(kTimestampParts), ...Object.keys(kDurationParts)])].map(timeAccessor),
];

function functionKey(receiver: boolean, wire: string): string {
  return `${receiver ? '.' : ''}${wire}`;
}

export const kFunctions: ReadonlyMap<string, readonly FunctionDef[]> = (() => {
  const map = new Map<string, FunctionDef[]>();
  for (const def of kFunctionList) {
    const key = functionKey(def.receiver, def.wire);
    map.set(key, [...(map.get(key) ?? []), def]);
  }
  return map;
})();

/** The definition for a call, or null when the function is not supported. */
export function findFunction(receiver: boolean, wire: string, arity: number): FunctionDef | null {
  return kFunctions.get(functionKey(receiver, wire))?.find((d) => d.arity.includes(arity)) ?? null;
}

/** Names of supported functions, for error messages and docs. */
export function supportedFunctionNames(): string[] {
  return [...new Set(kFunctionList.map((d) => `${d.receiver ? '.' : ''}${d.wire}()`))].sort();
}

