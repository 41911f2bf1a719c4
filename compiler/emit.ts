// Whole-ruleset compile: rule records in, the source of ONE function out.
//
// Emitted source (the body of `new Function('rt', source)`, see load.ts):
//
//   "use strict";
//   const A = rt.kAbsent, ...; const rt_str = rt.str, ...    runtime, by name
//   const K = rt.constants([...]); const k0 = K[0], ...      regexes, sets, lists
//   const B = rt.budget; let g0, h0, ...;                    budget, hoisted reads
//   const e0 = [rt.entry(...)], n0 = rt.entry(...); ...      frozen outcome entries
//   function r0() { ... }                                    one per rule: band index,
//   function m0(c) { ... }                                   -1 no match, -2 degraded
//   return function ruleset(input) { ... };                  the ruleset function
//
// Rule functions read the hoisted values from the enclosing scope; evaluation
// is synchronous and not re-entrant, so one set of slots per loaded ruleset is
// safe and keeps every read monomorphic.

import { Code, Name, _, join, safeStringify } from './codegen.js';
import { compileExpression, ruleCostProblem } from './expression.js';
import { FunctionFrame, Lowered, N, RulesetScope } from './ir.js';
import { kEventBudget, kMaxRules } from './limits.js';
import { loadRuleset } from './load.js';
import { validateRecord } from './validate.js';
import type { CompileResult, RuleDefinition, RuleDiagnostic, RulesetArtifact } from './types.js';

/**
 * Rules per emitted function (see assemble). V8 stops optimising functions
 * past a bytecode size; measured on the generated 200-rule bench ruleset,
 * inlined rules run about twice as fast as a function per rule up to about
 * 128 rules per function and collapse beyond.
 */
const kChunkRules = 48;

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
  /** The rule function's name, or the block label when inlined. */
  readonly fn: Name;
  readonly frame: FunctionFrame;
  readonly condition: Lowered;
  readonly bandCodes: readonly Lowered[] | null;
  readonly bands: readonly Band[];
  /** Sorted ids of the lists the rule reads. */
  readonly lists: string[];
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

/**
 * The statements of one rule: the condition, then the bands. `exit(code)`
 * ends the rule with an outcome code (a `return` in a rule function, an
 * assignment and a `break` when the rule is inlined).
 */
function ruleSteps(rule: CompiledRule, exit: (code: Code) => Code): Code[] {
  const v = new Name('v');
  const steps: Code[] = [];
  steps.push(_`let ${v} = ${rule.condition.code};`);
  steps.push(_`if (${v} !== true) ${exit(_`${v} === ${N.typeError} ? ${kDegraded} : ${kNoMatch}`)}`);
  if (rule.bandCodes === null) steps.push(exit(_`0`));
  else {
    // First true band wins. A band that errors counts as not true (an absent
    // value makes its comparison false); a type error in any band marks the
    // rule degraded if no band matches.
    const d = new Name('d');
    steps.push(_`let ${d} = false;`);
    let exhaustive = false;
    for (const [i, band] of rule.bandCodes.entries()) {
      if (band.konst?.value === true) {
        // A band that is literally `true` catches everything left.
        steps.push(exit(_`${i}`));
        exhaustive = true;
        break;
      }
      steps.push(_`${v} = ${band.code};`);
      steps.push(_`if (${v} === true) ${exit(_`${i}`)}`);
      steps.push(_`if (${v} === ${N.typeError}) ${d} = true;`);
    }
    if (!exhaustive) steps.push(exit(_`${d} ? ${kDegraded} : ${kNoMatch}`));
  }
  return steps;
}

/** A rule as a labelled block; `assign(code)` stores its outcome code. */
function ruleBlock(rule: CompiledRule, assign: (code: Code) => Code): Code {
  const label = rule.fn;
  const steps = ruleSteps(rule, (code) => _`{ ${assign(code)} break ${label}; }`);
  return _`${label}: try {\n    ${join(steps, _`\n    `)}\n  } catch {\n    ${assign(_`${kFailed}`)}\n  }`;
}

function diagnostic(ruleId: string, field: string, message: string, position: RuleDiagnostic['position'] = null): RuleDiagnostic {
  return { rule_id: ruleId, field, message, position };
}

