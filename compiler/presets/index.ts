// Shipped presets. Each preset is a JSON data file next to this module
// (imported with `with { type: 'json' }`, which Node 20.10+ supports without a
// flag), so analysts and operators can read them without TypeScript. They are
// validated the first time they are read; a broken preset is a bug and throws.

import defaultPreset from './default.json' with { type: 'json' };
import accountSecurityPreset from './account-security.json' with { type: 'json' };
import { validateRuleDefinition } from '../validate.js';
import type { RuleDefinition } from '../types.js';

export interface PresetPolicy {
  review_threshold: number;
  block_threshold: number;
}

export interface Preset {
  name: string;
  description: string;
  policy: PresetPolicy;
  rules: RuleDefinition[];
}

const kSources: readonly unknown[] = [defaultPreset, accountSecurityPreset];

let validated: readonly Preset[] | null = null;

function validatePreset(raw: unknown): Preset {
  const p = raw as Preset;
  const rules = p.rules.map((r) => {
    const v = validateRuleDefinition(r);
    if (!v.ok) throw new Error(`preset ${p.name}: rule ${String(r.rule_id)}: ${JSON.stringify(v.problems)}`);
    return v.rule;
  });
  return { name: p.name, description: p.description, policy: { ...p.policy }, rules };
}

function presets(): readonly Preset[] {
  validated ??= kSources.map(validatePreset);
  return validated;
}

function copy(p: Preset): Preset {
  return structuredClone(p);
}

/** Every shipped preset (fresh copies: callers may change them). */
export function listPresets(): Preset[] {
  return presets().map(copy);
}

/** One preset by name, or null. */
export function getPreset(name: string): Preset | null {
  const p = presets().find((x) => x.name === name);
  return p === undefined ? null : copy(p);
}
