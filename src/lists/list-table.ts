// One list in a rule worker's memory: its members as keyed 64-bit hashes (hash-set64.ts), and the
// lookup of a rule's value by the list's kind (list-kinds.ts normalises the same way the items
// were). A lookup is a bounded number of probes whatever the size of the list:
//
//   ip            one probe per prefix length the list holds, per family (a list of addresses and
//                 /24 ranges: two probes); keys are (family, prefix, network bytes)
//   email_domain  one per label of the domain (a.b.example.com: 3 probes), so a domain covers its
//                 subdomains
//   bin           one per BIN length (6, 7, 8) the list holds, up to the value's length
//   the others    one probe of the canonical text
//
// Ranges are matched by hashing the address under each prefix length, not with node:net's
// BlockList (DESIGN §7 names it for IP parsing), whose check walks every range it holds: O(n) at a
// million items. Addresses are validated by node:net (signals/ip.ts); the IPv4 fast path below
// only avoids the allocations of that general path on the hot one.
//
// Pure, given the SipHash key.
import { sipHash, type SipKey } from '../state/siphash.js';
import { normalizeEmail } from '../signals/email.js';
import { HashSet64 } from './hash-set64.js';
import { canonicalCard, canonicalCountry, canonicalDomain, canonicalPhone, parseIpAddress, parseIpItem, type ListKind } from './list-kinds.js';

const kEncoder = new TextEncoder();

/**
 * Hashes text and byte strings with one key, through a reusable buffer. SipHash with a random key
 * per thread, not a faster unkeyed hash: values are sent by callers, and with a hash whose
 * collisions can be found without the key (MurmurHash's can) a caller could make a value collide
 * with an item of an allow list.
 */
export class KeyHasher {
  readonly #key: SipKey;
  #buffer = new Uint8Array(256);
  /** The last hash: [hi, lo]. */
  readonly out = new Uint32Array(2);

  constructor(key: SipKey) {
    this.#key = key;
  }

  /**
   * The text as UTF-8, then SipHash. UTF-8 is one-to-one only for well-formed text: a string with a
   * lone surrogate (JSON can carry one) is written unit by unit after a 0xfe byte instead, which
   * no UTF-8 text contains, so the two encodings never meet.
   */
  text(value: string): void {
    const length = value.length;
    if (length * 3 + 1 > this.#buffer.length) this.#buffer = new Uint8Array(length * 3 + 1);
    const buffer = this.#buffer;
    if ((value as unknown as { isWellFormed(): boolean }).isWellFormed()) {
      sipHash(this.#key, buffer, kEncoder.encodeInto(value, buffer).written, this.out, 0);
      return;
    }
    let written = 0;
    buffer[written++] = 0xfe;
    for (let i = 0; i < length; i++) {
      const unit = value.charCodeAt(i);
      buffer[written++] = unit >> 8;
      buffer[written++] = unit & 0xff;
    }
    sipHash(this.#key, buffer, written, this.out, 0);
  }

  /** An ip key: family, prefix length, then the address bytes masked to the prefix. */
  ip(family: 4 | 6, prefix: number, bytes: Uint8Array): void {
    const buffer = this.#buffer;
    buffer[0] = family;
    buffer[1] = prefix;
    for (let i = 0; i < bytes.length; i++) {
      const keep = prefix - 8 * i;
      buffer[2 + i] = keep >= 8 ? bytes[i]! : keep <= 0 ? 0 : bytes[i]! & ((0xff << (8 - keep)) & 0xff);
    }
    sipHash(this.#key, buffer, 2 + bytes.length, this.out, 0);
  }
}

/**
 * Dotted-quad IPv4 ("203.0.113.7", decimal octets without leading zeros) into `out`; false when
 * the text is not one. The common case of both items and lookups, without the allocations of the
 * general parser.
 */
export function parseIpv4Into(text: string, from: number, to: number, out: Uint8Array): boolean {
  let octet = 0;
  let digits = 0;
  let part = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || part === 3) return false;
      out[part++] = octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return false;
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return false;
    } else {
      return false;
    }
  }
  if (digits === 0 || part !== 3) return false;
  out[3] = octet;
  return true;
}

export class ListTable {
  readonly kind: ListKind;
  readonly #hasher: KeyHasher;
  readonly #set: HashSet64;
  /** ip lists: members per prefix length, per family; the lengths present, longest first. */
  readonly #prefixCounts: { 4: Uint32Array; 6: Uint32Array } | null;
  #prefixes: { 4: number[]; 6: number[] } | null = null;
  /** bin lists: members per BIN length (index 6 to 8). */
  readonly #binCounts = new Uint32Array(9);
  /** Scratch for IPv4 addresses. */
  readonly #v4 = new Uint8Array(4);

  constructor(kind: ListKind, hasher: KeyHasher, expected = 0) {
    this.kind = kind;
    this.#hasher = hasher;
    this.#set = new HashSet64(expected);
    this.#prefixCounts = kind === 'ip' ? { 4: new Uint32Array(33), 6: new Uint32Array(129) } : null;
  }