/** Options of compileRuleset. */
export interface CompileOptions {
  /**
   * The worst-case cost a rule may have (default kMaxRuleCost). The tests of
   * the language's semantics raise it to exercise expressions the service
   * would refuse.
   */
  readonly maxRuleCost?: number;
  /**
   * The ids of the project's lists: in_list() of any other id is refused. Left out, list ids are
   * not checked (the compiler alone knows no project).
   */
  readonly lists?: readonly string[];
}

/**
 * Compiles a whole ruleset. Archived rules are skipped; duplicate ids, invalid
 * records, expressions that do not compile and rules over the cost limit are
 * reported, all at once.
 */
export function compileRuleset(rules: readonly RuleDefinition[], options: CompileOptions = {}): CompileResult {
  if (!Array.isArray(rules)) return { ok: false, errors: [diagnostic('', 'rules', 'must be an array of rules')] };
  if (rules.length > kMaxRules) {
    return { ok: false, errors: [diagnostic('', 'rules', `a ruleset has at most ${kMaxRules} rules`)] };
  }
  const errors: RuleDiagnostic[] = [];
  const seen = new Set<string>();
  const scope = new RulesetScope(options.lists === undefined ? null : new Set(options.lists));
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
    scope.ruleLists = new Set();
    const condition = compileExpression(rule.expression, scope, frame);
    if (!condition.ok) errors.push(diagnostic(id, 'expression', condition.problem.message, condition.problem.position));
    const bands: Lowered[] = [];
    const costs = condition.ok ? [condition.cost] : [];
    (rule.bands ?? []).forEach((band, i) => {
      const r = compileExpression(band.expression, scope, frame);
      if (r.ok) {
        bands.push(r.value);
        costs.push(r.cost);
      } else errors.push(diagnostic(id, `bands[${i}].expression`, r.problem.message, r.problem.position));
    });
    if (!condition.ok || bands.length !== (rule.bands?.length ?? 0)) continue;
    // Checked again at publish: a rule saved before the limit existed, or under another, is caught here.
    const tooCostly = ruleCostProblem(costs, options.maxRuleCost);
    if (tooCostly !== null) {
      errors.push(diagnostic(id, tooCostly.index === 0 ? 'expression' : `bands[${tooCostly.index - 1}].expression`, tooCostly.message));
      continue;
    }
    const fn = scope.names.name('r');
    compiled.push({
      def: rule, fn, frame, condition: condition.value,
      bandCodes: rule.bands === null ? null : bands, bands: bandsOf(rule), lists: [...scope.ruleLists].sort(),
    });
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
  // Evaluation order: shadow rules first, so an early trust or hard-block
  // return still carries them; then active rules by kind, input order within.
  const ordered = [...shadow, ...active];
  const lastShadow = shadow.at(-1);
  const maxPossible = compiled.reduce((sum, r) => sum + maxContribution(r.def), 0);
  // Rules are evaluated inline, no call per rule, every input read a local.
  // Up to kChunkRules rules the whole ruleset is the one function: outcomes in
  // locals, the breakdown one array literal. Beyond, rules go in chunk
  // functions of kChunkRules that read their own inputs and add to shared
  // accumulators; a chunk returns true when a trust or hard-block rule ends
  // evaluation. No function then grows with the ruleset, so V8 optimises all.
  const single = ordered.length <= kChunkRules;
  const r = new Name('r');
  const out = single
    ? { shadow: new Name('shadow'), degraded: new Name('degraded'), flags: new Name('flags'), actions: new Name('actions'), score: new Name('score'), breakdown: null }
    : { shadow: new Name('SH'), degraded: new Name('DG'), flags: new Name('FL'), actions: new Name('AC'), score: new Name('sc'), breakdown: new Name('BD') };
  const total = new Name('SC');
  const verdictHolder = new Name('V');
  const activeIndex = new Map(active.map((c, i) => [c, i]));
  const declarations: Code[] = [];
  const breakdownLocals: Name[] = [];

  /** The statement that records one rule's outcome code `r`. */
  const record = (rule: CompiledRule): Code => {
    const { def } = rule;
    if (def.status === 'shadow') {
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
      // A shadow rule that ran out of budget could not be evaluated: degraded, like a wrong type.
      return _`${out.shadow}.push(${r} >= 0 ? ${entries}[${r}] : ${r} === ${kDegraded} || ${N.budget}.left < 0 ? ${degraded} : ${none});`;
    }
    const entries = scope.names.name('e');
    const none = scope.names.name('e');
    const entryOf = (matched: boolean, band: string | null, delta: number): Code =>
      _`${rt('entry')}(${def.rule_id}, ${def.version}, ${delta}, ${band}, ${matched}, ${def.action})`;
    declarations.push(
      _`const ${entries} = [${join(rule.bands.map((b) => entryOf(true, b.label, b.delta)))}];`,
      _`const ${none} = ${entryOf(false, null, 0)};`,
    );
    let keep: (entry: Code) => Code;
    if (out.breakdown === null) {
      const local = scope.names.name('b');
      breakdownLocals.push(local);
      keep = (entry) => _`${local} = ${entry};`;
    } else {
      const bd = out.breakdown;
      const slot = activeIndex.get(rule) as number;
      keep = (entry) => _`${bd}[${slot}] = ${entry};`;
    }
    const notMatched = _`${keep(_`${none}`)} if (${r} === ${kDegraded}) ${out.degraded}.push(${def.rule_id});`;
    const verdict = (trust: boolean): Code => {
      const outcome = _`{ trust_override: ${trust}, hard_block_hit: ${!trust}, score: ${trust ? _`0` : N.maxPossible}, max_possible: ${N.maxPossible}, breakdown: [${entries}[${r}]], flags: [], actions: ${def.action === null ? _`[]` : _`[${def.action}]`}, degraded: ${out.degraded}, shadow: ${out.shadow}, over_budget: ${N.budget}.left < 0 }`;
      return single ? _`return ${outcome};` : _`{ ${verdictHolder} = ${outcome}; return true; }`;
    };
    const action = def.action === null
      ? _``
      : _` if (!${out.actions}.includes(${def.action})) ${out.actions}.push(${def.action});`;
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
        if (deltas.every((d) => d === deltas[0])) add = _`${out.score} += ${deltas[0] ?? 0};`;
        else {
          const table = scope.names.name('d');
          declarations.push(_`const ${table} = [${join(deltas)}];`);
          add = _`${out.score} += ${table}[${r}];`;
        }
        matched = _`{ ${add} ${keep(_`${entries}[${r}]`)}${action} }`;
        break;
      }
      default:
        matched = _`{ ${keep(_`${entries}[${r}]`)} ${out.flags}.push(${def.rule_id});${action} }`;
    }
    return _`if (${r} >= 0) ${matched} else { ${notMatched} }`;
  };

  /**
   * A rule evaluated inline, then recorded. After the last shadow rule the budget starts again:
   * shadow rules have a budget of their own, so one that spends much never leaves the active rules
   * short — the event's over_budget is the active rules' alone (shadow rules never change a result).
   */
  const rule = (c: CompiledRule): Code => {
    const evaluated = _`${ruleBlock(c, (code) => _`${r} = ${code};`)}\n  ${record(c)}`;
    return c === lastShadow ? _`${evaluated}\n  ${N.budget}.left = ${kEventBudget};` : evaluated;
  };
  const temps = (rules: readonly CompiledRule[]): Name[] =>
    Array.from({ length: Math.max(0, ...rules.map((c) => c.frame.temps.length)) }, (_x, i) => new Name(`t${i}`));
  /** Local declarations and input reads for a group of rules. */
  const prologue = (rules: readonly CompiledRule[]): Code[] => {
    const reads = new Set(rules.flatMap((c) => [...c.frame.reads]));
    const locals = [r, ...scope.readNames(reads), ...temps(rules)];
    return [_`let ${join(locals)};`, ...scope.readStatements(reads)];
  };

  // Built before the helper list is taken: reads may ask for helpers.
  const root = scope.helper('root');
  const chunkFunctions: Code[] = [];
  let main: Code;
  const finalOutcome = (score: Code, breakdown: Code): Code =>
    _`return { trust_override: false, hard_block_hit: false, score: ${score}, max_possible: ${N.maxPossible}, breakdown: ${breakdown}, flags: ${out.flags}, actions: ${out.actions}, degraded: ${out.degraded}, shadow: ${out.shadow}, over_budget: ${N.budget}.left < 0 };`;
  if (single) {
    const statements = [
      ...prologue(ordered),
      _`const ${out.shadow} = [], ${out.degraded} = [], ${out.flags} = [], ${out.actions} = [];`,
      _`let ${out.score} = 0;`,
      ...ordered.map(rule),
    ];
    // Declared after `rule` ran: it names the breakdown locals.
    if (breakdownLocals.length > 0) statements.splice(statements.length - ordered.length, 0, _`let ${join(breakdownLocals)};`);
    statements.push(finalOutcome(_`${out.score}`, _`[${join(breakdownLocals)}]`));
    main = join(statements, _`\n  `);
  } else {
    // The accumulators are parameters (locals in each chunk); the breakdown
    // has its final size from the start and each rule fills its own slot.
    const acc = [out.shadow, out.degraded, out.flags, out.actions, out.breakdown as Name];
    const calls: Code[] = [];
    for (let i = 0; i < ordered.length; i += kChunkRules) {
      const chunk = ordered.slice(i, i + kChunkRules);
      const fn = scope.names.name('c');
      chunkFunctions.push(_`function ${fn}(${join([N.input, N.event, N.signals, ...acc])}) {
  ${join([...prologue(chunk), _`let ${out.score} = 0;`, ...chunk.map(rule), _`${total} += ${out.score};`, _`return false;`], _`\n  `)}
}`);
      calls.push(_`if (${fn}(${join([N.input, N.event, N.signals, ...acc])})) return ${verdictHolder};`);
    }
    declarations.push(_`let ${verdictHolder} = null, ${total} = 0;`);
    main = join([
      _`const ${out.shadow} = [], ${out.degraded} = [], ${out.flags} = [], ${out.actions} = [], ${out.breakdown as Name} = ${scope.helper('slots')}(${active.length});`,
      _`${total} = 0;`,
      ...calls,
      finalOutcome(_`${total}`, _`${out.breakdown as Name}`),
    ], _`\n  `);
  }

  const source = _`"use strict";
// fraud-scorer ruleset: generated by compiler/ from ${compiled.length} rules. Do not edit.
${prelude(scope)}
const ${N.maxPossible} = ${maxPossible};
${join(declarations, _`\n`)}
${join(scope.functions, _`\n`)}
${join(chunkFunctions, _`\n`)}
return function ruleset(input) {
  ${entry(root)}
  ${main}
};
`;

  return {
    source: source.str,
    max_possible: maxPossible,
    signals: signalList(scope.signals),
    rules: [...active, ...shadow].map((c) => ({ rule_id: c.def.rule_id, version: c.def.version, kind: c.def.kind, status: c.def.status, lists: c.lists })),
    lists: [...scope.lists].sort(),
  };
}

