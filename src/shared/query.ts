// Checks shared by the list routes' query strings (cases, webhook deliveries): known parameters
// only, each at most once; a page size; opaque cursors. Pure.
import { apiError, type ApiError } from './errors.js';

export const kDefaultPageSize = 50;
export const kMaxPageSize = 100;

/** A VALIDATION_ERROR for a parameter this route does not know, or one given twice; else null. */
export function unknownOrRepeatedParameter(params: URLSearchParams, allowed: ReadonlySet<string>): ApiError | null {
  for (const name of new Set(params.keys())) {
    if (!allowed.has(name)) return apiError('VALIDATION_ERROR', `${name} is not a known query parameter.`, name);
    if (params.getAll(name).length > 1) return apiError('VALIDATION_ERROR', `${name} is given more than once.`, name);
  }
  return null;
}

/** `limit`: absent → the default; else an integer from 1 to kMaxPageSize, or a VALIDATION_ERROR. */
export function parsePageSize(raw: string | null): number | ApiError {
  if (raw === null) return kDefaultPageSize;
  if (!/^[0-9]{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > kMaxPageSize) {
    return apiError('VALIDATION_ERROR', `limit must be an integer from 1 to ${kMaxPageSize}.`, 'limit');
  }
  return Number(raw);
}

/** A cursor: the position after a page's last row, as base64url of its JSON. */
export function encodeCursor(position: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** The position inside a cursor of `length` parts, or null when the text is not one. */
export function decodeCursor(text: string, length: number): unknown[] | null {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(value) && value.length === length ? value : null;
  } catch {
    return null;
  }
}

const kRfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 date-time as epoch ms, or null when `value` is not one. */
export function parseRfc3339(value: string): number | null {
  if (!kRfc3339.test(value)) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : time;
}
