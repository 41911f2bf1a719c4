// Shared state and helpers of the lowering: static types, lowered values,
// the per-ruleset scope (constants, hoisted reads, helper functions) and the
// per-function frame (temporaries).

import type { ASTNode } from '@marcbachmann/cel-js';
import { Code, Name, NameScope, _, join, safeStringify } from './codegen.js';
import type { GroupDef } from './schema.js';
import type { ConstantSpec } from './runtime/index.js';
import * as runtime from './runtime/index.js';

/** Static type of a lowered value (from cel-js's checked types). */
export type Ty =
  | { readonly k: 'bool' | 'int' | 'double' | 'string' | 'null' | 'timestamp' | 'duration' | 'dyn' }
  | { readonly k: 'list'; readonly elem: Ty }
  | { readonly k: 'map'; readonly key: Ty; readonly val: Ty }
  | { readonly k: 'group'; readonly group: GroupDef };

export const kBool: Ty = { k: 'bool' };
export const kInt: Ty = { k: 'int' };
export const kDouble: Ty = { k: 'double' };
export const kString: Ty = { k: 'string' };
export const kNull: Ty = { k: 'null' };
export const kTimestamp: Ty = { k: 'timestamp' };
export const kDuration: Ty = { k: 'duration' };
export const kDyn: Ty = { k: 'dyn' };

/** Runtime kind code of a static type (runtime K_* constants). */
export function kindCode(ty: Ty): number {
  switch (ty.k) {
    case 'int':
      return runtime.K_INT;
    case 'double':
      return runtime.K_DBL;
    case 'string':
      return runtime.K_STR;
    case 'bool':
      return runtime.K_BOOL;
    case 'null':
      return runtime.K_NULL;
    case 'list':
      return runtime.K_LIST;
    case 'map':
      return runtime.K_MAP;
    case 'timestamp':
      return runtime.K_TS;
    case 'duration':
      return runtime.K_DUR;
    default:
      return runtime.K_DYN;
  }
}

export function isNumeric(ty: Ty): boolean {
  return ty.k === 'int' || ty.k === 'double';
}

/** A lowered expression. */
export interface Lowered {
  readonly code: Code;
  readonly ty: Ty;
  /** May evaluate to an error symbol. */
  readonly err: boolean;
  /** A bare name or literal: can be repeated without a temporary. */
  readonly simple: boolean;
  /** Compile-time value, when known (literals, constant lists and maps). */
  readonly konst?: { readonly value: unknown };
}

export function lowered(code: Code, ty: Ty, err: boolean, simple = false): Lowered {
  return { code, ty, err, simple };
}

/** A compile error at an AST node (or at an offset inside it). */
export class CompileError extends Error {
  constructor(
    message: string,
    readonly node: ASTNode | null,
    readonly offsetInNode = 0,
  ) {
    super(message);
  }
}

/** Everything a ruleset's emitted source shares. */
export class RulesetScope {
  readonly names = new NameScope();
  readonly constants: ConstantSpec[] = [];
  readonly #constantNames = new Map<string, Name>();
  /** Hoisted reads in dependency order: name, initialiser. */
  readonly hoists: { name: Name; init: Code }[] = [];
  readonly #hoistByKey = new Map<string, Name>();
  /** Functions emitted for macros. */
  readonly functions: Code[] = [];
  readonly #helpers = new Map<string, Name>();
  /** Dotted signal paths read (group.field), or a whole group name. */
  readonly signals = new Set<string>();

  /** A runtime helper, bound to a local name in the prelude. */
  helper(name: keyof typeof runtime): Name {
    let n = this.#helpers.get(name);
    if (n === undefined) {
      if (typeof runtime[name] !== 'function') throw new Error(`not a runtime function: ${name}`);
      n = new Name(`rt_${name}`);
      this.#helpers.set(name, n);
    }
    return n;
  }

  helpers(): ReadonlyMap<string, Name> {
    return this.#helpers;
  }

