// Request checks of the backtest and rule statistics routes (docs/backtests.md). Pure: bodies,
// query strings and path parameters in, values or the VALIDATION_ERROR naming the parameter out.
import { apiError, type ApiError } from '../shared/errors.js';
import { kFirstInstant, parseRfc3339, unknownOrRepeatedParameter } from '../shared/query.js';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiError };

/** Events one backtest judges at most (issue 14). */
export const kMaxBacktestEvents = 1_000_000;
/** Longest range of a backtest, in days: the scan reads the events of every project in it. */
export const kMaxBacktestDays = 92;
/** Longest range of rule statistics, in UTC days (both ends included). */
export const kMaxStatsDays = 31;
/** Rule statistics cover the last kDefaultStatsDays days, today included, when no range is given. */
export const kDefaultStatsDays = 7;

const kDayMs = 86_400_000;

function invalid(parameter: string, message: string): { ok: false; error: ApiError } {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, parameter) };
}

const kDate = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A UTC date (YYYY-MM-DD) as the epoch ms of its midnight; null unless it is a real date. */
export function parseDate(text: string): number | null {
  const match = kDate.exec(text);
  if (match === null) return null;
  // setUTCFullYear, not Date.UTC: that reads years 0–99 as 1900–1999. Year 0000 is none (parseRfc3339).
  if (Number(match[1]) < 1) return null;
  const time = new Date(0).setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(time).toISOString().slice(0, 10) === text ? time : null;
}

/**
 * An RFC 3339 date-time, or a date (its UTC midnight), as epoch ms; null otherwise. A fraction
 * finer than a millisecond rounds up: `from` and `to` bound [from, to) over times stored in whole
 * milliseconds.
 */
export function parseInstant(text: string): number | null {
  return parseDate(text) ?? parseRfc3339(text, 'up');
}

export interface BacktestRequest {
  /** A published version, or null: the current drafts and draft policy. */
  readonly version: number | null;
  readonly from: number;
  readonly to: number;
  readonly limit: number;
}

const kBacktestFields = new Set(['version', 'from', 'to', 'limit']);

/** The body of POST /v1/rules/backtests. */
export function parseBacktestRequest(body: Readonly<Record<string, unknown>>): Checked<BacktestRequest> {
  for (const field of Object.keys(body)) {
    if (!kBacktestFields.has(field)) return invalid(field, `${field} is not a field of a backtest request (version, from, to, limit).`);
  }
  let version: number | null = null;
  if (body.version !== undefined && body.version !== null) {
    if (typeof body.version !== 'number' || !Number.isSafeInteger(body.version) || body.version < 1) {
      return invalid('version', 'version must be a published ruleset version (a positive integer), or be left out to test the drafts.');
    }
    version = body.version;
  }
  const times: Record<'from' | 'to', number> = { from: 0, to: 0 };
  for (const field of ['from', 'to'] as const) {
    const value = body[field];
    if (value === undefined) return invalid(field, `${field} is required: an RFC 3339 time (2026-11-20T00:00:00Z) or a UTC date (2026-11-20).`);
    const time = typeof value === 'string' ? parseInstant(value) : null;
    if (time === null) return invalid(field, `${field} must be an RFC 3339 time (2026-11-20T00:00:00Z) or a UTC date (2026-11-20).`);
    times[field] = time;
  }
  if (times.to <= times.from) return invalid('to', 'to must be after from.');
  if (times.to - times.from > kMaxBacktestDays * kDayMs) return invalid('to', `A backtest covers at most ${kMaxBacktestDays} days: to must be within ${kMaxBacktestDays} days of from.`);
  let limit = kMaxBacktestEvents;
  if (body.limit !== undefined) {
    if (typeof body.limit !== 'number' || !Number.isSafeInteger(body.limit) || body.limit < 1 || body.limit > kMaxBacktestEvents) {
      return invalid('limit', `limit must be an integer from 1 to ${kMaxBacktestEvents.toLocaleString('en-US')}.`);
    }
    limit = body.limit;
  }
  return { ok: true, value: { version, from: times.from, to: times.to, limit } };
}

const kBacktestId = /^bt_[A-Za-z0-9]{20}$/;

/** The {backtest_id} of GET /v1/rules/backtests/{backtest_id}. */
export function parseBacktestId(raw: string): Checked<string> {
  return kBacktestId.test(raw) ? { ok: true, value: raw } : invalid('backtest_id', 'backtest_id must be an id answered by POST /v1/rules/backtests (bt_ and 20 letters or digits).');
}

export interface StatsQuery {
  /** UTC midnights of the first and the last day, both included. */
  readonly from: number;
  readonly to: number;
}

const kStatsParameters = new Set(['from', 'to']);

/** GET /v1/rules/{rule_id}/stats?from=YYYY-MM-DD&to=YYYY-MM-DD (UTC days, both included). */
export function parseStatsQuery(query: string, now: number): Checked<StatsQuery> {
  const params = new URLSearchParams(query);
  const refused = unknownOrRepeatedParameter(params, kStatsParameters);
  if (refused !== null) return { ok: false, error: refused };
  const days: Record<'from' | 'to', number | null> = { from: null, to: null };
  for (const name of ['from', 'to'] as const) {
    const raw = params.get(name);
    if (raw === null) continue;
    const day = parseDate(raw);
    if (day === null) return invalid(name, `${name} must be a UTC date, YYYY-MM-DD.`);
    days[name] = day;
  }
  const to = days.to ?? (days.from !== null ? Math.min(days.from + (kDefaultStatsDays - 1) * kDayMs, startOfDay(now)) : startOfDay(now));
  // Not before year 1: a `to` in its first days leaves fewer days by default.
  const from = days.from ?? Math.max(to - (kDefaultStatsDays - 1) * kDayMs, kFirstInstant);
  if (from > to) return invalid('from', 'from must not be after to.');
  if ((to - from) / kDayMs + 1 > kMaxStatsDays) return invalid('from', `Statistics cover at most ${kMaxStatsDays} days: from must be within ${kMaxStatsDays - 1} days before to.`);
  return { ok: true, value: { from, to } };
}

export function startOfDay(time: number): number {
  return time - (((time % kDayMs) + kDayMs) % kDayMs);
}
