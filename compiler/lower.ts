// Lowering: a checked cel-js AST to one JavaScript expression.
//
// Structure (ids, field reads, literals, logic, ternaries, macros) is handled
// here; operators and functions come from the op table in ops.ts. Every value
// read from the input is hoisted: it is read and type-normalised once per
// evaluation at the top of the ruleset function (RulesetScope.hoist), so rules
// only compare locals.

import type { ASTNode } from '@marcbachmann/cel-js';
import { Code, Name, _, join } from './codegen.js';
import {
  CompileError, ExprContext, FunctionFrame, IterVar, Lowered, N, Ty, guarded, kBool, kDouble, kDyn, kInt,
  kNull, kString, kindCode, lowered,
} from './ir.js';
import { iterationCost } from './cost.js';
import { constant, findFunction, kBinaryOps } from './ops.js';
import { kExtras, kForbiddenMembers, kGroupByName, kGroups, kScalarByName } from './schema.js';
import type { FieldType, GroupDef, ScalarDef } from './schema.js';

/** cel-js attaches the checked type to every node it checked (not in its .d.ts). */
interface TypeDecl {
  readonly kind: string;
  readonly name: string;
  readonly valueType?: TypeDecl;
  readonly keyType?: TypeDecl;
}

/** cel-js keeps macro expansions and constants in node.meta (not in its .d.ts). */
interface NodeMeta {
  readonly alternate?: ASTNode;
  readonly macro?: unknown;
}

function metaOf(node: ASTNode): NodeMeta {
  return (node as unknown as { meta: NodeMeta }).meta;
}

const kGroupByCelType: ReadonlyMap<string, GroupDef> = new Map(kGroups.map((g) => [g.celType, g]));

function checkedTy(node: ASTNode): Ty {
  const decl = (node as unknown as { checkedType?: TypeDecl }).checkedType;
  if (decl === undefined) return kDyn;
  return tyFromDecl(decl, node);
}

function tyFromDecl(decl: TypeDecl, node: ASTNode): Ty {
  switch (decl.kind) {
    case 'dyn':
    case 'param':
      return kDyn;
    case 'list':
      return { k: 'list', elem: decl.valueType === undefined ? kDyn : tyFromDecl(decl.valueType, node) };
    case 'map':
      return {
        k: 'map',
        key: decl.keyType === undefined ? kDyn : tyFromDecl(decl.keyType, node),
        val: decl.valueType === undefined ? kDyn : tyFromDecl(decl.valueType, node),
      };
    case 'primitive':
      switch (decl.name) {
        case 'bool':
          return kBool;
        case 'int':
          return kInt;
        case 'double':
          return kDouble;
        case 'string':
          return kString;
        case 'null':
          return kNull;
        default:
          throw new CompileError(`values of type ${decl.name} are not supported`, node);
      }
    case 'message': {
      if (decl.name === 'google.protobuf.Timestamp') return { k: 'timestamp' };
      if (decl.name === 'google.protobuf.Duration') return { k: 'duration' };
      const group = kGroupByCelType.get(decl.name);
      if (group !== undefined) return { k: 'group', group };
      throw new CompileError(`values of type ${decl.name} are not supported`, node);
    }
    default:
      throw new CompileError(`values of type ${decl.name} are not supported`, node);
  }
}

function checkMember(name: string, node: ASTNode): void {
  if (kForbiddenMembers.has(name)) {
    throw new CompileError(`the member name '${name}' is not allowed`, node);
  }
}

function noGroup(v: Lowered, node: ASTNode): Lowered {
  if (v.ty.k === 'group') {
    throw new CompileError(`'${v.ty.group.name}' is an object; use one of its fields, e.g. ${v.ty.group.name}.${Object.keys(v.ty.group.fields)[0]}`, node);
  }
  return v;
}

// ---------------------------------------------------------------------------
// Hoisted reads

const kFieldTy: Readonly<Record<FieldType, Ty>> = {
  string: kString, bool: kBool, int: kInt, double: kDouble, timestamp: { k: 'timestamp' },
};

/** A reference to a hoisted read, noted in the frame that uses it. */
function read(ctx: ExprContext, name: Name): Name {
  ctx.frame.reads.add(name);
  return name;
}