  get size(): number {
    return this.#set.size;
  }

  get bytes(): number {
    return this.#set.bytes;
  }

  /** Adds a stored item (its value as normalizeListItem made it), or sets its expiry. */
  add(value: string, expiresAt: number | null): void {
    const item = this.#hashItem(value);
    if (item === -1) return;
    const out = this.#hasher.out;
    if (this.#set.set(out[1]!, out[0]!, expiresAt)) this.#count(item, 1);
  }

  remove(value: string): void {
    const item = this.#hashItem(value);
    if (item === -1) return;
    const out = this.#hasher.out;
    if (this.#set.delete(out[1]!, out[0]!)) this.#count(item, -1);
  }

  /**
   * Hashes a stored item's value into the hasher. Returns what its count is kept under (ip: family
   * × 256 + prefix length; bin: its length; others 0), or -1 for a value that is not one (never
   * stored).
   */
  #hashItem(value: string): number {
    if (this.kind === 'bin') {
      this.#hasher.text(value);
      return value.length;
    }
    if (this.kind !== 'ip') {
      this.#hasher.text(value);
      return 0;
    }
    // Stored ip items are canonical: an IPv4 address or range takes the fast path.
    const slash = value.indexOf('/');
    const end = slash === -1 ? value.length : slash;
    if (parseIpv4Into(value, 0, end, this.#v4)) {
      const prefix = slash === -1 ? 32 : Number(value.slice(slash + 1));
      this.#hasher.ip(4, prefix, this.#v4);
      return 4 * 256 + prefix;
    }
    const parsed = parseIpItem(value);
    if (parsed === null) return -1;
    this.#hasher.ip(parsed.item.family, parsed.item.prefix, parsed.item.bytes);
    return parsed.item.family * 256 + parsed.item.prefix;
  }

  #count(item: number, delta: 1 | -1): void {
    if (this.#prefixCounts !== null) {
      this.#prefixCounts[(item >> 8) as 4 | 6][item & 255]! += delta;
      this.#prefixes = null;
    } else if (this.kind === 'bin') {
      this.#binCounts[item]! += delta;
    }
  }

  /**
   * Whether the list holds `value` (a rule's value, normalised here by the kind) at `now`.
   * `country`: the event's user.country, for national phone numbers.
   */
  has(value: string, now: number, country: string | null): boolean {
    switch (this.kind) {
      case 'ip':
        return this.#hasIp(value, now);
      case 'email':
        return this.#hasText(normalizeEmail(value), now);
      case 'email_domain': {
        const domain = canonicalDomain(value);
        if (domain === null) return false;
        // The domain, then each parent down to two labels.
        for (let suffix = domain; ; ) {
          if (this.#hasText(suffix, now)) return true;
          const parent = suffix.slice(suffix.indexOf('.') + 1);
          if (parent.indexOf('.') === -1) return false;
          suffix = parent;
        }
      }
      case 'phone': {
        const phone = canonicalPhone(value, country);
        return phone !== null && this.#hasText(phone, now);
      }
      case 'bin': {
        const bin = value.trim();
        if (!/^[0-9]{6,8}$/.test(bin)) return false;
        for (let length = 6; length <= bin.length; length++) {
          if (this.#binCounts[length] !== 0 && this.#hasText(bin.slice(0, length), now)) return true;
        }
        return false;
      }
      case 'card': {
        const card = canonicalCard(value);
        return card !== null && this.#hasText(card, now);
      }
      case 'country': {
        const code = canonicalCountry(value);
        return code !== null && this.#hasText(code, now);
      }
      default:
        // account, fp, string: as sent.
        return this.#hasText(value, now);
    }
  }

  #hasText(text: string, now: number): boolean {
    this.#hasher.text(text);
    const out = this.#hasher.out;
    return this.#set.has(out[1]!, out[0]!, now);
  }

  #hasIp(value: string, now: number): boolean {
    let family: 4 | 6 = 4;
    let bytes: Uint8Array = this.#v4;
    if (!parseIpv4Into(value, 0, value.length, bytes)) {
      // IPv6, IPv4-mapped IPv6, or not an address.
      const address = parseIpAddress(value);
      if (address === null) return false;
      family = address.family;
      bytes = address.bytes;
    }
    const prefixes = this.#prefixLengths()[family];
    const out = this.#hasher.out;
    for (let i = 0; i < prefixes.length; i++) {
      this.#hasher.ip(family, prefixes[i]!, bytes);
      if (this.#set.has(out[1]!, out[0]!, now)) return true;
    }
    return false;
  }

  #prefixLengths(): { 4: number[]; 6: number[] } {
    if (this.#prefixes === null) {
      const counts = this.#prefixCounts!;
      const present = (family: 4 | 6): number[] => {
        const lengths: number[] = [];
        for (let length = counts[family].length - 1; length >= 1; length--) if (counts[family][length] !== 0) lengths.push(length);
        return lengths;
      };
      this.#prefixes = { 4: present(4), 6: present(6) };
    }
    return this.#prefixes;
  }
}
