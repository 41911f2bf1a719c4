// Structural limits. They bound compile time, the size of the emitted source
// and the work a single rule can do per event. docs/rules.md lists them.

/** Longest accepted expression text, in UTF-16 code units. */
export const kMaxExpressionLength = 4096;

/** Passed to cel-js's parser (see its `limits` option). */
export const kCelLimits = {
  maxAstNodes: 512,
  maxDepth: 32,
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

/** Largest |score_delta|: keeps every sum exact in doubles. */
export const kMaxAbsDelta = 1_000_000;

/**
 * Macro iterations (exists, all, exists_one, map, filter) one rule may run per
 * evaluation, all macros and nesting levels together. Beyond it the rule
 * evaluates to an error and does not match.
 */
export const kMaxIterations = 10_000;

/** Longest regular expression pattern given to matches(). */
export const kMaxRegexPatternLength = 256;

/**
 * Longest string matches() runs on. Accepted patterns backtrack at worst
 * polynomially (regex-safety.ts); this bounds that cost per call.
 */
export const kMaxRegexInputLength = 512;

/** The CEL int range, checked after every int operation (values are doubles). */
export const kIntMax = 9223372036854775807;
export const kIntMin = -9223372036854775808;
