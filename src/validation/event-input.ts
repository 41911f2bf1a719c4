// The event input of POST /v1/events (interface, "Event input"): one JSON schema, compiled once,
// plus the checks a schema cannot say (a phone with no digit). Pure: no I/O.
//
// Bounds the interface leaves open are chosen here and documented in docs/events.md.
import { apiError, type ApiError } from '../shared/errors.js';
import { createAjv, validationErrorOf } from './ajv.js';
import { kMaxExternalIdLength } from './external-id.js';
import type { JsonObject } from './json-body.js';

export const kEventTypes = ['payment', 'payout', 'login', 'registration', 'deposit', 'withdrawal'] as const;
export type EventType = (typeof kEventTypes)[number];

const kCountry = { type: 'string', pattern: '^[A-Za-z]{2}$' };
const kShortText = { type: 'string', maxLength: 128 };
const kMark = { type: 'boolean' };

export const kEventSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['event_id', 'event_type'],
  properties: {
    event_id: { type: 'string', format: 'uuid', maxLength: 36 },
    event_type: { type: 'string', enum: kEventTypes },
    async: { type: 'boolean' },
    external_account_id: {
      anyOf: [
        { type: 'string', minLength: 1, maxLength: kMaxExternalIdLength },
        { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      ],
    },
    brand_id: { type: 'string', minLength: 1, maxLength: 64 },
    context: {
      type: 'object',
      properties: {
        ip: { type: 'string', anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }], maxLength: 45 },
        user_agent: { type: 'string', maxLength: 1024 },
        fp_id: kShortText,
        session_id: kShortText,
        country: kCountry,
        affiliate_id: kShortText,
        session_anon: { type: 'boolean' },
      },
    },
    user: {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', maxLength: 254 },
        phone: { type: 'string', minLength: 1, maxLength: 64 },
        name: { type: 'string', maxLength: 256 },
        country: kCountry,
        registered_at: { type: 'string', format: 'date-time', maxLength: 64 },
        email_hash: { type: 'string', minLength: 1, maxLength: 128 },
        phone_hash: { type: 'string', minLength: 1, maxLength: 128 },
        trusted: kMark,
        vip: kMark,
        is_known_fraud: kMark,
        chargeback_flag: kMark,
        name_blocked: kMark,
        sanctions_match: kMark,
      },
    },
    payment: {
      type: 'object',
      properties: {
        amount_cents: { type: 'integer', minimum: 0, maximum: 1e15 },
        currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
        method: { type: 'string', minLength: 1, maxLength: 32 },
        bin: { type: 'string', pattern: '^[0-9]{6,8}$' },
        last4: { type: 'string', pattern: '^[0-9]{4}$' },
        billing_country: kCountry,
        card_token: { type: 'string', minLength: 1, maxLength: 128 },
      },
    },
    extras: { type: 'object' },
  },
} as const;

const kValidate = createAjv().compile(kEventSchema);

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

export type EventValidation = { ok: true; event: EventInput } | { ok: false; error: ApiError };

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

/** Checks an event body; the first problem becomes a 400 VALIDATION_ERROR naming the field. */
export function validateEventInput(body: JsonObject): EventValidation {
  if (!kValidate(body)) return { ok: false, error: validationErrorOf(kValidate.errors!, kAlternativesMessages) };
  const event = body as EventInput;
  const phone = event.user?.phone;
  if (typeof phone === 'string' && !/[0-9]/.test(phone)) {
    return { ok: false, error: apiError('VALIDATION_ERROR', 'user.phone has no digit.', 'user.phone') };
  }
  return { ok: true, event };
}

