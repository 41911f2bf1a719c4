// Whole-ruleset compile: rule records in, the source of ONE function out.
//
// Emitted source (the body of `new Function('rt', source)`, see load.ts):
//
//   "use strict";
//   const A = rt.kAbsent, ...; const rt_str = rt.str, ...    runtime, by name
//   const K = rt.constants([...]); const k0 = K[0], ...      regexes, sets, lists
//   let B = 0; let g0, h0, ...;                              budget, hoisted reads
//   const e0 = [rt.entry(...)], n0 = rt.entry(...); ...      frozen outcome entries
//   function r0() { ... }                                    one per rule: band index,
//   function m0(c) { ... }                                   -1 no match, -2 degraded
//   return function ruleset(input) { ... };                  the ruleset function
//
// Rule functions read the hoisted values from the enclosing scope; evaluation
// is synchronous and not re-entrant, so one set of slots per loaded ruleset is
// safe and keeps every read monomorphic.

import { Code, Name, _, join, safeStringify } from './codegen.js';
import { compileExpression } from './expression.js';
import { FunctionFrame, Lowered, N, RuleState, RulesetScope } from './ir.js';
import { kMaxIterations, kMaxRules } from './limits.js';
import { loadRuleset } from './load.js';
import { validateRecord } from './validate.js';
import type { CompileResult, RuleDefinition, RuleDiagnostic, RulesetArtifact } from './types.js';

/** Outcome codes of a rule function. */
const kNoMatch = -1;
const kDegraded = -2;
const kFailed = -3;

interface Band {
  readonly label: string;
  readonly delta: number;
}

interface CompiledRule {
  readonly def: RuleDefinition;
  readonly fn: Name;
  readonly source: Code;
  readonly bands: readonly Band[];
}

function bandsOf(rule: RuleDefinition): Band[] {
  const scoring = rule.kind === 'scoring';
  if (rule.bands === null) return [{ label: 'match', delta: scoring ? rule.score_delta : 0 }];
  return rule.bands.map((b) => ({ label: b.band, delta: scoring ? b.score_delta : 0 }));
}

/** Largest positive delta an active scoring rule can add. */
function maxContribution(rule: RuleDefinition): number {
  if (rule.kind !== 'scoring' || rule.status !== 'active') return 0;
  return Math.max(0, ...bandsOf(rule).map((b) => b.delta));
}

function ruleFunction(
  fn: Name,
  frame: FunctionFrame,
  state: RuleState,
  condition: Lowered,
  bands: readonly Lowered[] | null,
): Code {
  const v = new Name('v');
  const steps: Code[] = [];
  if (state.usesBudget) steps.push(_`${N.budget} = ${kMaxIterations};`);
  steps.push(_`let ${v} = ${condition.code};`);
  steps.push(_`if (${v} !== true) return ${v} === ${N.typeError} ? ${kDegraded} : ${kNoMatch};`);
  if (bands === null) steps.push(_`return 0;`);
  else {
    // First true band wins. A band that errors counts as not true (an absent
    // value makes its comparison false); a type error in any band marks the
    // rule degraded if no band matches.
    const d = new Name('d');
    steps.push(_`let ${d} = false;`);
    let exhaustive = false;
    for (const [i, band] of bands.entries()) {
      if (band.konst?.value === true) {
        // A band that is literally `true` catches everything left.
        steps.push(_`return ${i};`);
        exhaustive = true;
        break;
      }
      steps.push(_`${v} = ${band.code};`);
      steps.push(_`if (${v} === true) return ${i};`);
      steps.push(_`if (${v} === ${N.typeError}) ${d} = true;`);
    }
    if (!exhaustive) steps.push(_`return ${d} ? ${kDegraded} : ${kNoMatch};`);
  }
  const lines = frame.temps.length > 0 ? [frame.declarations()] : [];
  return _`function ${fn}() {
  ${join([...lines, _`try {\n    ${join(steps, _`\n    `)}\n  } catch {\n    return ${kFailed};\n  }`], _`\n  `)}
}`;
}

function diagnostic(ruleId: string, field: string, message: string, position: RuleDiagnostic['position'] = null): RuleDiagnostic {
  return { rule_id: ruleId, field, message, position };
}

/**
 * Compiles a whole ruleset. Archived rules are skipped; duplicate ids, invalid
 * records and expressions that do not compile are reported, all at once.
 */
