// The query strings and the PATCH body of the cases routes, checked into values or a
// VALIDATION_ERROR naming the parameter. Pure.
import { apiError, type ApiError } from '../shared/errors.js';
import { characterLength, isOnlyWhiteSpace } from '../shared/text.js';
import { decodeCursor as decodePosition, encodeCursor as encodePosition, parsePageSize, parseRfc3339, unknownOrRepeatedParameter } from '../shared/query.js';

export const kMaxNoteLength = 4000;
export const kMaxAssigneeLength = 128;

export interface CaseListQuery {
  readonly projectId: string;
  readonly status: 'open' | 'closed' | null;
  /** acc_ id or external account id */
  readonly account: string | null;
  readonly createdAfter: number | null;
  readonly createdBefore: number | null;
  /** Cases changed, or joined by an event, after this time. */
  readonly updatedAfter: number | null;
  /** Cases whose risk_score (the highest of their events') is at least this. */
  readonly minRiskScore: number | null;
  /** Cases assigned to exactly this assignee. */
  readonly assignee: string | null;
  /** true: cases with an assignee; false: cases without one (the queue nobody has picked up). */
  readonly assigned: boolean | null;
  /** The listing's order: newest first (the default), or oldest first (a queue worked in turn). */
  readonly oldestFirst: boolean;
  readonly limit: number;
  readonly cursor: CaseCursor | null;
}

/** Position after the last case of a page, in the listing's order. */
export interface CaseCursor {
  readonly createdAt: number;
  readonly caseId: string;
}

/**
 * The listing's order of two positions: negative when `a` is listed first. By created_at, then
 * case_id, descending (newest first) or ascending.
 */
export function compareListed(oldestFirst: boolean, a: CaseCursor, b: CaseCursor): number {
  const ascending = a.createdAt - b.createdAt || (a.caseId < b.caseId ? -1 : a.caseId > b.caseId ? 1 : 0);
  return oldestFirst ? ascending : -ascending;
}

type Checked<T> = { ok: true; value: T } | { ok: false; error: ApiError };

const kListParameters = new Set(['project_id', 'status', 'account', 'created_after', 'created_before', 'updated_after', 'min_risk_score', 'assignee', 'assigned', 'order', 'limit', 'cursor']);
const kOneCaseParameters = new Set(['project_id']);

function invalid<T>(parameter: string, message: string): Checked<T> {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, parameter) };
}

/** project_id is required on every cases route and must be the key's project. */
function checkProject(params: URLSearchParams, keyProjectId: string, allowed: ReadonlySet<string>): ApiError | null {
  const unknown = unknownOrRepeatedParameter(params, allowed);
  if (unknown !== null) return unknown;
  const projectId = params.get('project_id');
  if (projectId === null || projectId === '') return apiError('VALIDATION_ERROR', 'project_id is required.', 'project_id');
  if (projectId !== keyProjectId) return apiError('SCOPE_ERROR', 'project_id is not the project of this key.', 'project_id');
  return null;
}

export function parseOneCaseQuery(query: string, keyProjectId: string): ApiError | null {
  return checkProject(new URLSearchParams(query), keyProjectId, kOneCaseParameters);
}

export function parseCaseListQuery(query: string, keyProjectId: string): Checked<CaseListQuery> {
  const params = new URLSearchParams(query);
  const projectError = checkProject(params, keyProjectId, kListParameters);
  if (projectError !== null) return { ok: false, error: projectError };

  const status = params.get('status');
  if (status !== null && status !== 'open' && status !== 'closed') return invalid('status', 'status must be open or closed.');
  const account = params.get('account');
  if (account !== null && (account === '' || characterLength(account) > 64)) return invalid('account', 'account must be an acc_ id or an external account id.');
  const createdAfter = parseTime(params.get('created_after'));
  if (createdAfter === undefined) return invalid('created_after', 'created_after must be an RFC 3339 date-time.');
  const createdBefore = parseTime(params.get('created_before'), 'up');
  if (createdBefore === undefined) return invalid('created_before', 'created_before must be an RFC 3339 date-time.');
  const updatedAfter = parseTime(params.get('updated_after'));
  if (updatedAfter === undefined) return invalid('updated_after', 'updated_after must be an RFC 3339 date-time.');
  const minRiskText = params.get('min_risk_score');
  if (minRiskText !== null && !/^\d{1,9}$/.test(minRiskText)) return invalid('min_risk_score', 'min_risk_score must be a whole number from 0 to 999999999.');
  const minRiskScore = minRiskText === null ? null : Number(minRiskText);
  const assignee = params.get('assignee');
  if (assignee !== null && !isAssignee(assignee)) return invalid('assignee', `assignee must be a string of 1 to ${kMaxAssigneeLength} characters, not only white space, as a case's assignee is.`);
  const assignedText = params.get('assigned');
  if (assignedText !== null && assignedText !== 'true' && assignedText !== 'false') return invalid('assigned', 'assigned must be true or false.');
  const assigned = assignedText === null ? null : assignedText === 'true';
  const order = params.get('order');
  if (order !== null && order !== 'newest' && order !== 'oldest') return invalid('order', 'order must be newest or oldest.');
  const oldestFirst = order === 'oldest';
  const limit = parsePageSize(params.get('limit'));
  if (typeof limit !== 'number') return { ok: false, error: limit };
  const rawCursor = params.get('cursor');
  let cursor: CaseCursor | null = null;
  if (rawCursor !== null) {
    cursor = decodeCursor(keyProjectId, oldestFirst, rawCursor);
    if (cursor === null) return invalid('cursor', 'cursor is not a cursor this API returned for this order.');
  }
  return {
    ok: true,
    value: { projectId: keyProjectId, status, account, createdAfter, createdBefore, updatedAfter, minRiskScore, assignee, assigned, oldestFirst, limit, cursor },
  };
}

