// The event input of POST /v1/events (interface, "Event input"): one JSON schema (event-schema.ts),
// compiled when the project is built, plus the checks a schema cannot say (a phone with no digit).
// Pure: no I/O.
//
// Bounds the interface leaves open are chosen in event-schema.ts and here, and documented in
// docs/events.md.
import { parseTimestamp } from '../../compiler/runtime/index.js';
import { apiError, type ApiError } from '../shared/errors.js';
import { isOnlyWhiteSpace } from '../shared/text.js';
import { validationErrorOf } from './ajv.js';
import { kEventSchema, type EventType } from './event-schema.js';
import type { JsonObject } from './json-body.js';
import { precompiledValidator } from './precompiled.js';

export { kEventTypes, type EventType } from './event-schema.js';

// Compiled by ajv at build time (write-validators.ts): no schema compile at start.
const kValidate = precompiledValidator('event-input', kEventSchema);

const kAlternativesMessages: Readonly<Record<string, string>> = {
  external_account_id: 'external_account_id must be a string of 1 to 64 characters or a non-negative integer up to 9007199254740991 (send a larger number as a string: JSON parsers round it).',
  'context.ip': 'context.ip must be an IPv4 or IPv6 address.',
};

export type EventInput = {
  event_id: string;
  event_type: EventType;
  async?: boolean;
  external_account_id?: string | number;
  brand_id?: string;
  context?: JsonObject;
  user?: JsonObject;
  payment?: JsonObject;
  extras?: JsonObject;
};

const kRegisteredAtMessage =
  'user.registered_at must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z or 2026-01-31T13:00:00.250+01:00 (a T between date and time, a colon in the offset, years 0001 to 9999 in UTC once the offset is applied, seconds 00 to 59).';

/**
 * `nullsDropped`: the body had declared members sent as null, taken out of `event`; the payload
 * stored is then `event` as JSON, not the text received, so that every reader of the log sees
 * them absent too.
 */
export type EventValidation = { ok: true; event: EventInput; nullsDropped: boolean } | { ok: false; error: ApiError };

/** The optional top-level members, and the declared members of context, user and payment. */
const kOptionalMembers: readonly string[] = Object.keys(kEventSchema.properties).filter((name) => !(kEventSchema.required as readonly string[]).includes(name));
const kDeclaredMembers: ReadonlyArray<readonly [object: string, members: readonly string[]]> = (['context', 'user', 'payment'] as const).map(
  (object) => [object, Object.keys(kEventSchema.properties[object].properties)] as const,
);

/**
 * Takes out the optional members of the schema sent as JSON null (`"billing_country": null`,
 * `"payment": null`): absent, as docs/rules.md says null is — payment backends send null for
 * "not known" as often as they leave a member out. Members the schema does not declare keep their
 * null (the rules read it as absent). True when any was taken out.
 */
function dropDeclaredNulls(body: JsonObject): boolean {
  let dropped = false;
  for (const name of kOptionalMembers) {
    if (body[name] === null) {
      delete body[name];
      dropped = true;
    }
  }
  for (const [object, members] of kDeclaredMembers) {
    const value = body[object];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    for (const member of members) {
      if ((value as JsonObject)[member] === null) {
        delete (value as JsonObject)[member];
        dropped = true;
      }
    }
  }
  return dropped;
}

const kAsyncKeyBytes = Buffer.from('"async"');
const kUnicodeEscapeBytes = Buffer.from('\\u');

/**
 * False only when the raw JSON text `body` cannot hold an `async` member: its name appears neither
 * as is nor written with a \u escape (no other escape makes a letter). True for anything else,
 * including `"async": false` and an `async` inside a nested object; the parsed body decides those.
 */
export function mayAskForAsync(body: Buffer): boolean {
  return body.includes(kAsyncKeyBytes) || body.includes(kUnicodeEscapeBytes);
}

/**
 * Whether the raw JSON text `body` asks for async scoring (a top-level `"async": true`), read
 * without checking anything else: at capacity the refusal says ASYNC_UNAVAILABLE for such a body
 * and COMPILED_RULES_UNAVAILABLE for any other, valid or not (docs/events.md, "Overload").
 */
export function asksForAsync(body: Buffer): boolean {
  if (!mayAskForAsync(body)) return false;
  try {
    // A byte order mark, as the body's parser takes it (json-body.ts), is no part of the JSON.
    const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
    const parsed = JSON.parse(body.toString('utf8', start)) as unknown;
    return typeof parsed === 'object' && parsed !== null && (parsed as { async?: unknown }).async === true;
  } catch {
    return false;
  }
}

/**
 * Checks an event body (`bodyText`: its text, to skip the search for nulls when it holds none); the
 * first problem becomes a 400 VALIDATION_ERROR naming the field.
 */
export function validateEventInput(body: JsonObject, bodyText: string): EventValidation {
  const nullsDropped = bodyText.includes('null') && dropDeclaredNulls(body);
  if (!kValidate(body)) return { ok: false, error: validationErrorOf(kValidate.errors!, kAlternativesMessages) };
  const event = body as EventInput;
  const phone = event.user?.phone;
  // A digit of any script: the phone parser reads fullwidth and Arabic-Indic digits too.
  if (typeof phone === 'string' && !/\p{Nd}/u.test(phone)) {
    return { ok: false, error: apiError('VALIDATION_ERROR', 'user.phone has no digit.', 'user.phone') };
  }
  // A device id of white space is no device: taken as one, it would link every account that sends it.
  const fpId = event.context?.fp_id;
  if (typeof fpId === 'string' && isOnlyWhiteSpace(fpId)) {
    return { ok: false, error: apiError('VALIDATION_ERROR', 'context.fp_id is only white space; leave it out when there is no device id.', 'context.fp_id') };
  }
  // With the rules' own parser, not ajv's date-time, which also takes a space for the T, offsets
  // without their colon, year 0000 and second 60: accepted, those only made the rules that read
  // the field degraded. What is accepted is what the rules read.
  const registeredAt = event.user?.registered_at;
  if (typeof registeredAt === 'string' && Number.isNaN(parseTimestamp(registeredAt))) {
    return { ok: false, error: apiError('VALIDATION_ERROR', kRegisteredAtMessage, 'user.registered_at') };
  }
  return { ok: true, event, nullsDropped };
}

