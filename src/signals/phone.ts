// Phone numbers through libphonenumber-js (interface, "Rules on the input" 1): E.164, or national
// format together with user.country. A number with digits that cannot be parsed is accepted and
// reported as unparseable. Pure.
//
// The "max" metadata is used because rules may read the number type (mobile, fixed line, VoIP...),
// which the smaller metadata sets cannot tell. It costs ~10 µs per number: the HTTP thread parses
// a number when it hashes the event's values (an account's event, or rules reading `links`) and
// hands the analysis to the rule worker; otherwise the worker parses it. Each thread caches.
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { FifoCache } from '../state/fifo-cache.js';
import type { EventInput } from '../validation/event-input.js';

export interface PhoneSignals {
  readonly present: boolean;
  readonly parseable: boolean;
  readonly valid: boolean;
  readonly country: string | null;
  readonly type: string | null;
}

export interface PhoneAnalysis {
  readonly signals: PhoneSignals;
  /** E.164 form when parseable: what phones are linked by. */
  readonly e164: string | null;
  /** "+44*******89" (country calling code and last two digits), when parseable. */
  readonly masked: string | null;
  readonly status: 'ok' | 'unparseable';
}

const kAbsent: PhoneSignals = Object.freeze({ present: false, parseable: false, valid: false, country: null, type: null });
const kAbsentAnalysis: PhoneAnalysis = Object.freeze({ signals: kAbsent, e164: null, masked: null, status: 'ok' });

/**
 * Analyses of numbers seen recently. An account sends the same number again and again, and a parse
 * costs tens of µs (libphonenumber-js also builds a `new RegExp` for every pattern it tries), a
 * lookup well under one. Bounded: the oldest entry goes first; results are frozen and shared.
 */
const kCacheSize = 50_000;
const cache = new FifoCache<string, PhoneAnalysis>(kCacheSize);

export function analyzePhone(raw: string | null, country: string | null): PhoneAnalysis {
  if (raw === null) return kAbsentAnalysis;
  const cacheKey = country === null ? raw : `${raw}\u0000${country}`;
  const cached = cache.get(cacheKey);
  if (cached !== undefined) return cached;
  const analysis = parsePhone(raw, country);
  Object.freeze(analysis.signals);
  Object.freeze(analysis);
  cache.set(cacheKey, analysis);
  return analysis;
}

/** The analysis of an event's user.phone, read with its user.country. */
export function analyzeEventPhone(event: EventInput): PhoneAnalysis {
  const user = event.user;
  return analyzePhone(typeof user?.phone === 'string' ? user.phone : null, typeof user?.country === 'string' ? user.country : null);
}

function parsePhone(raw: string, country: string | null): PhoneAnalysis {
  let parsed;
  try {
    parsed = parsePhoneNumberFromString(raw, country === null ? undefined : (country.toUpperCase() as CountryCode));
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined) {
    return { signals: { present: true, parseable: false, valid: false, country: null, type: null }, e164: null, masked: null, status: 'unparseable' };
  }
  const valid = parsed.isValid();
  const type = valid ? (parsed.getType() ?? 'unknown').toLowerCase() : null;
  return {
    signals: { present: true, parseable: true, valid, country: parsed.country ?? null, type },
    e164: parsed.number,
    masked: maskE164(parsed.number, parsed.countryCallingCode.length),
    status: 'ok',
  };
}

/**
 * The country code and the last two digits, the rest starred; a short number (a parseable but
 * invalid one can have 1–7 digits after its country code) shows no digit of it: its last two
 * would be most of it.
 */
function maskE164(e164: string, countryCallingCodeLength: number): string {
  const keep = 1 + countryCallingCodeLength;
  const national = e164.length - keep;
  if (national < kMinDigitsForTail) return `${e164.slice(0, keep)}${'*'.repeat(national)}`;
  return `${e164.slice(0, keep)}${'*'.repeat(national - 2)}${e164.slice(-2)}`;
}
const kMinDigitsForTail = 8;
