// Size bounds of values, for the cost estimate (cost.ts) and the op table's
// cost functions (ops.ts). See cost.ts for where the bounds come from.

import { kMaxBodyBytes } from './limits.js';

/**
 * Upper bounds of a value. `len`: string units, list elements or map entries;
 * `deep`: everything it contains, nested values included. `input`: read from
 * the event body, where each list element takes at least two bytes.
 */
export interface SizeBound {
  readonly len: number;
  readonly deep: number;
  readonly input: boolean;
}

export interface Estimate {
  readonly cost: number;
  readonly size: SizeBound;
}

/** A number, bool, timestamp, duration or null. */
export const kScalarSize: SizeBound = { len: 1, deep: 1, input: false };
/** Any string, list or map read from the event. */
export const kInputSize: SizeBound = { len: kMaxBodyBytes, deep: kMaxBodyBytes, input: true };

/** Elements a comprehension over a value of this size can visit. */
export function elementsOf(size: SizeBound): number {
  return size.input ? Math.min(size.len, Math.ceil(size.deep / 2)) : size.len;
}

/** The bound of one element (or key) of a collection. */
export function elementOf(size: SizeBound): SizeBound {
  return { len: size.deep, deep: size.deep, input: size.input };
}

/** The larger of two bounds, member by member. */
export function maxSize(a: SizeBound, b: SizeBound): SizeBound {
  return { len: Math.max(a.len, b.len), deep: Math.max(a.deep, b.deep), input: a.input || b.input };
}