  /** A constant built at load time from data; deduplicated. */
  constant(spec: ConstantSpec): Name {
    const key = safeStringify(spec);
    let n = this.#constantNames.get(key);
    if (n === undefined) {
      n = this.names.name('k');
      this.#constantNames.set(key, n);
      this.constants.push(spec);
    }
    return n;
  }

  constantNames(): Name[] {
    return [...this.#constantNames.values()];
  }

  /** A value read once per evaluation at the top of the ruleset function. */
  hoist(key: string, prefix: 'g' | 'h', init: () => Code): Name {
    let n = this.#hoistByKey.get(key);
    if (n === undefined) {
      const code = init(); // may hoist its own dependencies first
      n = this.names.name(prefix);
      this.#hoistByKey.set(key, n);
      this.hoists.push({ name: n, init: code });
    }
    return n;
  }
}

/** One emitted function: its temporaries. */
export class FunctionFrame {
  readonly #names = new NameScope();
  readonly temps: Name[] = [];
  temp(): Name {
    const n = this.#names.name('t');
    this.temps.push(n);
    return n;
  }
  declarations(): Code {
    return this.temps.length === 0 ? _`` : _`let ${join(this.temps)};`;
  }
}

/** A CEL iteration variable in scope. */
export interface IterVar {
  readonly name: Name;
  readonly ty: Ty;
}

/** Per-rule facts the rule function needs. */
export interface RuleState {
  /** The rule runs macros: its function resets the iteration budget. */
  usesBudget: boolean;
}

/** Lowering state for one expression. */
export class ExprContext {
  constructor(
    readonly ruleset: RulesetScope,
    readonly frame: FunctionFrame,
    readonly iterVars: ReadonlyMap<string, IterVar>,
    readonly rule: RuleState,
  ) {}

  withFrame(frame: FunctionFrame, iterVars: ReadonlyMap<string, IterVar>): ExprContext {
    return new ExprContext(this.ruleset, frame, iterVars, this.rule);
  }

  rt(name: keyof typeof runtime): Name {
    return this.ruleset.helper(name);
  }
}

// Fixed names of emitted code (ajv's names.ts): one place, no collisions with
// the generated prefixes (g h k t v m r e s c l i n o).
export const N = {
  rt: new Name('rt'),
  absent: new Name('A'),
  typeError: new Name('T'),
  evalError: new Name('X'),
  budget: new Name('B'),
  input: new Name('I'),
  event: new Name('E'),
  signals: new Name('S'),
  constants: new Name('K'),
  maxPossible: new Name('MP'),
} as const;

/**
 * Evaluates operands in the given order, stopping at the first error (the CEL
 * error a cel-js evaluation would surface), then builds `body` from simple
 * references to the operand values.
 */
export function guarded(ctx: ExprContext, operands: readonly Lowered[], body: (values: Code[]) => Code): Code {
  const refs: Code[] = [];
  const steps: { temp: Name | null; op: Lowered }[] = [];
  for (const op of operands) {
    if (op.simple) {
      refs.push(op.code);
      steps.push({ temp: null, op });
    } else {
      const t = ctx.frame.temp();
      refs.push(_`${t}`);
      steps.push({ temp: t, op });
    }
  }
  let code = body(refs);
  for (let i = steps.length - 1; i >= 0; i--) {
    const { temp, op } = steps[i] as { temp: Name | null; op: Lowered };
    const ref = refs[i] as Code;
    if (op.err) code = temp === null
      ? _`(typeof ${ref} === "symbol" ? ${ref} : ${code})`
      : _`(${temp} = ${op.code}, typeof ${temp} === "symbol" ? ${temp} : ${code})`;
    else if (temp !== null) code = _`(${temp} = ${op.code}, ${code})`;
  }
  return code;
}

/** A static `typeof` check for a value of kind `ty`, used on dyn operands. */
export function typeofCheck(ref: Code, k: 'string' | 'number' | 'boolean'): Code {
  return _`typeof ${ref} === ${k}`;
}
