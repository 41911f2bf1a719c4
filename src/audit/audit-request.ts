// The query string of GET /v1/audit (docs/audit.md): filters by action, target, actor and time, and
// cursor paging. Pure.
import { apiError, type ApiError } from '../shared/errors.js';
import { decodeCursor, parsePageSize, parseRfc3339, unknownOrRepeatedParameter } from '../shared/query.js';
import { characterLength } from '../shared/text.js';
import { kAuditActions, type AuditAction, type AuditFilter } from './audit-store.js';

const kParameters = new Set(['action', 'target', 'actor', 'created_after', 'created_before', 'limit', 'cursor']);
const kMaxTargetLength = 200;

function invalid(parameter: string, message: string): { ok: false; error: ApiError } {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, parameter) };
}

/** Cursors of the audit trail of `projectId`. */
export function auditCursorScope(projectId: string): string {
  return `audit ${projectId}`;
}

export function parseAuditQuery(query: string, projectId: string): { ok: true; value: AuditFilter } | { ok: false; error: ApiError } {
  const params = new URLSearchParams(query);
  const unknown = unknownOrRepeatedParameter(params, kParameters);
  if (unknown !== null) return { ok: false, error: unknown };
  const action = params.get('action');
  if (action !== null && !(kAuditActions as readonly string[]).includes(action)) {
    return invalid('action', `action must be one of ${kAuditActions.join(', ')}.`);
  }
  const target = params.get('target');
  if (target !== null && (target === '' || characterLength(target) > kMaxTargetLength)) return invalid('target', `target must be 1 to ${kMaxTargetLength} characters, like rule:high_amount or list:blocked_emails.`);
  const actor = params.get('actor');
  if (actor !== null && !/^(key_[A-Za-z0-9]{1,64}|cli|system)$/.test(actor)) return invalid('actor', 'actor must be a key id (key_…), cli or system.');
  const times: Record<'created_after' | 'created_before', number | null> = { created_after: null, created_before: null };
  for (const name of ['created_after', 'created_before'] as const) {
    const raw = params.get(name);
    if (raw === null) continue;
    // Stored times are whole milliseconds: `before` a finer instant includes its millisecond.
    const time = parseRfc3339(raw, name === 'created_before' ? 'up' : 'down');
    if (time === null) return invalid(name, `${name} must be an RFC 3339 date-time, like 2026-11-01T00:00:00Z.`);
    times[name] = time;
  }
  const limit = parsePageSize(params.get('limit'));
  if (typeof limit !== 'number') return { ok: false, error: limit };
  let beforeSeq: number | null = null;
  const cursor = params.get('cursor');
  if (cursor !== null) {
    const position = decodeCursor(auditCursorScope(projectId), cursor, 1);
    if (position === null || !Number.isSafeInteger(position[0]) || (position[0] as number) < 1) return invalid('cursor', 'cursor is not a cursor this API returned.');
    beforeSeq = position[0] as number;
  }
  return {
    ok: true,
    value: { projectId, action: action as AuditAction | null, target, actor, after: times.created_after, before: times.created_before, beforeSeq, limit },
  };
}
