// The kinds of list (DESIGN §8, docs/lists.md "Kinds") and how a value of each is normalised: the
// same way the event's signals are (src/signals), so that an item and the event value it is meant
// to catch compare equal. Items are normalised when they are added (an item that cannot be read as
// its kind is refused); rule values when they are looked up (a value that cannot be read is on no
// list). Pure.
import { normalizeEmail } from '../signals/email.js';
import { expandIpv6, normalizeIp } from '../signals/ip.js';
import { phoneModule } from '../signals/phone-on-demand.js';
import { characterLength } from '../shared/text.js';

export const kListKinds = ['email', 'email_domain', 'phone', 'ip', 'bin', 'card', 'country', 'account', 'fp', 'string'] as const;
export type ListKind = (typeof kListKinds)[number];

export function isListKind(value: unknown): value is ListKind {
  return typeof value === 'string' && (kListKinds as readonly string[]).includes(value);
}

/**
 * Evaluation budget units (compiler/runtime, ~6.5 ns each) one in_list() lookup in a list of each
 * kind costs, beyond the pass over the value: what a lookup of a value not seen before measured on
 * the 2-core test machine (2026-11-27): phone ~30 µs (libphonenumber parses it), email_domain
 * ~1 µs (each parent domain), email ~0.5 µs, the others 0.1–0.4 µs. Charged at run time so that
 * the budget bounds the time an event's lookups take (docs/rules.md, "Limits").
 */
export const kLookupUnits: Readonly<Record<ListKind, number>> = {
  phone: 5_000, email_domain: 200, email: 100, card: 60, ip: 40, bin: 40, country: 40, account: 40, fp: 40, string: 40,
};

/** Longest value of `string` lists (other kinds have the bounds of the event field they match). */
export const kMaxStringValueLength = 1024;
/** external_account_id (interface: up to 64 characters). */
const kMaxAccountLength = 64;
/** context.fp_id (docs/events.md). */
const kMaxFpLength = 128;
const kMaxEmailLength = 254;
const kMaxDomainLength = 253;

export type Normalized = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly message: string };

function refused(message: string): Normalized {
  return { ok: false, message };
}

function accepted(value: string): Normalized {
  return { ok: true, value };
}

// Deliberately the shape email.ts accepts (the event schema checked the rest).
const kEmailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const kDomainLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const kBin = /^[0-9]{6,8}$/;
const kCard = /^([0-9]{6,8})(?::|\*{2,})([0-9]{4})$/;
const kCountry = /^[A-Za-z]{2}$/;

/** A list item's value, normalised by the list's kind, or why it cannot be one. */
export function normalizeListItem(kind: ListKind, raw: unknown): Normalized {
  if (kind === 'account' && typeof raw === 'number') {
    // external_account_id may be sent as a number (stored as its decimal string).
    return Number.isSafeInteger(raw) && raw >= 0 ? accepted(String(raw)) : refused('an account id is a string of 1 to 64 characters or a non-negative integer up to 9007199254740991 (a larger number as a string)');
  }
  if (typeof raw !== 'string') return refused(`a value of a ${kind} list is a string`);
  switch (kind) {
    case 'email': {
      const email = normalizeEmail(raw);
      if (email.length > kMaxEmailLength || !kEmailShape.test(email)) return refused('not an email address');
      return accepted(email);
    }
    case 'email_domain': {
      const domain = canonicalDomain(raw);
      return domain === null ? refused('not an email domain (like example.com)') : accepted(domain);
    }
    case 'phone': {
      const phone = canonicalPhone(raw, null);
      return phone === null ? refused('not a phone number in E.164 form (like +447400123456)') : accepted(phone);
    }
    case 'ip':
      return normalizeIpItem(raw);
    case 'bin': {
      const bin = raw.trim();
      return kBin.test(bin) ? accepted(bin) : refused('a BIN is 6 to 8 digits');
    }
    case 'card': {
      const card = canonicalCard(raw);
      return card === null ? refused('a card is its BIN and last four digits, as 411111:1111 (or 411111******1111)') : accepted(card);
    }
    case 'country': {
      const country = canonicalCountry(raw);
      return country !== null ? accepted(country) : refused('a country is an ISO 3166 alpha-2 code (two letters)');
    }
    case 'account':
      return raw.length >= 1 && characterLength(raw) <= kMaxAccountLength ? accepted(raw) : refused('an account id is a string of 1 to 64 characters');
    case 'fp':
      return raw.length >= 1 && characterLength(raw) <= kMaxFpLength ? accepted(raw) : refused('a device id (fp_id) is a string of 1 to 128 characters');
    case 'string':
      return raw.length >= 1 && characterLength(raw) <= kMaxStringValueLength ? accepted(raw) : refused(`a value is a string of 1 to ${kMaxStringValueLength} characters`);
  }
}

