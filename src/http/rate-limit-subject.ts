// Who a per-address limit counts (POST /v1/fp/collect per key and address, failed key lookups).
// Pure.
import { parseIpAddress } from '../lists/list-kinds.js';

/**
 * An IPv4 address as itself, an IPv6 address by its /64 network ("2001:db8:1:2::/64"). A host or a
 * customer line is given a whole /64 (RFC 6177), so counting single IPv6 addresses would let one
 * caller take a fresh budget with every address it picks from its own /64. An IPv6 address that
 * carries an IPv4 one (mapped ::ffff:0:0/96, NAT64's 64:ff9b::/96, the old compatible ::/96) is
 * that IPv4 address; a zone id (%eth0) is no part of the address. Text that is no address (a
 * socket without one) is counted as it is.
 */
export function rateLimitSubject(address: string): string {
  if (!address.includes(':')) return address;
  const zone = address.indexOf('%');
  const parsed = parseIpAddress(zone === -1 ? address : address.slice(0, zone));
  if (parsed === null) return address;
  if (parsed.family === 4) return parsed.bytes.join('.');
  if (carriesIpv4(parsed.bytes)) return parsed.bytes.slice(12).join('.');
  const hextets: string[] = [];
  for (let i = 0; i < 8; i += 2) hextets.push(((parsed.bytes[i]! << 8) | parsed.bytes[i + 1]!).toString(16));
  return `${hextets.join(':')}::/64`;
}

const kNat64Prefix = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];

/** Whether the first 96 bits are NAT64's well-known prefix, or zeros (and the address is not ::1 or ::). */
function carriesIpv4(bytes: Uint8Array): boolean {
  if (kNat64Prefix.every((byte, i) => bytes[i] === byte)) return true;
  for (let i = 0; i < 12; i++) if (bytes[i] !== 0) return false;
  return bytes[12] !== 0 || bytes[13] !== 0;
}