function groupRef(ctx: ExprContext, group: GroupDef): Name {
  return read(ctx, ctx.ruleset.groupVar(group));
}

function extrasRef(ctx: ExprContext): Name {
  return read(ctx, ctx.ruleset.extrasVar());
}

function scalarRef(ctx: ExprContext, scalar: ScalarDef): Lowered {
  return lowered(_`${read(ctx, ctx.ruleset.scalar(scalar))}`, kFieldTy[scalar.type], true, true);
}

/** `group.field`, declared (typed) or, on open groups, any other member (dyn). */
function groupField(ctx: ExprContext, group: GroupDef, field: string, node: ASTNode): Lowered {
  checkMember(field, node);
  const type = Object.hasOwn(group.fields, field) ? (group.fields[field] as FieldType) : null;
  if (type === null && !group.open) throw new CompileError(`${group.name} has no field '${field}'`, node);
  if (type === null) {
    // Undeclared members of open groups are allowed, so a typo would silently
    // read as absent forever: refuse names one edit away from a declared field.
    const near = Object.keys(group.fields).find((f) => f.length >= 4 && editDistanceAtMostOne(f, field));
    if (near !== undefined) {
      throw new CompileError(`${group.name}.${field} is not a declared field; did you mean ${group.name}.${near}?`, node);
    }
  }
  if (group.source === 'signals') ctx.ruleset.signals.add(`${group.name}.${field}`);
  return lowered(_`${read(ctx, ctx.ruleset.groupField(group, field, type))}`, type === null ? kDyn : kFieldTy[type], true, true);
}

/** True when a and b differ by one insertion, deletion, substitution or adjacent swap. */
function editDistanceAtMostOne(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return a === b;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // substitution
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swap
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

function extrasField(ctx: ExprContext, field: string, node: ASTNode): Lowered {
  checkMember(field, node);
  return lowered(_`${read(ctx, ctx.ruleset.extrasField(field))}`, kDyn, true, true);
}

/** The group named by an id node, unless an iteration variable shadows it. */
function groupOf(ctx: ExprContext, node: ASTNode): GroupDef | undefined {
  if (node.op !== 'id' || ctx.iterVars.has(node.args as string)) return undefined;
  return kGroupByName.get(node.args as string);
}

function isExtras(ctx: ExprContext, node: ASTNode): boolean {
  return node.op === 'id' && node.args === kExtras.name && !ctx.iterVars.has(kExtras.name);
}

// ---------------------------------------------------------------------------
// The walk

export function lower(ctx: ExprContext, node: ASTNode): Lowered {
  switch (node.op) {
    case 'value':
      return lowerLiteral(node);
    case 'id':
      return lowerId(ctx, node);
    case '.':
      return lowerSelect(ctx, node);
    case '[]':
      return lowerIndex(ctx, node);
    case 'call':
    case 'rcall':
      return lowerCall(ctx, node);
    case 'list':
      return lowerList(ctx, node);
    case 'map':
      return lowerMap(ctx, node);
    case '?:':
      return lowerTernary(ctx, node);
    case '&&':
    case '||':
      return lowerLogical(ctx, node);
    case '!_':
      return lowerNot(ctx, node);
    case '-_':
      return lowerNegate(ctx, node);
    default: {
      const def = kBinaryOps[node.op];
      if (def === undefined) throw new CompileError(`'${node.op}' is not supported`, node);
      const [ln, rn] = node.args as [ASTNode, ASTNode];
      const l = noGroup(lower(ctx, ln), ln);
      // `x in [literals]` becomes a Set lookup: the list itself is never built.
      const values = node.op === 'in' ? literalList(rn) : null;
      const r = values !== null
        ? { code: _`null`, ty: checkedTy(rn), err: false, simple: true, konst: { value: values } }
        : noGroup(lower(ctx, rn), rn);
      return def.lower(ctx, node, l, r, checkedTy(node));
    }
  }
}

/** The values of a list literal of plain literals, or null. */
function literalList(node: ASTNode): (string | number | boolean)[] | null {
  if (node.op !== 'list') return null;
  const out: (string | number | boolean)[] = [];
  for (const e of node.args as ASTNode[]) {
    const v = e.op === 'value' ? (e.args as unknown) : undefined;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.push(v);
    else if (typeof v === 'bigint') out.push(Number(lowerLiteral(e).konst?.value));
    else return null;
  }
  return out;
}

function lowerLiteral(node: ASTNode): Lowered {
  const v = node.args as unknown;
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new CompileError('integer literal is too large: numbers are doubles, exact up to 2^53', node);
    }
    return constant(Number(v), kInt);
  }
  if (typeof v === 'number') return constant(v, kDouble);
  if (typeof v === 'string') return constant(v, kString);
  if (typeof v === 'boolean') return constant(v, kBool);
  if (v === null) return constant(null, kNull);
  throw new CompileError('bytes and unsigned literals are not supported', node);
}

