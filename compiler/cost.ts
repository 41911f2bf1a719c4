// Worst-case cost of an expression, in the manner of cel-go's cost estimator
// (checker/cost.go): every node costs what it does at most, given upper
// bounds of the sizes of the values it works on, and a comprehension costs
// its body times the largest number of elements it can iterate.
//
// Sizes come from the input bound: the request body is at most 1 MiB
// (kMaxBodyBytes), so a string read from the event has at most that many
// UTF-16 units, a list at most half as many elements (each takes a value and
// a comma) and anything in `extras` at most that much in total. Values a rule
// builds (concatenations, map(), split()) are bounded from their operands.
//
// Units are cel-go's: 1 per variable, field, call and comparison; a pass
// over a string of n units costs traversal(n) (cel-go's 0.1 per unit, see
// runtime); matches() costs that times a quarter of the pattern's length;
// creating a list 10, a map 30. The run-time budget (runtime `budget`) spends
// the same units for the same operations, so a rule never spends more at run
// time than its estimate here.
//
// The walk mirrors lower.ts on the checked AST; what lowering refuses is not
// estimated precisely (it never runs), only bounded.

import type { ASTNode } from '@marcbachmann/cel-js';
import { findFunction, kBinaryOps } from './ops.js';
import { traversal } from './runtime/index.js';
import { kExtras, kGroupByName, kScalarByName } from './schema.js';
import { elementOf, elementsOf, kInputSize, kScalarSize, maxSize } from './size.js';
import type { Estimate, SizeBound } from './size.js';

export type { Estimate, SizeBound } from './size.js';

const kSelectCost = 1;
const kCallCost = 1;
const kListCreateCost = 10;
const kMapCreateCost = 30;

function checkedKind(node: ASTNode): string {
  const decl = (node as unknown as { checkedType?: { kind: string; name: string } }).checkedType;
  if (decl === undefined) return 'dyn';
  return decl.kind === 'primitive' ? decl.name : decl.kind;
}

function metaOf(node: ASTNode): { alternate?: ASTNode; macro?: unknown } {
  return (node as unknown as { meta: { alternate?: ASTNode; macro?: unknown } }).meta ?? {};
}

/** Bound of a value read from the input, by its checked type. */
function readSize(node: ASTNode): SizeBound {
  const kind = checkedKind(node);
  return kind === 'string' || kind === 'dyn' || kind === 'list' || kind === 'map' ? kInputSize : kScalarSize;
}

type Scope = ReadonlyMap<string, SizeBound>;

/**
 * Estimating one iteration's own work: nested macros count only their range and one unit, and an
 * operator or function its one unit, since what it spends on the sizes of its values (a pass over
 * a string, over a list) its run-time function spends itself.
 */
let shallow = false;

/** An operator's or function's estimate as one iteration's own work counts it (see `shallow`). */
function ownWork(estimate: Estimate): Estimate {
  return shallow ? { cost: kCallCost, size: estimate.size } : estimate;
}

function estimateNode(node: ASTNode, scope: Scope, depth: number): Estimate {
  const sub = (n: ASTNode): Estimate => estimateNode(n, scope, depth);
  switch (node.op) {
    case 'value': {
      const v = node.args as unknown;
      const n = typeof v === 'string' ? v.length : 1;
      return { cost: 0, size: { len: n, deep: n, input: false } };
    }
    case 'id': {
      const name = node.args as string;
      const bound = scope.get(name);
      if (bound !== undefined) return { cost: kSelectCost, size: bound };
      if (name === kExtras.name || kGroupByName.has(name)) return { cost: kSelectCost, size: kInputSize };
      const scalar = kScalarByName.get(name);
      return { cost: kSelectCost, size: scalar?.type === 'string' ? kInputSize : kScalarSize };
    }
    case '.':
    case '.?': {
      const base = sub((node.args as [ASTNode, string])[0]);
      return { cost: base.cost + kSelectCost, size: base.size.input ? readSize(node) : elementOf(base.size) };
    }
    case '[]': {
      const [b, k] = node.args as [ASTNode, ASTNode];
      const base = sub(b);
      const key = sub(k);
      return { cost: base.cost + key.cost + kSelectCost, size: base.size.input ? readSize(node) : elementOf(base.size) };
    }
    case 'list': {
      const items = (node.args as ASTNode[]).map((n) => sub(n));
      return {
        cost: kListCreateCost + sum(items.map((i) => i.cost)),
        size: { len: items.length, deep: items.length + sum(items.map((i) => i.size.deep)), input: false },
      };
    }
    case 'map': {
      const parts = (node.args as [ASTNode, ASTNode][]).flatMap(([k, v]) => [sub(k), sub(v)]);
      return {
        cost: kMapCreateCost + sum(parts.map((p) => p.cost)),
        size: { len: parts.length / 2, deep: parts.length + sum(parts.map((p) => p.size.deep)), input: false },
      };
    }
    case '?:': {
      const [c, l, r] = (node.args as ASTNode[]).map((n) => sub(n)) as [Estimate, Estimate, Estimate];
      return { cost: c.cost + Math.max(l.cost, r.cost), size: maxSize(l.size, r.size) };
    }
    case '&&':
    case '||': {
      const [l, r] = (node.args as ASTNode[]).map((n) => sub(n)) as [Estimate, Estimate];
      return { cost: l.cost + r.cost, size: kScalarSize };
    }
    case '!_':
      return { cost: sub(node.args as ASTNode).cost, size: kScalarSize };
    case '-_':
      return { cost: sub(node.args as ASTNode).cost + kCallCost, size: kScalarSize };
    case 'call':
    case 'rcall':
      return estimateCall(node, scope, depth);
    default: {
      const [ln, rn] = node.args as [ASTNode, ASTNode];
      const l = sub(ln);
      const r = sub(rn);
      const def = kBinaryOps[node.op];
      const own = def === undefined
        ? { cost: kCallCost, size: kScalarSize }
        : ownWork(def.cost({ left: l.size, right: r.size, kind: checkedKind(node), leftKind: checkedKind(ln), rightKind: checkedKind(rn), rightIsLiteralList: literalList(rn) }));
      return { cost: l.cost + r.cost + own.cost, size: own.size };
    }
  }
}

