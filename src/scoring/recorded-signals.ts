// What an event's rules read from the service's state — velocity, links and the account — kept with
// the event in a compact form, so that a backtest judges the event exactly as it was judged
// (DESIGN §8: the event log holds "the signals its rules read"). Pure.
//
// The phone and email signals are not kept: they are computed from the payload alone. A group the
// ruleset did not read is not kept either (null). The form is `[1,velocity,links,account]`, each
// group an array of its fields in a fixed order with null for a field that was absent — about a
// hundred bytes instead of the ~400 of the objects' JSON.
import type { AccountSignals, LinkSignals } from '../signals/state-signals.js';
import type { VelocitySignals } from '../signals/velocity.js';

const kFormat = 1;

const kVelocityFields = [
  'card_1h', 'card_24h', 'ip_1h', 'ip_24h', 'account_1h', 'account_24h', 'email_1h', 'email_24h', 'fp_1h', 'fp_24h',
  'account_amount_24h', 'card_amount_24h',
] as const satisfies ReadonlyArray<keyof VelocitySignals>;
const kLinkFields = ['email', 'phone', 'fp', 'ip_24h', 'card', 'total', 'fraud'] as const satisfies ReadonlyArray<keyof LinkSignals>;
const kAccountNumbers = ['age_days', 'events', 'blocks', 'reviews'] as const satisfies ReadonlyArray<keyof AccountSignals>;

export interface RecordedSignals {
  readonly velocity?: VelocitySignals;
  readonly links?: LinkSignals;
  readonly account?: AccountSignals;
}

/** The fields after each group's presence mark in packSignals' layout: velocity, links, account (known, the numbers, fraud_confirmed, labelled_fraud). */
const kPackedGroupLengths = [kVelocityFields.length, kLinkFields.length, 1 + kAccountNumbers.length + 2] as const;

/**
 * Numbers that packSignals writes per event: for each group a presence mark (1, or NaN when the
 * ruleset did not read it), then its fields in the order above, NaN for an absent field. The form
 * in which the HTTP thread hands the signals to a rule worker (pool/protocol.ts): numbers in one
 * Float64Array per batch cost the two threads a fraction of what cloning the objects does.
 */
export const kPackedSignalsLength = kPackedGroupLengths.reduce((sum, fields) => sum + 1 + fields, 0);

/** Writes `signals` (null: a group not read) into `into` from index `at` (kPackedSignalsLength numbers). */
export function packSignals(velocity: VelocitySignals | null, links: LinkSignals | null, account: AccountSignals | null, into: Float64Array, at: number): void {
  let i = at;
  into[i++] = velocity === null ? NaN : 1;
  for (const field of kVelocityFields) into[i++] = velocity?.[field] ?? NaN;
  into[i++] = links === null ? NaN : 1;
  for (const field of kLinkFields) into[i++] = links === null ? NaN : links[field];
  into[i++] = account === null ? NaN : 1;
  into[i++] = account === null ? NaN : account.known ? 1 : 0;
  for (const field of kAccountNumbers) into[i++] = account?.[field] ?? NaN;
  into[i++] = account?.fraud_confirmed === undefined ? NaN : account.fraud_confirmed ? 1 : 0;
  into[i++] = account?.labelled_fraud ?? NaN;
}

/** The signals packSignals wrote from index `at`, as objects for the rules (a group not read is absent). */
export function unpackSignals(from: Float64Array, at: number): RecordedSignals {
  const unpacked: { velocity?: VelocitySignals; links?: LinkSignals; account?: AccountSignals } = {};
  let i = at;
  if (!Number.isNaN(from[i++]!)) {
    const v: Record<string, number> = {};
    for (const field of kVelocityFields) {
      const value = from[i++]!;
      if (!Number.isNaN(value)) v[field] = value;
    }
    unpacked.velocity = v as VelocitySignals;
  } else i += kVelocityFields.length;
  if (!Number.isNaN(from[i++]!)) {
    const l: Record<string, number> = {};
    for (const field of kLinkFields) l[field] = from[i++]!;
    unpacked.links = l as unknown as LinkSignals;
  } else i += kLinkFields.length;
  if (!Number.isNaN(from[i++]!)) {
    const a: Record<string, number | boolean> = { known: from[i++] === 1 };
    for (const field of kAccountNumbers) {
      const value = from[i++]!;
      if (!Number.isNaN(value)) a[field] = value;
    }
    const fraud = from[i++]!;
    if (!Number.isNaN(fraud)) a.fraud_confirmed = fraud === 1;
    const labelled = from[i++]!;
    if (!Number.isNaN(labelled)) a.labelled_fraud = labelled;
    unpacked.account = a as unknown as AccountSignals;
  }
  return unpacked;
}

/** The compact form of the stateful signals an event's rules were given. */
export function encodeRecordedSignals(signals: RecordedSignals): string {
  const packed = new Float64Array(kPackedSignalsLength);
  packSignals(signals.velocity ?? null, signals.links ?? null, signals.account ?? null, packed, 0);
  return encodePackedSignals(packed, 0);
}

/**
 * encodeRecordedSignals of the signals packSignals wrote from index `at`, straight from the
 * numbers: what a rule worker stores, without the objects it unpacked for the rules (JSON.stringify
 * of arrays mapped from them cost it 1.9–3.4 µs per event, this 0.6–1.1: bench/README.md, step 56).
 */
export function encodePackedSignals(from: Float64Array, at: number): string {
  let i = at;
  let out = `[${kFormat}`;
  for (const fields of kPackedGroupLengths) {
    if (Number.isNaN(from[i++]!)) {
      out += ',null';
      i += fields;
      continue;
    }
    out += ',[';
    for (let field = 0; field < fields; field++) {
      const value = from[i++]!;
      // As JSON.stringify writes a number; NaN (a field absent) and ±Infinity as null.
      out += (field === 0 ? '' : ',') + (Number.isFinite(value) ? String(value) : 'null');
    }
    out += ']';
  }
  return `${out}]`;
}

/** The signals of a compact form, as the rules were given them. */
export function decodeRecordedSignals(stored: string): RecordedSignals {
  const [format, velocity, links, account] = JSON.parse(stored) as [number, Array<number | null> | null, number[] | null, Array<number | null> | null];
  if (format !== kFormat) throw new Error(`recorded signals of an unknown format ${format}`);
  const decoded: { velocity?: VelocitySignals; links?: LinkSignals; account?: AccountSignals } = {};
  if (velocity !== null) {
    const v: Record<string, number> = {};
    kVelocityFields.forEach((field, i) => {
      if (velocity[i] !== null && velocity[i] !== undefined) v[field] = velocity[i]!;
    });
    decoded.velocity = v as VelocitySignals;
  }
  if (links !== null) {
    const l: Record<string, number> = {};
    kLinkFields.forEach((field, i) => (l[field] = links[i]!));
    decoded.links = l as unknown as LinkSignals;
  }
  if (account !== null) {
    const a: Record<string, number | boolean> = { known: account[0] === 1 };
    kAccountNumbers.forEach((field, i) => {
      const value = account[i + 1];
      if (value !== null && value !== undefined) a[field] = value;
    });
    const fraud = account[kAccountNumbers.length + 1];
    if (fraud !== null && fraud !== undefined) a.fraud_confirmed = fraud === 1;
    const labelled = account[kAccountNumbers.length + 2];
    if (labelled !== null && labelled !== undefined) a.labelled_fraud = labelled;
    decoded.account = a as unknown as AccountSignals;
  }
  return decoded;
}