function lowerId(ctx: ExprContext, node: ASTNode): Lowered {
  const name = node.args as string;
  const iter = ctx.iterVars.get(name);
  if (iter !== undefined) return lowered(_`${iter.name}`, iter.ty, false, true);
  if (metaOf(node).alternate !== undefined) throw new CompileError(`'${name}' cannot be used as a value`, node);
  const group = kGroupByName.get(name);
  if (group !== undefined) {
    if (group.source === 'signals') ctx.ruleset.signals.add(group.name);
    return lowered(_`${groupRef(ctx, group)}`, { k: 'group', group }, true, true);
  }
  if (name === kExtras.name) {
    return lowered(_`${extrasRef(ctx)}`, { k: 'map', key: kString, val: kDyn }, true, true);
  }
  const scalar = kScalarByName.get(name);
  if (scalar !== undefined) return scalarRef(ctx, scalar);
  throw new CompileError(`unknown variable '${name}'`, node);
}

function lowerSelect(ctx: ExprContext, node: ASTNode): Lowered {
  const [baseNode, field] = node.args as [ASTNode, string];
  checkMember(field, node);
  const group = groupOf(ctx, baseNode);
  if (group !== undefined) return groupField(ctx, group, field, node);
  if (isExtras(ctx, baseNode)) return extrasField(ctx, field, node);
  const base = lower(ctx, baseNode);
  const ty = checkedTy(node);
  if (base.ty.k === 'map') {
    return lowered(guarded(ctx, [base], ([b]) => _`${ctx.rt('own')}(${b}, ${field})`), ty, true);
  }
  if (base.ty.k === 'dyn') {
    return lowered(guarded(ctx, [base], ([b]) => _`${ctx.rt('field')}(${b}, ${field})`), kDyn, true);
  }
  throw new CompileError(`cannot select '${field}' on a value of this type`, node);
}

function lowerIndex(ctx: ExprContext, node: ASTNode): Lowered {
  const [baseNode, keyNode] = node.args as [ASTNode, ASTNode];
  const literalKey = keyNode.op === 'value' && typeof keyNode.args === 'string' ? keyNode.args : null;
  if (literalKey !== null) checkMember(literalKey, keyNode);
  const group = groupOf(ctx, baseNode);
  if (group !== undefined) {
    if (literalKey !== null) return groupField(ctx, group, literalKey, node);
    // A member chosen at run time: the whole group is read.
    if (group.source === 'signals') ctx.ruleset.signals.add(group.name);
    const g = lowered(_`${groupRef(ctx, group)}`, kDyn, true, true);
    const key = noGroup(lower(ctx, keyNode), keyNode);
    const fields = ctx.ruleset.constant({
      map: Object.entries(group.fields).map(([f, t]) => [f, kindCode(kFieldTy[t])] as const),
    });
    return lowered(
      guarded(ctx, [g, key], ([gv, k]) => _`${ctx.rt('gget')}(${gv}, ${k}, ${fields}, ${group.open})`),
      checkedTy(node),
      true,
    );
  }
  if (literalKey !== null && isExtras(ctx, baseNode)) return extrasField(ctx, literalKey, node);
  const base = noGroup(lower(ctx, baseNode), baseNode);
  const key = noGroup(lower(ctx, keyNode), keyNode);
  if (base.ty.k !== 'list' && base.ty.k !== 'map' && base.ty.k !== 'dyn') {
    throw new CompileError('only lists and maps can be indexed', node);
  }
  return lowered(
    guarded(ctx, [base, key], ([b, k]) => _`${ctx.rt('index')}(${b}, ${k}, ${kindCode(base.ty)}, ${kindCode(key.ty)})`),
    checkedTy(node),
    true,
  );
}

