// The CEL environment rules are written against: every variable, group and
// field, with its type. One table feeds the cel-js type checker
// (environment.ts), the lowering (field reads), the signal list of an
// artifact, the differential tests and docs/rules.md.

/** Types a declared field can have. Timestamps arrive as RFC 3339 strings. */
export type FieldType = 'string' | 'bool' | 'int' | 'double' | 'timestamp';

/** A group is an object variable (`user`, `velocity`, ...) with declared fields. */
export interface GroupDef {
  /** Variable name in CEL. */
  readonly name: string;
  /** Where the value comes from: the event body or the computed signals. */
  readonly source: 'event' | 'signals';
  /** The cel-js message type name used for checking. */
  readonly celType: string;
  /** Open groups accept members that are not declared; they read as `dyn`. */
  readonly open: boolean;
  readonly fields: Readonly<Record<string, FieldType>>;
}

/** A top-level scalar variable. */
export interface ScalarDef {
  readonly name: string;
  readonly source: 'event' | 'now';
  readonly type: FieldType;
}

export const kCelTypeOf: Readonly<Record<FieldType, string>> = {
  string: 'string',
  bool: 'bool',
  int: 'int',
  double: 'double',
  timestamp: 'google.protobuf.Timestamp',
};

export const kScalars: readonly ScalarDef[] = [
  { name: 'event_type', source: 'event', type: 'string' },
  { name: 'external_account_id', source: 'event', type: 'string' },
  { name: 'brand_id', source: 'event', type: 'string' },
  { name: 'now', source: 'now', type: 'timestamp' },
];

/** `extras` is a free-form map read with own-property access only. */
export const kExtras = { name: 'extras', source: 'event', celType: 'map<string, dyn>' } as const;

const kVelocityFields = {
  card_1h: 'int', card_24h: 'int', ip_1h: 'int', ip_24h: 'int', account_1h: 'int',
  account_24h: 'int', email_1h: 'int', email_24h: 'int', fp_1h: 'int', fp_24h: 'int',
  account_amount_24h: 'int', card_amount_24h: 'int',
} as const;

export const kGroups: readonly GroupDef[] = [
  {
    name: 'context', source: 'event', celType: 'Context', open: true,
    fields: {
      ip: 'string', user_agent: 'string', fp_id: 'string', session_id: 'string', country: 'string',
      affiliate_id: 'string', session_anon: 'bool',
    },
  },
  {
    name: 'user', source: 'event', celType: 'User', open: true,
    fields: {
      email: 'string', phone: 'string', name: 'string', country: 'string', email_hash: 'string',
      phone_hash: 'string', registered_at: 'timestamp', trusted: 'bool', vip: 'bool',
      is_known_fraud: 'bool', chargeback_flag: 'bool', name_blocked: 'bool', sanctions_match: 'bool',
    },
  },
  {
    name: 'payment', source: 'event', celType: 'Payment', open: true,
    fields: {
      amount_cents: 'int', currency: 'string', method: 'string', bin: 'string', last4: 'string',
      billing_country: 'string', card_token: 'string',
    },
  },
  { name: 'velocity', source: 'signals', celType: 'Velocity', open: false, fields: kVelocityFields },
  {
    name: 'links', source: 'signals', celType: 'Links', open: false,
    fields: { email: 'int', phone: 'int', fp: 'int', ip_24h: 'int', card: 'int', total: 'int', fraud: 'int' },
  },
  {
    name: 'account', source: 'signals', celType: 'Account', open: false,
    fields: {
      known: 'bool', age_days: 'double', events: 'int', blocks: 'int', reviews: 'int',
      fraud_confirmed: 'bool', labelled_fraud: 'int',
    },
  },
  {
    name: 'phone', source: 'signals', celType: 'Phone', open: false,
    fields: { present: 'bool', valid: 'bool', parseable: 'bool', country: 'string', type: 'string' },
  },
  {
    name: 'email', source: 'signals', celType: 'Email', open: false,
    fields: { present: 'bool', valid: 'bool', disposable: 'bool', free_provider: 'bool', domain: 'string' },
  },
];

export const kGroupByName: ReadonlyMap<string, GroupDef> = new Map(kGroups.map((g) => [g.name, g]));
export const kScalarByName: ReadonlyMap<string, ScalarDef> = new Map(kScalars.map((s) => [s.name, s]));

/**
 * Member names no rule may use, statically or as a literal key: they lead to
 * prototypes and constructors in JavaScript. Dynamic keys with these names read
 * as absent at run time (runtime `own`).
 */
export const kForbiddenMembers: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
