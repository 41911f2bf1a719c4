// The JSON schema of the event input of POST /v1/events (interface, "Event input"). Compiled by ajv
// when the project is built (write-validators.ts), not at start; event-input.ts validates with it.
//
// Bounds the interface leaves open are chosen here and documented in docs/events.md.
import { kMaxExternalIdLength } from './external-id.js';

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
        // A device id shared by accounts links them: an empty one would make every account that sends it one device.
        fp_id: { type: 'string', minLength: 1, maxLength: 128 },
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
        // RFC 3339 as the rules read it: checked by event-input.ts with the rules' own parser.
        registered_at: { type: 'string', maxLength: 64 },
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