function lowerList(ctx: ExprContext, node: ASTNode): Lowered {
  const elements = (node.args as ASTNode[]).map((n) => noGroup(lower(ctx, n), n));
  const ty = checkedTy(node);
  if (elements.every((e) => e.konst !== undefined)) {
    const values = elements.map((e) => e.konst?.value);
    const name = ctx.ruleset.constant({ list: values });
    return { code: _`${name}`, ty, err: false, simple: true, konst: { value: values } };
  }
  // cel-js evaluates list elements right to left: the rightmost error wins.
  const reversed = elements.slice().reverse();
  const code = guarded(ctx, reversed, (refs) => _`[${join(refs.slice().reverse())}]`);
  return lowered(code, ty, elements.some((e) => e.err));
}

function lowerMap(ctx: ExprContext, node: ASTNode): Lowered {
  const entries = node.args as [ASTNode, ASTNode][];
  const parts: Lowered[] = [];
  for (const [kn, vn] of entries) {
    const k = noGroup(lower(ctx, kn), kn);
    if (k.ty.k !== 'string') throw new CompileError('map literal keys must be strings', kn);
    if (typeof k.konst?.value === 'string') checkMember(k.konst.value, kn);
    parts.push(k, noGroup(lower(ctx, vn), vn));
  }
  const ty = checkedTy(node);
  if (parts.every((p) => p.konst !== undefined)) {
    const pairs: [string, unknown][] = [];
    for (let i = 0; i < parts.length; i += 2) pairs.push([parts[i]?.konst?.value as string, parts[i + 1]?.konst?.value]);
    const name = ctx.ruleset.constant({ map: pairs });
    return lowered(_`${name}`, ty, false, true);
  }
  const code = guarded(ctx, parts, (refs) => _`${ctx.rt('mapOf')}([${join(refs)}])`);
  return lowered(code, ty, parts.some((p) => p.err));
}

function lowerTernary(ctx: ExprContext, node: ASTNode): Lowered {
  const [cn, ln, rn] = node.args as [ASTNode, ASTNode, ASTNode];
  const c = lower(ctx, cn);
  const l = noGroup(lower(ctx, ln), ln);
  const r = noGroup(lower(ctx, rn), rn);
  const ty = checkedTy(node);
  const timeLike = (t: Ty): boolean => t.k === 'timestamp' || t.k === 'duration';
  if (ty.k === 'dyn' && (timeLike(l.ty) || timeLike(r.ty))) {
    throw new CompileError('both branches must have the same type when one is a timestamp or duration', node);
  }
  if (c.ty.k === 'bool' && !c.err) return lowered(_`(${c.code} ? ${l.code} : ${r.code})`, ty, l.err || r.err);
  const t = c.simple ? c.code : _`${ctx.frame.temp()}`;
  const head = c.simple ? _`` : _`${t} = ${c.code}, `;
  return lowered(
    _`(${head}${t} === true ? ${l.code} : ${t} === false ? ${r.code} : ${ctx.rt('wrong')}(${t}))`,
    ty,
    true,
  );
}

/** A logical operand: booleans and errors, anything else becomes an error. */
function logicalOperand(ctx: ExprContext, node: ASTNode): Lowered {
  const v = noGroup(lower(ctx, node), node);
  if (v.ty.k === 'bool') return v;
  if (v.ty.k === 'dyn') return lowered(_`${ctx.rt('lnorm')}(${v.code})`, kBool, true);
  throw new CompileError('&&, || and ! need bool operands', node);
}

function bindTemp(ctx: ExprContext, v: Lowered): { ref: Code; head: Code } {
  if (v.simple) return { ref: v.code, head: v.code };
  const t = ctx.frame.temp();
  return { ref: _`${t}`, head: _`(${t} = ${v.code})` };
}