/**
 * An email domain in lower case without a trailing dot: from a domain ("Example.COM."), an
 * "@domain", or a whole address (what rules usually pass). null when it is not a domain name of
 * two labels or more.
 */
export function canonicalDomain(raw: string): string | null {
  let text = raw.trim().toLowerCase();
  const at = text.lastIndexOf('@');
  if (at !== -1) text = text.slice(at + 1);
  if (text.endsWith('.')) text = text.slice(0, -1);
  if (text.length === 0 || text.length > kMaxDomainLength) return null;
  const labels = text.split('.');
  if (labels.length < 2) return null;
  for (const label of labels) if (!kDomainLabel.test(label)) return null;
  return text;
}

/** E.164 by libphonenumber-js (national numbers need `country`), as phone signals are linked by. */
export function canonicalPhone(raw: string, country: string | null): string | null {
  if (raw.length > 64 || !/[0-9]/.test(raw)) return null;
  return phoneModule().analyzePhone(raw, country).e164;
}

/**
 * A country code in upper case ("it " → "IT"), or null when it is not two ASCII letters: upper
 * casing alone would read "ıt" (a dotless i) as IT.
 */
export function canonicalCountry(raw: string): string | null {
  const country = raw.trim();
  return kCountry.test(country) ? country.toUpperCase() : null;
}

/** "411111:1111" (or "411111******1111", as masks show a card) → "411111:1111". */
export function canonicalCard(raw: string): string | null {
  const match = kCard.exec(raw.trim());
  return match === null ? null : `${match[1]}:${match[2]}`;
}

/** An address as its family and bytes (IPv4-mapped IPv6 as the IPv4 address), or null. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

export function parseIpAddress(raw: string): IpAddress | null {
  if (raw.length > 45 || raw.includes('%')) return null;
  const text = normalizeIp(raw);
  if (text === null) return null;
  if (text.includes('.')) return { family: 4, bytes: Uint8Array.from(text.split('.').map(Number)) };
  const groups = expandIpv6(text);
  if (groups === null) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return { family: 6, bytes };
}

/** An ip item: an address or a range (CIDR), with the family, prefix length and network bytes. */
export interface IpItem extends IpAddress {
  readonly prefix: number;
}

/** The canonical text of an ip item, and its parts (null when it is neither an address nor a range). */
export function parseIpItem(raw: string): { text: string; item: IpItem } | null {
  const trimmed = raw.trim();
  const slash = trimmed.indexOf('/');
  const address = parseIpAddress(slash === -1 ? trimmed : trimmed.slice(0, slash));
  if (address === null) return null;
  const full = address.family === 4 ? 32 : 128;
  let prefix = full;
  if (slash !== -1) {
    const bits = trimmed.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(bits)) return null;
    prefix = Number(bits);
    // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range it maps (10.0.0.0/8).
    const mapped = address.family === 4 && trimmed.slice(0, slash).includes(':');
    if (mapped) prefix -= 96;
    if (prefix < 1 || prefix > full) return null;
  }
  const bytes = maskBytes(address.bytes, prefix);
  const text = ipText(address.family, bytes);
  return { text: prefix === full ? text : `${text}/${prefix}`, item: { family: address.family, bytes, prefix } };
}

function normalizeIpItem(raw: string): Normalized {
  const parsed = parseIpItem(raw);
  if (parsed === null) return refused('not an IP address or range (like 203.0.113.7, 198.51.100.0/24 or 2001:db8::/32; a range of at least /1)');
  return accepted(parsed.text);
}

/** `bytes` with every bit past `prefix` cleared (a new array). */
export function maskBytes(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - 8 * i));
    out[i] = out[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

function ipText(family: 4 | 6, bytes: Uint8Array): string {
  if (family === 4) return Array.from(bytes).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  // normalizeIp compresses as RFC 5952 says.
  return normalizeIp(groups.join(':'))!;
}