/** null when absent, undefined when invalid; `rounding` as parseRfc3339's (`'up'` for an exclusive upper bound). */
function parseTime(value: string | null, rounding: 'down' | 'up' = 'down'): number | null | undefined {
  if (value === null) return null;
  return parseRfc3339(value, rounding) ?? undefined;
}

/** Cursors of the cases of `projectId` in one order (a cursor of the other order is refused, not read as a position in this one). */
function casesCursorScope(projectId: string, oldestFirst: boolean): string {
  return oldestFirst ? `cases ${projectId} oldest first` : `cases ${projectId}`;
}

/** The cursor after `cursor` in the cases of `projectId`, in the given order. */
export function encodeCursor(projectId: string, oldestFirst: boolean, cursor: CaseCursor): string {
  return encodePosition(casesCursorScope(projectId, oldestFirst), [cursor.createdAt, cursor.caseId]);
}

function decodeCursor(projectId: string, oldestFirst: boolean, text: string): CaseCursor | null {
  const position = decodePosition(casesCursorScope(projectId, oldestFirst), text, 2);
  if (position === null) return null;
  const [createdAt, caseId] = position as [unknown, unknown];
  if (!Number.isSafeInteger(createdAt) || typeof caseId !== 'string' || !/^case_[A-Za-z0-9]{1,64}$/.test(caseId)) return null;
  return { createdAt: createdAt as number, caseId };
}

/** What an assignee may be: 1 to kMaxAssigneeLength characters, not only white space. */
function isAssignee(text: string): boolean {
  return !isOnlyWhiteSpace(text) && characterLength(text) <= kMaxAssigneeLength;
}

export interface CaseChange {
  readonly status?: 'open' | 'closed';
  readonly resolution?: 'fraud' | 'legitimate' | null;
  readonly assignee?: string | null;
  readonly note?: string;
  /** The body's `updated_at`: the case as the analyst read it (ms); the change applies only to that case. */
  readonly ifUpdatedAt?: number;
}

const kChangeFields = new Set(['status', 'resolution', 'assignee', 'note', 'updated_at']);

export function parseCaseChange(body: Record<string, unknown>): Checked<CaseChange> {
  for (const name of Object.keys(body)) {
    if (!kChangeFields.has(name)) return invalid(name, `${name} is not a field of a case change; use status, resolution, assignee or note (and updated_at, the case's as you read it).`);
  }
  const change: { -readonly [K in keyof CaseChange]: CaseChange[K] } = {};
  if ('updated_at' in body) {
    const at = typeof body.updated_at === 'string' ? parseRfc3339(body.updated_at) : null;
    if (at === null) return invalid('updated_at', "updated_at must be the case's updated_at as you read it, an RFC 3339 date-time.");
    // The API writes milliseconds: a value finer than that (…43.6991Z) is another instant, not the case's.
    if (parseRfc3339(body.updated_at as string, 'up') !== at) {
      return invalid('updated_at', "updated_at has digits below the millisecond, which no case's updated_at has; give it as you read it.");
    }
    change.ifUpdatedAt = at;
  }
  if (Object.keys(body).every((name) => name === 'updated_at')) return invalid('body', 'Nothing to change: give status, resolution, assignee or note.');
  if ('status' in body) {
    if (body.status !== 'open' && body.status !== 'closed') return invalid('status', 'status must be open or closed.');
    change.status = body.status;
  }
  if ('resolution' in body) {
    if (body.resolution !== null && body.resolution !== 'fraud' && body.resolution !== 'legitimate') {
      return invalid('resolution', 'resolution must be fraud, legitimate or null.');
    }
    change.resolution = body.resolution;
  }
  if ('assignee' in body) {
    if (body.assignee !== null && (typeof body.assignee !== 'string' || !isAssignee(body.assignee))) {
      return invalid('assignee', `assignee must be null or a string of 1 to ${kMaxAssigneeLength} characters, not only white space.`);
    }
    change.assignee = body.assignee;
  }
  if ('note' in body) {
    if (typeof body.note !== 'string' || isOnlyWhiteSpace(body.note) || characterLength(body.note) > kMaxNoteLength) {
      return invalid('note', `note must be a string of 1 to ${kMaxNoteLength} characters, not only white space.`);
    }
    change.note = body.note;
  }
  return { ok: true, value: change };
}