/**
 * CEL's && and || absorb errors commutatively: false && error is false and
 * true || error is true, whichever side the error is on. When both sides are
 * errors, or the deciding side is an error, cel-js surfaces the right one.
 */
function lowerLogical(ctx: ExprContext, node: ASTNode): Lowered {
  const [ln, rn] = node.args as [ASTNode, ASTNode];
  const l = logicalOperand(ctx, ln);
  const r = logicalOperand(ctx, rn);
  const and = node.op === '&&';
  if (!l.err && !r.err) return lowered(and ? _`(${l.code} && ${r.code})` : _`(${l.code} || ${r.code})`, kBool, false);
  if (!l.err) return lowered(and ? _`(${l.code} ? ${r.code} : false)` : _`(${l.code} ? true : ${r.code})`, kBool, true);
  const a = bindTemp(ctx, l);
  const b = bindTemp(ctx, r);
  const code = and
    ? _`(${a.head} === false ? false : (${b.head}, ${a.ref} === true || ${b.ref} !== true ? ${b.ref} : ${a.ref}))`
    : _`(${a.head} === true ? true : (${b.head}, ${a.ref} === false || ${b.ref} !== false ? ${b.ref} : ${a.ref}))`;
  return lowered(code, kBool, true);
}

function lowerNot(ctx: ExprContext, node: ASTNode): Lowered {
  const v = noGroup(lower(ctx, node.args as ASTNode), node.args as ASTNode);
  if (v.ty.k === 'bool' && !v.err) return lowered(_`!${v.code}`, kBool, false);
  if (v.ty.k !== 'bool' && v.ty.k !== 'dyn') throw new CompileError('! needs a bool operand', node);
  const t = bindTemp(ctx, v);
  const otherwise = v.ty.k === 'bool' ? t.ref : _`${ctx.rt('wrong')}(${t.ref})`;
  return lowered(_`(typeof ${t.head} === "boolean" ? !${t.ref} : ${otherwise})`, kBool, true);
}

function lowerNegate(ctx: ExprContext, node: ASTNode): Lowered {
  const v = noGroup(lower(ctx, node.args as ASTNode), node.args as ASTNode);
  if (v.konst !== undefined && typeof v.konst.value === 'number') return constant(-v.konst.value, v.ty);
  // -(-2^63) is beyond int64: an error, as for every int result.
  if (v.ty.k === 'int') return lowered(guarded(ctx, [v], ([x]) => _`${ctx.rt('ichk')}(-${x})`), v.ty, true);
  if (v.ty.k === 'double') return lowered(guarded(ctx, [v], ([x]) => _`(-${x})`), v.ty, v.err);
  if (v.ty.k === 'dyn') return lowered(guarded(ctx, [v], ([x]) => _`${ctx.rt('neg')}(${x}, 0)`), kDyn, true);
  throw new CompileError('unary - needs a number', node);
}

// ---------------------------------------------------------------------------
// Calls and macros

const kMacros = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

function lowerCall(ctx: ExprContext, node: ASTNode): Lowered {
  const receiver = node.op === 'rcall';
  const name = (node.args as unknown as [string])[0];
  const argNodes = receiver ? (node.args as [string, ASTNode, ASTNode[]])[2] : (node.args as [string, ASTNode[]])[1];
  const receiverNode = receiver ? (node.args as [string, ASTNode, ASTNode[]])[1] : null;
  if (metaOf(node).macro !== undefined) {
    if (!receiver && name === 'has') return lowerHas(ctx, argNodes[0] as ASTNode, node);
    throw new CompileError(`${name}() is not supported`, node);
  }
  if (metaOf(node).alternate !== undefined) {
    if (receiver && kMacros.has(name)) return lowerMacro(ctx, node, name, receiverNode as ASTNode, argNodes);
    throw new CompileError(`${name}() is not supported`, node);
  }
  const def = findFunction(receiver, name, argNodes.length);
  if (def === null) throw new CompileError(`${receiver ? '.' : ''}${name}() with ${argNodes.length} argument(s) is not supported`, node);
  const nodes = receiverNode === null ? [...argNodes] : [receiverNode, ...argNodes];
  const operands = nodes.map((n) => noGroup(lower(ctx, n), n));
  return def.lower({ ctx, node, operands, nodes, resultTy: checkedTy(node) });
}