const rt = (name: string): Code => _`${N.rt}.${new Name(name)}`;

/** The top of every emitted source: error symbols, runtime helpers, constants, the budget. */
export function prelude(scope: RulesetScope): Code {
  const helpers = [...scope.helpers()].map(([name, local]) => _`${local} = ${rt(name)}`);
  const constantNames = scope.constantNames();
  return _`const ${N.absent} = ${rt('kAbsent')}, ${N.typeError} = ${rt('kTypeError')}, ${N.evalError} = ${rt('kEvalError')};
${helpers.length > 0 ? _`const ${join(helpers)};` : _``}
const ${N.constants} = ${rt('constants')}(${safeStringify(scope.constants)});
${constantNames.length > 0 ? _`const ${join(constantNames.map((n, i) => _`${n} = ${N.constants}[${i}]`))};` : _``}
const ${N.budget} = ${rt('budget')};`;
}

/** The first statements of an emitted function of the input: roots, and a fresh budget. */
export function entry(root: Name): Code {
  return _`const ${N.input} = ${root}(input), ${N.event} = ${root}(${N.input}.event), ${N.signals} = ${root}(${N.input}.signals);
  ${N.budget}.left = ${kEventBudget};`;
}

function signalList(read: ReadonlySet<string>): string[] {
  const wholeGroups = new Set([...read].filter((s) => !s.includes('.')));
  return [...read].filter((s) => !s.includes('.') || !wholeGroups.has(s.split('.')[0] as string)).sort();
}
