// Checks shared by the routes' query strings: known parameters only, each at most once (every keyed
// route: the list routes, cases, audit, webhook deliveries, and the routes that take none or one, such
// as events, scores and accounts); a page size; opaque cursors. Pure.
import { createHash } from 'node:crypto';
import { apiError, type ApiError } from './errors.js';

export const kDefaultPageSize = 50;
export const kMaxPageSize = 100;

/** A VALIDATION_ERROR for a parameter this route does not know, or one given twice; else null. */
export function unknownOrRepeatedParameter(params: URLSearchParams, allowed: ReadonlySet<string>): ApiError | null {
  for (const name of new Set(params.keys())) {
    if (name === '') return apiError('VALIDATION_ERROR', 'A query parameter without a name (?=…) is not one; name it.', 'query');
    if (!allowed.has(name)) return apiError('VALIDATION_ERROR', `${name} is not a query parameter of this route.`, name);
    if (params.getAll(name).length > 1) return apiError('VALIDATION_ERROR', `${name} is given more than once.`, name);
  }
  return null;
}

/**
 * A VALIDATION_ERROR naming the parameter whose name or value holds a malformed percent escape (a
 * lone `%`, `%ZZ`) or escapes that write no UTF-8 (`%C3` alone); else null. URLSearchParams keeps
 * the first as written and reads the second as U+FFFD: a filter would match nothing, an id find
 * nothing, where the request is wrong.
 */
export function malformedQueryEscape(query: string): ApiError | null {
  if (!query.includes('%')) return null;
  for (const pair of query.split('&')) {
    if (!pair.includes('%') || decodes(pair)) continue;
    const equals = pair.indexOf('=');
    const rawName = (equals === -1 ? pair : pair.slice(0, equals)).replaceAll('+', ' ');
    const name = decodes(rawName) && rawName !== '' ? decodeURIComponent(rawName) : 'query';
    return apiError('VALIDATION_ERROR', `${name} holds a malformed percent escape; write % as %25 and other characters as the %XX escapes of their UTF-8 bytes.`, name);
  }
  return null;
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

const kNoParameters: ReadonlySet<string> = new Set();

/**
 * The query string of a route that knows only `allowed` (no parameter, by default): a
 * VALIDATION_ERROR naming the first parameter that is unknown or given twice, else null — so that
 * a misspelt or misplaced parameter (`?async=true` on POST /v1/events) is refused, not silently
 * ignored. An empty query string is not parsed: POST /v1/events runs this on every request.
 */
export function refuseUnknownQuery(query: string, allowed: ReadonlySet<string> = kNoParameters): ApiError | null {
  return query === '' ? null : unknownOrRepeatedParameter(new URLSearchParams(query), allowed);
}

/** `limit`: absent → the default; else an integer from 1 to kMaxPageSize, or a VALIDATION_ERROR. */
export function parsePageSize(raw: string | null): number | ApiError {
  if (raw === null) return kDefaultPageSize;
  if (!/^[0-9]{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > kMaxPageSize) {
    return apiError('VALIDATION_ERROR', `limit must be an integer from 1 to ${kMaxPageSize}.`, 'limit');
  }
  return Number(raw);
}

/**
 * A cursor: the position after a page's last row, as base64url of its JSON, then a check that ties
 * it to its listing — `scope` names the route and the key's project (and the list, for a list's
 * items). A cursor from another project, environment or listing, or one cut short or changed, is
 * then refused (400 on `cursor`) instead of silently skipping rows. The check is a plain hash, not
 * a signature: whoever forges one only picks a position in a listing the key can read anyway.
 */
export function encodeCursor(scope: string, position: readonly unknown[]): string {
  const json = JSON.stringify(position);
  return `${Buffer.from(json).toString('base64url')}.${cursorCheck(scope, json)}`;
}

/** The position inside a cursor of `length` parts that `encodeCursor(scope, …)` made, or null. */
export function decodeCursor(scope: string, text: string, length: number): unknown[] | null {
  const dot = text.indexOf('.');
  const encoded = text.slice(0, dot);
  // base64url as encodeCursor writes it, exactly (the decoder skips characters it does not know).
  if (dot <= 0 || !/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  const json = Buffer.from(encoded, 'base64url').toString('utf8');
  if (Buffer.from(json).toString('base64url') !== encoded || text.slice(dot + 1) !== cursorCheck(scope, json)) return null;
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) && value.length === length ? value : null;
  } catch {
    return null;
  }
}

function cursorCheck(scope: string, json: string): string {
  return createHash('sha256').update(scope).update('\u0000').update(json).digest().subarray(0, 9).toString('base64url');
}

/** The first and the last millisecond an answer can write (years 0001 to 9999, four digits). */
export const kFirstInstant = new Date(0).setUTCFullYear(1, 0, 1);
const kLastInstant = new Date(0).setUTCFullYear(9999, 11, 31) + 86_400_000 - 1;
const kRfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * An RFC 3339 date-time (section 5.6) as epoch ms, or null when `value` is not one. Date.parse
 * alone takes 2026-02-30 for March 2 and T24:00 for the next day: a filter or an expiry would
 * silently move. Every field is checked against the calendar (a leap second, :60, is refused:
 * Date cannot hold it). A fraction finer than a millisecond is cut to the millisecond (`'down'`),
 * or, with `'up'`, rounded to the next one: the bound for `t < value` and `t >= value` over times
 * stored in whole milliseconds (an exclusive `created_before`, a backtest's `from` and `to`).
 */
export function parseRfc3339(value: string, rounding: 'down' | 'up' = 'down'): number | null {
  const match = kRfc3339.exec(value);
  if (match === null) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // setUTCFullYear, not Date.UTC, which reads years 0–99 as 1900–1999 (their leap years differ).
  const daysInMonth = new Date(new Date(0).setUTCFullYear(year, month, 0)).getUTCDate();
  // Year 0000 (1 BC) is refused: the API's times are of years 1 to 9999, written with four digits.
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return null;
  if (match[9] !== undefined && (Number(match[9]) > 23 || Number(match[10]) > 59)) return null;
  const time = Date.parse(value);
  // In years 1 to 9999 once the offset is applied too: 0001-01-01T00:30:00+01:00 is in year 0, and
  // 9999-12-31T23:59:59-01:00 in year 10000, which an answer could not write back in four digits.
  if (Number.isNaN(time) || time < kFirstInstant || time > kLastInstant) return null;
  // Rounded up, the last millisecond of year 9999 stays its last (not year 10000's first).
  return rounding === 'up' && /[1-9]/.test(match[7]?.slice(4) ?? '') ? Math.min(time + 1, kLastInstant) : time;
}