/** Declared types whose values have no fields to select. */
const kFieldless: ReadonlySet<string> = new Set(['bool', 'int', 'double', 'string', 'timestamp', 'duration']);

/** has(a.b.c): false when the last member is absent or null. */
function lowerHas(ctx: ExprContext, sel: ASTNode, node: ASTNode): Lowered {
  const fields: string[] = [];
  let n = sel;
  while (n.op === '.') {
    const [base, f] = n.args as [ASTNode, string];
    checkMember(f, n);
    fields.unshift(f);
    n = base;
  }
  if (n.op !== 'id' || fields.length === 0) throw new CompileError('has() needs a field selection like has(user.email)', node);
  let base: Lowered;
  let baseName = n.args as string;
  let rest: string[];
  const group = groupOf(ctx, n);
  if (group !== undefined || isExtras(ctx, n)) {
    const first = fields[0] as string;
    const value = group !== undefined ? groupField(ctx, group, first, sel) : extrasField(ctx, first, sel);
    if (fields.length === 1) {
      // Present (not absent, not null); a wrong-typed declared field stays an error.
      return lowered(
        _`(typeof ${value.code} === "symbol" ? (${value.code} === ${N.absent} ? false : ${value.code}) : true)`,
        kBool,
        true,
      );
    }
    base = value;
    baseName = `${baseName}.${first}`;
    rest = fields.slice(1);
  } else {
    base = lower(ctx, n);
    rest = fields;
  }
  // A declared scalar has no fields (user.email, event_type, now, a variable over numbers):
  // has(user.email.x) is refused as user.email.x is (the type checker).
  if (kFieldless.has(base.ty.k)) throw new CompileError(`has(): ${baseName} is of type ${base.ty.k} and has no fields`, sel);
  for (const f of rest.slice(0, -1)) {
    base = lowered(guarded(ctx, [base], ([b]) => _`${ctx.rt('field')}(${b}, ${f})`), kDyn, true);
  }
  const last = rest[rest.length - 1] as string;
  // A member of an absent or null parent is absent: has() is false (the parent's absence is not
  // passed on, as a selection passes it on). has() on a value without fields (a string, a list)
  // is a type error, and an error in the chain stays one: the rule is degraded.
  const t = base.simple ? base.code : _`${ctx.frame.temp()}`;
  const head = base.simple ? _`` : _`${t} = ${base.code}, `;
  return lowered(
    _`(${head}typeof ${t} === "symbol" ? (${t} === ${N.absent} ? false : ${t}) : ${ctx.rt('hasField')}(${t}, ${last}))`,
    kBool,
    true,
  );
}

/**
 * all / exists / exists_one / map / filter: a function per macro, called with
 * the collection and the enclosing iteration variables. Every iteration spends
 * its work from the event's budget (kEventBudget, runtime `budget`).
 */