/** A list literal of plain literals: `in` on it is one Set lookup (lower.ts literalList). */
function literalList(node: ASTNode): boolean {
  return node.op === 'list' && (node.args as ASTNode[]).every((e) => e.op === 'value' && e.args !== null);
}

function estimateCall(node: ASTNode, scope: Scope, depth: number): Estimate {
  const receiver = node.op === 'rcall';
  const name = (node.args as unknown as [string])[0];
  const args = receiver ? (node.args as [string, ASTNode, ASTNode[]])[2] : (node.args as [string, ASTNode[]])[1];
  const recv = receiver ? (node.args as [string, ASTNode, ASTNode[]])[1] : null;
  const meta = metaOf(node);
  if (meta.macro !== undefined) {
    // has(a.b): the selection, no more.
    const sel = args[0];
    return { cost: (sel === undefined ? 0 : estimateNode(sel, scope, depth).cost) + kCallCost, size: kScalarSize };
  }
  if (meta.alternate !== undefined && recv !== null) return estimateMacro(name, recv, args, scope, depth);
  const nodes = recv === null ? [...args] : [recv, ...args];
  const operands = nodes.map((n) => estimateNode(n, scope, depth));
  const def = findFunction(receiver, name, args.length);
  const pattern = name === 'matches' && args[0]?.op === 'value' && typeof args[0].args === 'string' ? args[0].args : null;
  const own = def === null
    ? { cost: kCallCost, size: kInputSize }
    : ownWork(def.cost({ sizes: operands.map((o) => o.size), pattern, kind: checkedKind(node) }));
  return { cost: sum(operands.map((o) => o.cost)) + own.cost, size: own.size };
}

/**
 * all, exists, exists_one, filter, map: the body once per element, each
 * iteration one unit. The elements of a collection share its total size
 * (`deep`): a list from the event cannot hold half a million strings of a
 * megabyte each. So the body is estimated twice, with an element of average
 * size and with one as large as the whole, and the sum over n elements is
 * bounded by n times the first plus the second once. For a body whose cost
 * grows linearly or faster with the element (a scan, a nested loop over it)
 * that is a bound; for one that grows slower (a comparison with a short
 * literal) the average term covers it.
 */
function estimateMacro(name: string, recv: ASTNode, args: readonly ASTNode[], scope: Scope, depth: number): Estimate {
  const range = estimateNode(recv, scope, depth);
  if (shallow) return { cost: range.cost + 1, size: range.size };
  const n = elementsOf(range.size);
  const varName = args[0]?.op === 'id' ? (args[0].args as string) : '';
  const body = (element: SizeBound): Estimate[] => {
    const inner = new Map(scope);
    inner.set(varName, element);
    return args.slice(1).map((a) => estimateNode(a, inner, depth + 1));
  };
  const largest = body(elementOf(range.size));
  // Past a few nested levels the average case is skipped: the walk would double per level.
  const averageSize = Math.ceil(range.size.deep / Math.max(1, n));
  const average = depth < kAveragedDepth
    ? body({ len: averageSize, deep: averageSize, input: range.size.input })
    : largest;
  const costOf = (b: Estimate[]): number => sum(b.map((e) => e.cost));
  const loop = n * (1 + costOf(average)) + costOf(largest);
  // Iterating a map lists its keys first (runtime iterable).
  const keys = checkedKind(recv) === 'list' ? 0 : traversal(range.size.len);
  const cost = range.cost + keys + loop;
  switch (name) {
    case 'filter':
      return { cost, size: range.size };
    case 'map': {
      const valueOf = (b: Estimate[]): SizeBound => b[b.length - 1]?.size ?? kScalarSize;
      const deep = n * (1 + valueOf(average).deep) + valueOf(largest).deep;
      return { cost: cost + kListCreateCost, size: { len: n, deep, input: false } };
    }
    default:
      return { cost, size: kScalarSize };
  }
}

/** Macro nesting up to which the average element is estimated apart (2^depth walks of the body). */
const kAveragedDepth = 6;

function sum(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}

/** The worst-case cost of a checked expression. */
export function estimateCost(root: ASTNode): number {
  return estimateNode(root, new Map(), 0).cost;
}

/**
 * Units one iteration of a macro spends at run time (lower.ts): one, plus the
 * body's own work — a unit per node, what creating a list or map costs —
 * whatever the element; the body's calls spend their passes over values
 * themselves, and a macro nested in the body its own iterations. Together never
 * more than the estimate counts per element, so run time stays within it.
 */
export function iterationCost(body: readonly ASTNode[], varName: string): number {
  shallow = true;
  try {
    const scope = new Map([[varName, kScalarSize]]);
    return 1 + sum(body.map((n) => estimateNode(n, scope, kAveragedDepth).cost));
  } finally {
    shallow = false;
  }
}

/** A cost for messages: grouped digits, or "unbounded". */
export function formatCost(cost: number): string {
  return Number.isFinite(cost) ? Math.ceil(cost).toLocaleString('en-US') : 'unbounded';
}
