// Idempotency of POST /v1/events (interface, "Idempotency"): the same event_id with a different
// body is a conflict, and `async` is not part of the compared body. Bodies are compared by the
// SHA-256 of a canonical JSON form (keys sorted at every level, event_id lower-cased: a UUID's
// case carries no meaning), so key order, whitespace and case do not make two equal bodies differ.
// Pure.
import { createHash } from 'node:crypto';

export function canonicalBodyHash(body: Readonly<Record<string, unknown>>): string {
  const hash = createHash('sha256');
  hash.update(canonicalObject(body, true));
  return hash.digest('base64url');
}

function canonicalValue(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalValue(value[i]);
    return `${out}]`;
  }
  return canonicalObject(value as Record<string, unknown>, false);
}

function canonicalObject(object: Readonly<Record<string, unknown>>, topLevel: boolean): string {
  const keys = Object.keys(object).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    if (topLevel && key === 'async') continue;
    const value = topLevel && key === 'event_id' && typeof object[key] === 'string' ? (object[key] as string).toLowerCase() : object[key];
    out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalValue(value)}`;
    first = false;
  }
  return `${out}}`;
}