function lowerMacro(ctx: ExprContext, node: ASTNode, name: string, receiverNode: ASTNode, args: readonly ASTNode[]): Lowered {
  const coll = noGroup(lower(ctx, receiverNode), receiverNode);
  if (coll.ty.k !== 'list' && coll.ty.k !== 'map' && coll.ty.k !== 'dyn') {
    throw new CompileError(`${name}() needs a list or a map`, node);
  }
  const varNode = args[0] as ASTNode;
  if (varNode.op !== 'id') throw new CompileError(`${name}() needs a variable name first`, varNode);
  const elemTy: Ty = coll.ty.k === 'list' ? coll.ty.elem : coll.ty.k === 'map' ? coll.ty.key : kDyn;

  const scope = ctx.ruleset.names;
  const fn = scope.name('m');
  const v = scope.name('v');
  const captured = [...ctx.iterVars.values()].map((x) => x.name);
  const inner = new Map<string, IterVar>(ctx.iterVars);
  inner.set(varNode.args as string, { name: v, ty: elemTy });
  const frame = new FunctionFrame();
  const ictx = ctx.withFrame(frame, inner);

  const c = new Name('c');
  const l = new Name('l');
  const i = new Name('i');
  const r = new Name('r');
  const e = new Name('e');
  const o = new Name('o');
  const wrong = ctx.rt('wrong');
  const pred = (n: ASTNode): Code => {
    const p = lower(ictx, n);
    if (p.ty.k !== 'bool' && p.ty.k !== 'dyn') throw new CompileError(`${name}() needs a bool condition`, n);
    return p.code;
  };
  const value = (n: ASTNode): Code => noGroup(lower(ictx, n), n).code;

  let init: Code;
  let step: Code;
  let result: Code;
  let ty: Ty;
  switch (name) {
    case 'exists':
      init = _`let ${e} = false;`;
      step = _`const ${r} = ${pred(args[1] as ASTNode)}; if (${r} === true) return true; if (${r} !== false && ${e} === false) ${e} = ${wrong}(${r});`;
      result = _`${e}`;
      ty = kBool;
      break;
    case 'all':
      init = _`let ${e} = true;`;
      step = _`const ${r} = ${pred(args[1] as ASTNode)}; if (${r} === false) return false; if (${r} !== true && ${e} === true) ${e} = ${wrong}(${r});`;
      result = _`${e}`;
      ty = kBool;
      break;
    case 'exists_one':
      init = _`let ${e} = 0;`;
      step = _`const ${r} = ${pred(args[1] as ASTNode)}; if (${r} === true) ${e}++; else if (${r} !== false) return ${wrong}(${r});`;
      result = _`${e} === 1`;
      ty = kBool;
      break;
    case 'filter':
      init = _`const ${o} = [];`;
      step = _`const ${r} = ${pred(args[1] as ASTNode)}; if (${r} === true) ${o}.push(${v}); else if (${r} !== false) return ${wrong}(${r});`;
      result = _`${o}`;
      ty = checkedTy(node);
      break;
    default: // map, with an optional filter
      init = _`const ${o} = [];`;
      if (args.length === 3) {
        const u = new Name('u');
        step = _`const ${r} = ${pred(args[1] as ASTNode)}; if (${r} === true) { const ${u} = ${value(args[2] as ASTNode)}; if (typeof ${u} === "symbol") return ${u}; ${o}.push(${u}); } else if (${r} !== false) return ${wrong}(${r});`;
      } else {
        step = _`const ${r} = ${value(args[1] as ASTNode)}; if (typeof ${r} === "symbol") return ${r}; ${o}.push(${r});`;
      }
      result = _`${o}`;
      ty = checkedTy(node);
  }
  // Each iteration spends its own work (cost.ts iterationCost), so the budget follows time.
  const perIteration = iterationCost(args.slice(1), varNode.args as string);
  const items = coll.ty.k === 'list'
    ? _`const ${l} = ${c};`
    : _`const ${l} = ${ctx.rt('iterable')}(${c}, ${kindCode(coll.ty)}); if (typeof ${l} === "symbol") return ${l};`;
  // Input reads used inside are passed in too: they may be locals of the
  // ruleset function. The call site then uses them itself.
  const reads = [...frame.reads];
  for (const n of reads) ctx.frame.reads.add(n);
  ctx.ruleset.functions.push(_`function ${fn}(${join([c, ...captured, ...reads])}) {
  ${frame.declarations()}
  ${items}
  ${init}
  for (let ${i} = 0; ${i} < ${l}.length; ${i}++) {
    if ((${N.budget}.left -= ${perIteration}) < 0) return ${N.evalError};
    const ${v} = ${l}[${i}];
    ${step}
  }
  return ${result};
}`);
  return lowered(guarded(ctx, [coll], ([cv]) => _`${fn}(${join([cv as Code, ...captured, ...reads])})`), ty, true);
}

/** Lowers a rule or band expression; the result is a boolean or an error. */
export function lowerCondition(ctx: ExprContext, root: ASTNode): Lowered {
  const v = noGroup(lower(ctx, root), root);
  if (v.ty.k === 'bool') return v;
  if (v.ty.k === 'dyn') return lowered(_`${ctx.rt('lnorm')}(${v.code})`, kBool, true);
  throw new CompileError(`the expression must be bool, not ${v.ty.k}`, root);
}

