// fraud-scorer compiler: CEL rules → one JavaScript function per ruleset.
// Pure: no I/O, no clock, no environment. See docs/rules.md for the language.

export type {
  BreakdownEntry, CompileResult, ListLookup, RuleBand, RuleDefinition, RuleDiagnostic, RuleKind, RuleProblem, RuleStatus,
  RulesetArtifact, RulesetFunction, RulesetInput, RulesetOutcome, ShadowOutcome,
} from './types.js';
export type { Signals } from './signals.js';
export { validateRuleDefinition } from './validate.js';
export type { ValidateOptions } from './validate.js';
export { kListIdPattern } from './limits.js';
export { compileRuleset } from './emit.js';
export type { CompileOptions } from './emit.js';
export { loadRuleset, loadRulesetWithEntries } from './load.js';
export type { LoadedRuleset } from './load.js';
export { getPreset, listPresets } from './presets/index.js';
export type { Preset, PresetPolicy } from './presets/index.js';
export { kGroups, kScalars, kExtras } from './schema.js';
export type { FieldType, GroupDef, ScalarDef } from './schema.js';