export function compileRuleset(rules: readonly RuleDefinition[]): CompileResult {
  if (!Array.isArray(rules)) return { ok: false, errors: [diagnostic('', 'rules', 'must be an array of rules')] };
  if (rules.length > kMaxRules) {
    return { ok: false, errors: [diagnostic('', 'rules', `a ruleset has at most ${kMaxRules} rules`)] };
  }
  const errors: RuleDiagnostic[] = [];
  const seen = new Set<string>();
  const scope = new RulesetScope();
  const compiled: CompiledRule[] = [];

  for (const input of rules) {
    const id = typeof (input as { rule_id?: unknown })?.rule_id === 'string' ? (input as RuleDefinition).rule_id : '';
    if (id !== '' && seen.has(id)) {
      errors.push(diagnostic(id, 'rule_id', `duplicate rule id '${id}'`));
      continue;
    }
    seen.add(id);
    if ((input as { status?: unknown })?.status === 'archived') continue;
    const { rule, problems } = validateRecord(input);
    for (const p of problems) errors.push(diagnostic(id, p.field, p.message));
    if (rule === null) continue;

    const frame = new FunctionFrame();
    const state: RuleState = { usesBudget: false };
    const condition = compileExpression(rule.expression, scope, frame, state);
    if (!condition.ok) errors.push(diagnostic(id, 'expression', condition.problem.message, condition.problem.position));
    const bands: Lowered[] = [];
    (rule.bands ?? []).forEach((band, i) => {
      const r = compileExpression(band.expression, scope, frame, state);
      if (r.ok) bands.push(r.value);
      else errors.push(diagnostic(id, `bands[${i}].expression`, r.problem.message, r.problem.position));
    });
    if (!condition.ok || bands.length !== (rule.bands?.length ?? 0)) continue;
    const fn = scope.names.name('r');
    compiled.push({ def: rule, fn, source: ruleFunction(fn, frame, state, condition.value, rule.bands === null ? null : bands), bands: bandsOf(rule) });
  }
  if (errors.length > 0) return { ok: false, errors };

  const artifact = assemble(scope, compiled);
  // A compiler bug must never be stored as a ruleset: load it once here.
  try {
    loadRuleset(artifact.source);
  } catch (err) {
    throw new Error(`compiler emitted invalid JavaScript: ${(err as Error).message}`);
  }
  return { ok: true, artifact };
}

const kKindOrder = ['trust', 'hard_block', 'scoring', 'monitoring'] as const;

