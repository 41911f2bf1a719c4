// Shared state and helpers of the lowering: static types, lowered values,
// the per-ruleset scope (constants, hoisted reads, helper functions) and the
// per-function frame (temporaries).

import type { ASTNode } from '@marcbachmann/cel-js';
import { Code, Name, NameScope, _, join, property, safeStringify } from './codegen.js';
import type { FieldType, GroupDef, ScalarDef } from './schema.js';
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
  /** Values read from the input once per evaluation (see readStatements). */
  readonly #groups = new Map<string, { group: GroupDef; name: Name; fields: Map<string, { name: Name; type: FieldType | null }> }>();
  #extras: { name: Name; fields: Map<string, Name> } | null = null;
  readonly #scalars = new Map<string, { def: ScalarDef; name: Name }>();
  /** Functions emitted for macros. */
  readonly functions: Code[] = [];
  readonly #helpers = new Map<string, Name>();
  /** Dotted signal paths read (group.field), or a whole group name. */
  readonly signals = new Set<string>();
  /** Ids of the lists read with in_list(). */
  readonly lists = new Set<string>();
  /** Ids of the lists read by the rule being compiled (emit.ts starts a new set per rule). */
  ruleLists = new Set<string>();
  /**
   * The list ids of the project, when the caller knows them: in_list() of any other id is a
   * compile error. null: not checked (the compiler alone knows no project).
   */
  readonly knownLists: ReadonlySet<string> | null;
  /** The hoisted `input.lists` (the ListLookup), once an in_list() needs it. */
  #lists: Name | null = null;

  constructor(knownLists: ReadonlySet<string> | null = null) {
    this.knownLists = knownLists;
  }

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

  /** The variable holding a group object (or the error that stands for it). */
  groupVar(group: GroupDef): Name {
    let g = this.#groups.get(group.name);
    if (g === undefined) {
      g = { group, name: this.names.name('g'), fields: new Map() };
      this.#groups.set(group.name, g);
    }
    return g.name;
  }

  /** The variable holding `group.field`, typed (declared) or dyn (`type` null). */
  groupField(group: GroupDef, field: string, type: FieldType | null): Name {
    this.groupVar(group);
    const fields = this.#groups.get(group.name)?.fields as Map<string, { name: Name; type: FieldType | null }>;
    let f = fields.get(field);
    if (f === undefined) {
      f = { name: this.names.name('h'), type };
      fields.set(field, f);
    }
    return f.name;
  }

  extrasVar(): Name {
    this.#extras ??= { name: this.names.name('g'), fields: new Map() };
    return this.#extras.name;
  }

  extrasField(field: string): Name {
    this.extrasVar();
    const fields = (this.#extras as { fields: Map<string, Name> }).fields;
    let n = fields.get(field);
    if (n === undefined) {
      n = this.names.name('h');
      fields.set(field, n);
    }
    return n;
  }

  /** The variable holding input.lists, read once per evaluation like the other inputs. */
  listsVar(): Name {
    this.#lists ??= this.names.name('h');
    return this.#lists;
  }

  scalar(def: ScalarDef): Name {
    let s = this.#scalars.get(def.name);
    if (s === undefined) {
      s = { def, name: this.names.name('h') };
      this.#scalars.set(def.name, s);
    }
    return s.name;
  }

  /** The group variables needed to read the given names (fields imply their group). */
  #needed(names: ReadonlySet<Name>): { groups: Set<Name>; extras: boolean } {
    const groups = new Set<Name>();
    for (const g of this.#groups.values()) {
      if (names.has(g.name) || [...g.fields.values()].some((f) => names.has(f.name))) groups.add(g.name);
    }
    const x = this.#extras;
    const extras = x !== null && (names.has(x.name) || [...x.fields.values()].some((n) => names.has(n)));
    return { groups, extras };
  }

  /** The variables that reading `names` assigns, for one `let` declaration. */
  readNames(names: ReadonlySet<Name>): Name[] {
    const { groups, extras } = this.#needed(names);
    const out: Name[] = [];
    for (const g of this.#groups.values()) {
      if (groups.has(g.name)) out.push(g.name, ...[...g.fields.values()].map((f) => f.name).filter((n) => names.has(n)));
    }
    if (extras && this.#extras !== null) out.push(this.#extras.name, ...[...this.#extras.fields.values()].filter((n) => names.has(n)));
    for (const s of this.#scalars.values()) if (names.has(s.name)) out.push(s.name);
    if (this.#lists !== null && names.has(this.#lists)) out.push(this.#lists);
    return out;
  }

  /**
   * The statements that read the input at the top of the ruleset function:
   * each group is checked once, each field is read once and normalised inline
   * to its declared type, kAbsent or kTypeError (runtime/index.ts).
   */
  readStatements(only: ReadonlySet<Name>): Code[] {
    const out: Code[] = [];
    const { groups, extras } = this.#needed(only);
    for (const { group, name, fields: all } of this.#groups.values()) {
      if (!groups.has(name)) continue;
      const fields = new Map([...all].filter(([, f]) => only.has(f.name)));
      const source = group.source === 'event' ? N.event : N.signals;
      out.push(_`${name} = ${this.helper('grp')}(${source}${property(group.name)});`);
      if (fields.size === 0) continue;
      const names = [...fields.values()].map((f) => f.name);
      const reads = [...fields].map(([field, f]) =>
        f.type === null ? _`${f.name} = ${this.helper('own')}(${name}, ${field});` : this.#typedRead(f.name, _`${name}${property(field)}`, f.type),
      );
      out.push(_`if (typeof ${name} === "symbol") ${join(names, _` = `)} = ${name};
  else {
    ${join(reads, _`\n    `)}
  }`);
    }
    if (extras && this.#extras !== null) {
      const { name, fields } = this.#extras;
      out.push(_`${name} = ${this.helper('grp')}(${N.event}.extras);`);
      for (const [field, n] of fields) if (only.has(n)) out.push(_`${n} = typeof ${name} === "symbol" ? ${name} : ${this.helper('own')}(${name}, ${field});`);
    }
    for (const { def, name } of this.#scalars.values()) {
      if (!only.has(name)) continue;
      if (def.source === 'now') out.push(_`${name} = ${this.helper('nowMs')}(${N.input}.now);`);
      else out.push(this.#typedRead(name, _`${N.event}${property(def.name)}`, def.type));
    }
    if (this.#lists !== null && only.has(this.#lists)) out.push(_`${this.#lists} = ${N.input}.lists;`);
    return out;
  }

  #typedRead(target: Name, from: Code, type: FieldType): Code {
    const orError = _`${target} = ${target} === undefined || ${target} === null ? ${N.absent} : ${N.typeError};`;
    switch (type) {
      case 'string':
      case 'bool':
      case 'double': {
        const js = type === 'bool' ? 'boolean' : type === 'double' ? 'number' : 'string';
        return _`${target} = ${from}; if (typeof ${target} !== ${js}) ${orError}`;
      }
      case 'int':
        // `% 1 === 0`: an integral, finite number (Number.isInteger without a global).
        return _`${target} = ${from}; if (typeof ${target} !== "number" || ${target} % 1 !== 0) ${orError}`;
      case 'timestamp':
        return _`${target} = ${this.helper('ts')}(${from});`;
    }
  }
}

/** One emitted function: its temporaries, and the input reads it uses. */
export class FunctionFrame {
  readonly #names = new NameScope();
  readonly temps: Name[] = [];
  /** Hoisted reads referenced here: a macro function receives them as parameters. */
  readonly reads = new Set<Name>();
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

/** Lowering state for one expression. */
export class ExprContext {
  constructor(
    readonly ruleset: RulesetScope,
    readonly frame: FunctionFrame,
    readonly iterVars: ReadonlyMap<string, IterVar>,
  ) {}

  withFrame(frame: FunctionFrame, iterVars: ReadonlyMap<string, IterVar>): ExprContext {
    return new ExprContext(this.ruleset, frame, iterVars);
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
