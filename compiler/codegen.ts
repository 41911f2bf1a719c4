// Safe code generation: the only way text enters an emitted ruleset.
//
// Modelled on ajv's lib/compile/codegen/code.ts: identifiers are `Name`s whose
// constructor refuses anything that is not a plain identifier, fragments are
// `Code`s that only this module can create, and the `_` tagged template turns
// every plain value argument into a JSON literal. Analyst text (rule ids,
// strings, field names, regex sources) can therefore only land in the source
// as an escaped literal, never as code.

const kIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Words that must never be used as generated names even though they match
// kIdentifier: JavaScript reserved words plus the globals a rule must not reach.
const kForbiddenNames: ReadonlySet<string> = new Set([
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do',
  'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in',
  'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try',
  'typeof', 'var', 'void', 'while', 'with', 'yield', 'let', 'static', 'implements', 'interface',
  'package', 'private', 'protected', 'public', 'await', 'arguments', 'eval', 'undefined', 'NaN',
  'Infinity', 'constructor', 'prototype', '__proto__', 'process', 'require', 'module', 'exports',
  'globalThis', 'global', 'window', 'self', 'Function',
]);

// Only this module holds the token, so `Code` cannot be forged elsewhere.
const kToken = Symbol('code');

/** A JavaScript identifier that was checked to be one. */
export class Name {
  readonly str: string;
  constructor(str: string) {
    if (!kIdentifier.test(str) || kForbiddenNames.has(str)) {
      throw new Error(`codegen: invalid name ${JSON.stringify(str)}`);
    }
    this.str = str;
  }
  toString(): string {
    return this.str;
  }
}

/** A fragment of generated JavaScript, built only by `_`, `join` and `property`. */
export class Code {
  readonly str: string;
  constructor(token: symbol, str: string) {
    if (token !== kToken) throw new Error('codegen: Code can only be built by the codegen module');
    this.str = str;
  }
  toString(): string {
    return this.str;
  }
}

export type Literal = string | number | boolean | null;
export type CodeArg = Code | Name | Literal;

/**
 * JSON.stringify that is also safe inside JavaScript source: U+2028 and U+2029
 * are valid in JSON strings but were line terminators in JavaScript string
 * literals before ES2019, and some tools still treat them so.
 */
export function safeStringify(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new Error('codegen: value has no JSON form');
  return json.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** The source text of a literal value. */
export function literal(value: Literal): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`codegen: non-finite number ${value}`);
    // Parenthesised so that `a - -1` can never collapse into `a--1`.
    if (value < 0 || Object.is(value, -0)) return `(${Object.is(value, -0) ? '-0' : String(value)})`;
    return String(value);
  }
  if (typeof value === 'string') return safeStringify(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  throw new Error(`codegen: unsupported literal of type ${typeof value}`);
}

function interpolate(arg: CodeArg): string {
  if (arg instanceof Code || arg instanceof Name) return arg.str;
  return literal(arg);
}

/** Tagged template: code text from the template, literals from every plain argument. */
export function _(strings: TemplateStringsArray, ...args: CodeArg[]): Code {
  let out = strings[0] ?? '';
  for (let i = 0; i < args.length; i++) out += interpolate(args[i] as CodeArg) + (strings[i + 1] ?? '');
  return new Code(kToken, out);
}

/** Joins fragments with a separator fragment. */
export function join(parts: readonly CodeArg[], separator: Code = _`, `): Code {
  return new Code(kToken, parts.map(interpolate).join(separator.str));
}

/** `.key` for identifier-safe keys, `["key"]` otherwise (ajv's getProperty). */
export function property(key: string): Code {
  if (kIdentifier.test(key) && !kForbiddenNames.has(key)) return new Code(kToken, `.${key}`);
  return new Code(kToken, `[${safeStringify(key)}]`);
}

/** Generates unique names as prefix + counter (ajv's scope.ts). */
export class NameScope {
  readonly #counters = new Map<string, number>();
  name(prefix: string): Name {
    const n = this.#counters.get(prefix) ?? 0;
    this.#counters.set(prefix, n + 1);
    return new Name(`${prefix}${n}`);
  }
}