function assemble(scope: RulesetScope, compiled: readonly CompiledRule[]): RulesetArtifact {
  const active = kKindOrder.flatMap((kind) => compiled.filter((r) => r.def.status === 'active' && r.def.kind === kind));
  const shadow = compiled.filter((r) => r.def.status === 'shadow');
  const maxPossible = compiled.reduce((sum, r) => sum + maxContribution(r.def), 0);

  const declarations: Code[] = [];
  const body: Code[] = [];
  const r = new Name('r');
  const names = {
    shadow: new Name('shadow'),
    degraded: new Name('degraded'),
    flags: new Name('flags'),
    actions: new Name('actions'),
    score: new Name('score'),
  };
  const rt = (name: string): Code => _`${N.rt}.${new Name(name)}`;

  // Shadow rules run first, so an early trust or hard-block return still carries them.
  const shadowValues: Name[] = [];
  for (const rule of shadow) {
    const { def } = rule;
    const entries = scope.names.name('s');
    const none = scope.names.name('s');
    const degraded = scope.names.name('s');
    const shadowOf = (matched: boolean, band: string | null, delta: number, isDegraded: boolean): Code =>
      _`${rt('shadow')}(${def.rule_id}, ${def.version}, ${def.kind}, ${matched}, ${band}, ${delta}, ${isDegraded})`;
    declarations.push(
      _`const ${entries} = [${join(rule.bands.map((b) => shadowOf(true, b.label, b.delta, false)))}];`,
      _`const ${none} = ${shadowOf(false, null, 0, false)};`,
      _`const ${degraded} = ${shadowOf(false, null, 0, true)};`,
    );
    const local = scope.names.name('o');
    shadowValues.push(local);
    body.push(_`${r} = ${rule.fn}(); const ${local} = ${r} >= 0 ? ${entries}[${r}] : ${r} === ${kDegraded} ? ${degraded} : ${none};`);
  }
  body.push(_`const ${names.shadow} = [${join(shadowValues)}];`);

  // Each active rule leaves its breakdown entry in a local; the breakdown is
  // one array literal of exactly the right size at the end.
  const breakdownValues: Name[] = [];
  for (const rule of active) {
    const { def } = rule;
    const entries = scope.names.name('e');
    const none = scope.names.name('e');
    const entryOf = (matched: boolean, band: string | null, delta: number): Code =>
      _`${rt('entry')}(${def.rule_id}, ${def.version}, ${delta}, ${band}, ${matched}, ${def.action})`;
    declarations.push(
      _`const ${entries} = [${join(rule.bands.map((b) => entryOf(true, b.label, b.delta)))}];`,
      _`const ${none} = ${entryOf(false, null, 0)};`,
    );
    const local = scope.names.name('b');
    breakdownValues.push(local);
    const notMatched = _`${local} = ${none}; if (${r} === ${kDegraded}) ${names.degraded}.push(${def.rule_id});`;
    const verdict = (trust: boolean): Code =>
      _`return { trust_override: ${trust}, hard_block_hit: ${!trust}, score: ${trust ? _`0` : N.maxPossible}, max_possible: ${N.maxPossible}, breakdown: [${entries}[${r}]], flags: [], actions: ${def.action === null ? _`[]` : _`[${def.action}]`}, degraded: ${names.degraded}, shadow: ${names.shadow} };`;
    const action = def.action === null
      ? _``
      : _` if (!${names.actions}.includes(${def.action})) ${names.actions}.push(${def.action});`;
    let matched: Code;
    switch (def.kind) {
      case 'trust':
        matched = verdict(true);
        break;
      case 'hard_block':
        matched = verdict(false);
        break;
      case 'scoring': {
        const deltas = rule.bands.map((b) => b.delta);
        let add: Code;
        if (deltas.every((d) => d === deltas[0])) add = _`${names.score} += ${deltas[0] ?? 0};`;
        else {
          const table = scope.names.name('d');
          declarations.push(_`const ${table} = [${join(deltas)}];`);
          add = _`${names.score} += ${table}[${r}];`;
        }
        matched = _`{ ${add} ${local} = ${entries}[${r}];${action} }`;
        break;
      }
      default:
        matched = _`{ ${local} = ${entries}[${r}]; ${names.flags}.push(${def.rule_id});${action} }`;
    }
    body.push(_`${r} = ${rule.fn}(); if (${r} >= 0) ${matched} else { ${notMatched} }`);
  }

  // Everything that may ask for a runtime helper runs before the helper list is taken.
  const root = scope.helper('root');
  const reads = scope.readStatements();
  const helpers = [...scope.helpers()].map(([name, local]) => _`${local} = ${rt(name)}`);
  const constantNames = scope.constantNames();
  const readNames = scope.readNames();
  const source = _`"use strict";
// fraud-scorer ruleset: generated by compiler/ from ${compiled.length} rules. Do not edit.
const ${N.absent} = ${rt('kAbsent')}, ${N.typeError} = ${rt('kTypeError')}, ${N.evalError} = ${rt('kEvalError')};
${helpers.length > 0 ? _`const ${join(helpers)};` : _``}
const ${N.constants} = ${rt('constants')}(${safeStringify(scope.constants)});
${constantNames.length > 0 ? _`const ${join(constantNames.map((n, i) => _`${n} = ${N.constants}[${i}]`))};` : _``}
const ${N.maxPossible} = ${maxPossible};
let ${N.budget} = 0;
${readNames.length > 0 ? _`let ${join(readNames)};` : _``}
${join(declarations, _`\n`)}
${join(compiled.map((c) => c.source), _`\n`)}
${join(scope.functions, _`\n`)}
return function ruleset(input) {
  const ${N.input} = ${root}(input), ${N.event} = ${root}(${N.input}.event), ${N.signals} = ${root}(${N.input}.signals);
  ${join(reads, _`\n  `)}
  const ${names.degraded} = [], ${names.flags} = [], ${names.actions} = [];
  let ${r}, ${names.score} = 0${breakdownValues.length > 0 ? _`, ${join(breakdownValues)}` : _``};
  ${join(body, _`\n  `)}
  return { trust_override: false, hard_block_hit: false, score: ${names.score}, max_possible: ${N.maxPossible}, breakdown: [${join(breakdownValues)}], flags: ${names.flags}, actions: ${names.actions}, degraded: ${names.degraded}, shadow: ${names.shadow} };
};
`;

  return {
    source: source.str,
    max_possible: maxPossible,
    signals: signalList(scope.signals),
    rules: [...active, ...shadow].map((c) => ({ rule_id: c.def.rule_id, version: c.def.version, kind: c.def.kind, status: c.def.status })),
  };
}

function signalList(read: ReadonlySet<string>): string[] {
  const wholeGroups = new Set([...read].filter((s) => !s.includes('.')));
  return [...read].filter((s) => !s.includes('.') || !wholeGroups.has(s.split('.')[0] as string)).sort();
}
