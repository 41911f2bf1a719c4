// One expression: parse and type-check with cel-js, then lower. Errors come
// back as values with a position, never thrown.

import type { ASTNode } from '@marcbachmann/cel-js';
import { collectOpenMembers, environmentFor, parsedChildren, parsingEnvironment } from './environment.js';
import { CompileError, ExprContext, FunctionFrame, Lowered, RulesetScope } from './ir.js';
import { estimateCost, formatCost } from './cost.js';
import { kCelLimits, kMaxBodyBytes, kMaxExpressionLength, kMaxNestingDepth, kMaxRuleCost } from './limits.js';
import { lowerCondition } from './lower.js';
import { characterLength } from '../src/shared/text.js';

export interface Position {
  line: number;
  column: number;
  offset: number;
}

export interface ExpressionProblem {
  message: string;
  position: Position | null;
}

/** 1-based line and column of an offset. */
export function positionOf(source: string, offset: number): Position {
  const clamped = Math.max(0, Math.min(offset, source.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: clamped - lineStart + 1, offset: clamped };
}

function problem(source: string, message: string, offset: number | null): ExpressionProblem {
  if (offset === null) return { message, position: null };
  const position = positionOf(source, offset);
  return { message: `line ${position.line}, column ${position.column}: ${message}`, position };
}

interface CelErrorLike {
  readonly summary?: string;
  readonly message: string;
  readonly range?: { readonly start: number };
}

function fromCelError(source: string, err: unknown): ExpressionProblem {
  const e = err as CelErrorLike;
  const summary = typeof e.summary === 'string' ? e.summary : String(e.message).split('\n')[0] ?? 'invalid expression';
  return problem(source, inOurTerms(summary), typeof e.range?.start === 'number' ? e.range.start : null);
}

/** cel-js's depth limit counts the whole expression as a level (kCelLimits): its message names ours. */
function inOurTerms(summary: string): string {
  return summary.startsWith(`Exceeded maxDepth (${kCelLimits.maxDepth})`) ? `Exceeded maxDepth (${kMaxNestingDepth}): nested more than ${kMaxNestingDepth} levels deep` : summary;
}

/**
 * cel-js's checker, asked to compare an element of an empty list or map literal (whose type it
 * cannot tell), fails with an internal message and no position ("Operator overload 'int > int:
 * bool' overlaps with …"). Said plainly instead, at the first empty literal.
 */
function emptyLiteralProblem(source: string, ast: ASTNode, err: unknown): ExpressionProblem | null {
  const e = err as CelErrorLike;
  if (typeof e.range?.start === 'number' || !/^Operator overload .* overlaps with /.test(String(e.message))) return null;
  const literal = firstEmptyLiteral(ast);
  if (literal === null) return null;
  return problem(source, 'an element of an empty list or map literal has no type to compare with: the literal has no elements, so write the result the comparison would give', literal.pos ?? literal.start ?? 0);
}

function firstEmptyLiteral(node: ASTNode): (ASTNode & { pos?: number; start?: number }) | null {
  if ((node.op === 'list' || node.op === 'map') && Array.isArray(node.args) && node.args.length === 0) return node;
  const children: unknown[] = Array.isArray(node.args) ? node.args : [node.args];
  for (const child of children.flat()) {
    if (typeof child === 'object' && child !== null && 'op' in child) {
      const found = firstEmptyLiteral(child as ASTNode);
      if (found !== null) return found;
    }
  }
  return null;
}

/** cel-go's macros of two variables, and its other name of exists_one, with what a rule writes instead. */
const kTwoVariableMacros: ReadonlyMap<string, string> = new Map([
  ['existsOne', 'list.exists_one(v, …)'],
  ['transformList', 'list.map(v, …) or list.filter(v, …)'],
  ['transformMap', 'list.map(v, …) or list.filter(v, …)'],
  ['transformMapEntry', 'list.map(v, …) or list.filter(v, …)'],
]);
/** The one-variable macros, which cel-go also takes with two. */
const kOneVariableMacros: ReadonlySet<string> = new Set(['all', 'exists', 'exists_one']);

/**
 * cel-js's parser reads `list.exists(i, v, …)` as a call whose first argument is a variable it does
 * not know ("Unknown variable: i"): say what the rule uses instead.
 */
function twoVariableMacroProblem(source: string, node: ASTNode): ExpressionProblem | null {
  if (node.op === 'rcall') {
    const [name, , args] = node.args as [string, ASTNode, ASTNode[]];
    const at = node as ASTNode & { pos?: number; start?: number };
    const instead = kTwoVariableMacros.get(name);
    if (instead !== undefined) return problem(source, `${name}() is not supported: write ${instead}`, at.pos ?? at.start ?? 0);
    if (kOneVariableMacros.has(name) && args.length === 3 && args[0]!.op === 'id' && args[1]!.op === 'id') {
      return problem(source, `${name}() of two variables is not supported: write the one-variable form, list.${name}(v, …)`, at.pos ?? at.start ?? 0);
    }
  }
  for (const child of parsedChildren(node)) {
    const found = twoVariableMacroProblem(source, child);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Parses and type-checks; returns the checked AST (nodes carry checkedType).
 * A rule's expression must be bool; `anyType` lifts that for value.ts.
 */
export function checkExpression(source: unknown, anyType = false): { ok: true; ast: ASTNode } | { ok: false; problem: ExpressionProblem } {
  if (typeof source !== 'string') return { ok: false, problem: { message: 'must be a string', position: null } };
  if (source.trim() === '') return { ok: false, problem: { message: 'must not be empty', position: null } };
  if (characterLength(source) > kMaxExpressionLength) {
    return { ok: false, problem: { message: `is longer than ${kMaxExpressionLength} characters`, position: null } };
  }
  let env;
  try {
    env = environmentFor(collectOpenMembers(parsingEnvironment().parse(source).ast));
  } catch (err) {
    return { ok: false, problem: fromCelError(source, err) };
  }
  const parsed = env.parse(source);
  const result = parsed.check();
  if (!result.valid) {
    const problemFound = twoVariableMacroProblem(source, parsed.ast) ?? emptyLiteralProblem(source, parsed.ast, result.error) ?? fromCelError(source, result.error);
    return { ok: false, problem: problemFound };
  }
  if (!anyType && result.type !== 'bool' && result.type !== 'dyn') {
    return { ok: false, problem: problem(source, `the expression must be bool, not ${result.type}`, 0) };
  }
  return { ok: true, ast: parsed.ast };
}

/**
 * Checks and lowers an expression into `scope` (the ruleset being emitted).
 * The lowered code uses temporaries from `frame`. `cost` is its worst-case
 * cost (cost.ts); the caller holds the rule's total to kMaxRuleCost.
 */
export function compileExpression(
  source: unknown,
  scope: RulesetScope,
  frame: FunctionFrame,
): { ok: true; value: Lowered; cost: number } | { ok: false; problem: ExpressionProblem } {
  const checked = checkExpression(source);
  if (!checked.ok) return checked;
  try {
    const value = lowerCondition(new ExprContext(scope, frame, new Map()), checked.ast);
    return { ok: true, value, cost: estimateCost(checked.ast) };
  } catch (err) {
    if (!(err instanceof CompileError)) throw err;
    return { ok: false, problem: compileProblem(source as string, err) };
  }
}

/** A CompileError as a problem with its position. */
export function compileProblem(source: string, err: CompileError): ExpressionProblem {
  const node = err.node;
  const offset = node === null ? null : (node.pos ?? node.start) + err.offsetInNode;
  return problem(source, err.message, offset);
}

/**
 * The problem with a rule whose worst-case cost is over kMaxRuleCost, or
 * null. `costs` are those of its expression and its bands, in that order.
 */
export function ruleCostProblem(costs: readonly number[], limit = kMaxRuleCost): { index: number; message: string } | null {
  const total = costs.reduce((a, b) => a + b, 0);
  if (total <= limit) return null;
  // Name the expression or band that costs most: that is what to rewrite.
  let index = 0;
  costs.forEach((c, i) => {
    if (c > (costs[index] ?? 0)) index = i;
  });
  const parts = costs.length > 1 ? ` (this ${index === 0 ? 'expression' : 'band'}: ${formatCost(costs[index] ?? 0)}; the expression and all bands count together)` : '';
  return {
    index,
    message: `the estimated worst-case cost of the rule is ${formatCost(total)}${parts}, over the limit of ${formatCost(limit)}: ` +
      `strings and lists read from the event are bounded only by the 1 MiB body (up to ${formatCost(kMaxBodyBytes)} characters, ${formatCost(kMaxBodyBytes / 2)} list elements), ` +
      'so loops over them must not nest, nor run matches(), split() or concatenations on such values for each element, and each pass over one counts as if it held that many: a rule makes a few at most (docs/rules.md, "Limits")',
  };
}
