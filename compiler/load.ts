// The one place where ruleset source becomes a function. The runtime helpers
// are handed in as the `rt` parameter: emitted code imports nothing, and sees
// no module scope of ours. Used inside the service's worker threads; cache the
// result per ruleset version, a load costs a parse and a compile.

import * as runtime from './runtime/index.js';
import type { RulesetFunction } from './types.js';

// A plain frozen object: faster property loads than a module namespace, and
// emitted code cannot change what other rulesets see.
const kRuntime = Object.freeze({ ...runtime });

/** Turns the source of a compiled ruleset into its function. */
export function loadRuleset(source: string): RulesetFunction {
  if (typeof source !== 'string') throw new TypeError('ruleset source must be a string');
  // The single use of new Function in the project (STYLE.md §2.5).
  const factory = new Function('rt', source) as (rt: typeof kRuntime) => unknown;
  const fn = factory(kRuntime);
  if (typeof fn !== 'function') throw new Error('not the source of a compiled ruleset');
  return fn as RulesetFunction;
}
