// Who a per-address limit counts (POST /v1/fp/collect per key and address, failed key lookups).
// Pure.
import { parseIpAddress } from '../lists/list-kinds.js';

/**
 * An IPv4 address as itself, an IPv6 address by its /64 network ("2001:db8:1:2::/64"). A host or a
 * customer line is given a whole /64 (RFC 6177), so counting single IPv6 addresses would let one
 * caller take a fresh budget with every address it picks from its own /64. IPv4-mapped IPv6 is
 * the IPv4 address. Text that is no address (a socket without one) is counted as it is.
 */
export function rateLimitSubject(address: string): string {
  if (!address.includes(':')) return address;
  const parsed = parseIpAddress(address);
  if (parsed === null) return address;
  if (parsed.family === 4) return parsed.bytes.join('.');
  const hextets: string[] = [];
  for (let i = 0; i < 8; i += 2) hextets.push(((parsed.bytes[i]! << 8) | parsed.bytes[i + 1]!).toString(16));
  return `${hextets.join(':')}::/64`;
}
