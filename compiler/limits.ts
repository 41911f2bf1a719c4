// Structural limits. They bound compile time, the size of the emitted source
// and the work a single rule can do per event. docs/rules.md lists them.

/** Longest accepted expression text, in UTF-16 code units. */
export const kMaxExpressionLength = 4096;

/**
 * Levels of nesting an expression may have: calls, lists, maps, parentheses, and the member and
 * index selections of a chain (`extras.a.b` is two).
 */
export const kMaxNestingDepth = 32;

/** Passed to cel-js's parser (see its `limits` option). */
export const kCelLimits = {
  maxAstNodes: 512,
  // cel-js counts the whole expression as a level of its own.
  maxDepth: kMaxNestingDepth + 1,
  maxListElements: 256,
  maxMapEntries: 64,
  maxCallArguments: 8,
} as const;

/** Rules in one ruleset (archived rules included, they are still records). */
export const kMaxRules = 1000;

/** Bands in one rule. */
export const kMaxBands = 16;

/** Longest description. */
export const kMaxDescriptionLength = 2000;

/** Longest band label. */
export const kBandPattern = /^[a-z][a-z0-9_]{0,31}$/;

/** Rule ids (DESIGN §3). */
export const kRuleIdPattern = /^[a-z][a-z0-9_]{0,63}$/;

/** List ids, as rule ids (DESIGN §8): the first argument of in_list(). */
export const kListIdPattern = kRuleIdPattern;

/** Largest |score_delta|: keeps every sum exact in doubles. */
export const kMaxAbsDelta = 1_000_000;

/** Longest regular expression pattern given to matches(). */
export const kMaxRegexPatternLength = 256;

/**
 * The default request body cap of the interface (1 MiB). Every string, list
 * and map a rule reads from the event or `extras` fits in it, so it bounds
 * their sizes in the cost estimate (cost.ts).
 */
export const kMaxBodyBytes = 1_048_576;

/**
 * Worst-case cost one rule (its expression and all its bands) may have,
 * estimated when it is saved and when a ruleset is published (cost.ts). The
 * units are those of cel-go's cost estimator; Kubernetes uses the same figure
 * as its per-expression limit. Rules above it are refused.
 */
export const kMaxRuleCost = 10_000_000;

/**
 * Cost one event may spend across all rules of a ruleset at run time, counted
 * in the same units: macro iterations and the work of string, list and map
 * operations whose time grows with their input. Past it the evaluation stops
 * and the event is not scored (docs/rules.md, "Limits").
 */
export const kEventBudget = 20_000_000;

/** The CEL int range, checked after every int operation (values are doubles). */
export const kIntMax = 9223372036854775807;
export const kIntMin = -9223372036854775808;
