// IP addresses in one canonical text form, so that the same address always links and counts as
// one: IPv4 dotted decimal; IPv6 lower-case, zero-compressed (RFC 5952); IPv4-mapped IPv6
// (::ffff:203.0.113.7) as the IPv4 address it carries. Pure.
import { isIPv4, isIPv6 } from 'node:net';

export function normalizeIp(raw: string): string | null {
  const text = raw.trim();
  // isIPv4 accepts only the canonical form (no part with a leading zero, none above 255): the text is it.
  if (isIPv4(text)) return text;
  if (!isIPv6(text)) return null;
  const groups = expandIpv6(text.toLowerCase());
  if (groups === null) return null;
  // ::ffff:a.b.c.d and ::ffff:xxxx:xxxx carry an IPv4 address.
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return compressIpv6(groups);
}

/** The eight 16-bit groups of an address that isIPv6 accepted. */
export function expandIpv6(text: string): number[] | null {
  let body = text;
  const embedded: number[] = [];
  // A trailing dotted IPv4 part (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = body.lastIndexOf(':');
  if (body.slice(lastColon + 1).includes('.')) {
    const octets = body.slice(lastColon + 1).split('.').map(Number);
    embedded.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!);
    body = body.slice(0, lastColon + 1);
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const gap = body.indexOf('::');
  let groups: number[];
  if (gap === -1) {
    groups = parse(body);
  } else {
    const left = parse(body.slice(0, gap));
    const right = parse(body.slice(gap + 2));
    groups = [...left, ...new Array<number>(8 - embedded.length - left.length - right.length).fill(0), ...right];
  }
  groups.push(...embedded);
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

function compressIpv6(groups: number[]): string {
  // RFC 5952: the longest run (first if tied) of two or more zero groups becomes "::".
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** 203.0.113.7 → "203.0.113.*"; 2001:db8::1 → "2001:db8:*". */
export function maskIp(normalized: string): string {
  if (normalized.includes('.')) return `${normalized.slice(0, normalized.lastIndexOf('.'))}.*`;
  const groups = expandIpv6(normalized);
  if (groups === null) return '*';
  return `${groups[0]!.toString(16)}:${groups[1]!.toString(16)}:*`;
}
