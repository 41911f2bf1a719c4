// Keyed hashes of signal values: HMAC-SHA256 with the install secret, over "<type>\0<value>".
// What the database stores instead of raw emails, phones, IPs, device ids and card numbers.
import { createHmac } from 'node:crypto';

export type SignalType = 'email' | 'phone' | 'fp' | 'ip' | 'card';

/** What a keyed hash is of: a signal type, or an erased account's external id. */
export type HashDomain = SignalType | 'external_id';

export function keyedHash(secret: Buffer, type: HashDomain, value: string): string {
  // One update of "<type>\0<value>": the same bytes, one call into the native side instead of three.
  return keyedHashOf(secret, `${type}\u0000${value}`);
}

/** keyedHash of "<type>\0<value>" given joined (keyed-hash-cache.ts keys its cache by that text). */
export function keyedHashOf(secret: Buffer, text: string): string {
  return createHmac('sha256', secret).update(text).digest('base64url');
}
