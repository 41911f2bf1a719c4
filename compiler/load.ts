// The one place where ruleset source becomes a function. The runtime helpers
// are handed in as the `rt` parameter: emitted code imports nothing, and sees
// no module scope of ours. Used inside the service's worker threads; cache the
// result per ruleset version, a load costs a parse and a compile.

import * as runtime from './runtime/index.js';
import type { BreakdownEntry, RulesetFunction, ShadowOutcome } from './types.js';

// A plain frozen object: faster property loads than a module namespace, and
// emitted code cannot change what other rulesets see.
const kRuntime = Object.freeze({ ...runtime });

/** Turns the source of a compiled ruleset into its function. */
export function loadRuleset(source: string): RulesetFunction {
  return instantiate(source, kRuntime);
}

export interface LoadedRuleset {
  readonly evaluate: RulesetFunction;
  /**
   * Every breakdown entry and shadow outcome the function can return, in the order the source
   * creates them (the same on every load of the same source). They are shared constants: an
   * outcome can be stored as the positions of its entries (the compact stored result).
   */
  readonly entries: ReadonlyArray<BreakdownEntry | ShadowOutcome>;
}

/** Like loadRuleset, and lists the entries the function's outcomes are made of. */
export function loadRulesetWithEntries(source: string): LoadedRuleset {
  const entries: Array<BreakdownEntry | ShadowOutcome> = [];
  const recording = Object.freeze({
    ...runtime,
    entry: (...args: Parameters<typeof runtime.entry>) => {
      const made = runtime.entry(...args);
      entries.push(made as unknown as BreakdownEntry);
      return made;
    },
    shadow: (...args: Parameters<typeof runtime.shadow>) => {
      const made = runtime.shadow(...args);
      entries.push(made as unknown as ShadowOutcome);
      return made;
    },
  });
  const evaluate = instantiate(source, recording);
  return { evaluate, entries: Object.freeze(entries) };
}

function instantiate(source: string, rt: typeof kRuntime): RulesetFunction {
  if (typeof source !== 'string') throw new TypeError('ruleset source must be a string');
  // The single use of new Function in the project (STYLE.md §2.5).
  const factory = new Function('rt', source) as (rt: typeof kRuntime) => unknown;
  const fn = factory(rt);
  if (typeof fn !== 'function') throw new Error('not the source of a compiled ruleset');
  return fn as RulesetFunction;
}
