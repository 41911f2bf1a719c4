// cel-js environments built from schema.ts.
//
// Open groups (context, user, payment) accept members that are not declared,
// read as `dyn`. cel-js message types reject unknown fields at check time, so
// each expression is first parsed to collect the undeclared members it uses on
// open groups, and then checked in an environment whose open types also declare
// exactly those members as `dyn`. Environments are cached by that member set.

import { Environment } from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';
import { kCelLimits } from './limits.js';
import { charAt, stringOfDuration, stringOfTimestamp } from './runtime/index.js';
import { kCelTypeOf, kExtras, kGroups, kScalars } from './schema.js';
import type { GroupDef } from './schema.js';
import type { ListLookup } from './types.js';

const kOpenGroups: readonly GroupDef[] = kGroups.filter((g) => g.open);
const kCacheSize = 256;

function fieldTypes(group: GroupDef, extra: readonly string[]): Record<string, string> {
  // Null prototype: member names come from analysts.
  const fields = Object.create(null) as Record<string, string>;
  for (const [name, type] of Object.entries(group.fields)) fields[name] = kCelTypeOf[type];
  for (const name of extra) if (fields[name] === undefined) fields[name] = 'dyn';
  return fields;
}

/**
 * Conversions of timestamps and durations that the CEL specification has, and
 * charAt() of cel-go's strings extension, which cel-js's checker lacks:
 * registered here so that rules can use them, with
 * the handlers cel-js's evaluator (the test oracle) runs. The compiled forms
 * are in ops.ts (conversion) and runtime (stringOfTimestamp, ...).
 */
function registerTimeConversions(env: Environment): void {
  const ts = 'google.protobuf.Timestamp';
  const dur = 'google.protobuf.Duration';
  env.registerFunction(`int(${ts}): int`, (d: Date) => BigInt(Math.floor(d.getTime() / 1000)));
  env.registerFunction(`string(${ts}): string`, (d: Date) => stringOfTimestamp(d.getTime()));
  env.registerFunction(`string(${dur}): string`, (d: { valueOf(): number }) => stringOfDuration(d.valueOf()));
  // cel-go's strings extension; positions in code points like the other string functions.
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const r = charAt(s, Number(i));
    if (typeof r !== 'string') throw new Error('charAt: index out of range');
    return r;
  });
}

/**
 * The lists cel-js's evaluator (the test oracle, reference.ts) answers in_list() from: set per
 * evaluation by reference.ts from the input. The compiled rules never use it.
 */
let referenceLists: ListLookup | null = null;

export function setReferenceLists(lists: ListLookup | null): void {
  referenceLists = lists;
}

/** in_list(id, value): declared for the checker; ops.ts has the compiled form. */
function registerInList(env: Environment): void {
  env.registerFunction('in_list(string, string): bool', (id: string, value: string) => {
    const found = referenceLists?.has(id, value);
    if (typeof found !== 'boolean') throw new Error(`in_list: no list ${id}`);
    return found;
  });
}

function createBase(): Environment {
  // Lists and maps may mix types (list<dyn>), as the specification allows and cel-go does by default.
  const env = new Environment({ limits: kCelLimits, homogeneousAggregateLiterals: false });
  registerTimeConversions(env);
  registerInList(env);
  for (const group of kGroups) {
    if (group.open) continue;
    env.registerType(group.celType, { fields: fieldTypes(group, []) });
    env.registerVariable(group.name, group.celType);
  }
  for (const scalar of kScalars) env.registerVariable(scalar.name, kCelTypeOf[scalar.type]);
  env.registerVariable(kExtras.name, kExtras.celType);
  return env;
}

// Built once per process; clone() freezes it, which is what we want.
const kBase = createBase();
const kCache = new Map<string, Environment>();

/** Undeclared members used on open groups, per group name (sorted, unique). */
export type OpenMembers = ReadonlyMap<string, readonly string[]>;

/** The environment that declares the given undeclared members as dyn. */
export function environmentFor(members: OpenMembers): Environment {
  const key = kOpenGroups.map((g) => `${g.name}:${(members.get(g.name) ?? []).join(',')}`).join(';');
  const cached = kCache.get(key);
  if (cached !== undefined) return cached;
  const env = kBase.clone();
  for (const group of kOpenGroups) {
    env.registerType(group.celType, { fields: fieldTypes(group, members.get(group.name) ?? []) });
    env.registerVariable(group.name, group.celType);
  }
  if (kCache.size >= kCacheSize) kCache.delete(kCache.keys().next().value as string);
  kCache.set(key, env);
  return env;
}

/** The environment with no undeclared members: used to parse before collecting. */
export function parsingEnvironment(): Environment {
  return environmentFor(new Map());
}

/** Children of a parsed (not yet checked) node, macros by their call form. */
export function parsedChildren(node: ASTNode): ASTNode[] {
  const out: ASTNode[] = [];
  const args = node.args as unknown;
  switch (node.op) {
    case 'value':
    case 'id':
      return out;
    case '.':
    case '.?':
      out.push((args as [ASTNode, string])[0]);
      return out;
    case 'call':
      out.push(...(args as [string, ASTNode[]])[1]);
      return out;
    case 'rcall': {
      const [, receiver, list] = args as [string, ASTNode, ASTNode[]];
      out.push(receiver, ...list);
      return out;
    }
    case 'map':
      for (const [k, v] of args as [ASTNode, ASTNode][]) out.push(k, v);
      return out;
    case '!_':
    case '-_':
      out.push(args as ASTNode);
      return out;
    default:
      out.push(...(args as ASTNode[]));
      return out;
  }
}

/** Collects undeclared members read statically on open groups. */
export function collectOpenMembers(root: ASTNode): OpenMembers {
  const found = new Map<string, Set<string>>();
  const visit = (node: ASTNode): void => {
    let member: string | undefined;
    let base: ASTNode | undefined;
    if (node.op === '.' || node.op === '.?') {
      [base, member] = node.args as [ASTNode, string];
    } else if (node.op === '[]') {
      const [b, key] = node.args as [ASTNode, ASTNode];
      base = b;
      if (key.op === 'value' && typeof key.args === 'string') member = key.args;
    }
    if (base !== undefined && member !== undefined && base.op === 'id') {
      const group = kOpenGroups.find((g) => g.name === base.args);
      if (group !== undefined && !Object.hasOwn(group.fields, member)) {
        let set = found.get(group.name);
        if (set === undefined) found.set(group.name, (set = new Set()));
        set.add(member);
      }
    }
    for (const child of parsedChildren(node)) visit(child);
  };
  visit(root);
  return new Map([...found].map(([g, s]) => [g, [...s].sort()]));
}
