// The signal values of an event as the store keeps them: keyed hash and masked form per signal
// type (docs/accounts.md). One function, used where an event is scored and where stored events are
// recorded again (the replay at start, the environment split), so all make exactly the same rows.
// Pure.
import type { EventInput } from '../validation/event-input.js';
import { cardKey, maskCard } from './card.js';
import { maskEmail, normalizeEmail } from './email.js';
import { maskIp, normalizeIp } from './ip.js';
import { keyedHash, type SignalType } from './keyed-hash.js';
import { KeyedHashCache } from './keyed-hash-cache.js';
import type { PhoneAnalysis } from './phone.js';

export interface StoredIdentifier {
  readonly type: SignalType;
  readonly hash: string;
  readonly masked: string;
}

/** The email and IP as velocityIdentifiers (identifiers.ts) normalised them, when the caller has them. */
export interface NormalizedValues {
  readonly email: string | null;
  readonly ip: string | null;
}

/**
 * `phone` is the analysis of user.phone (see phone.ts), done once by the caller; `normalized`
 * spares normalising the email and IP a second time. `secret`: the install secret, or a cache of
 * the hashes made with it (keyed-hash-cache.ts; the same hashes).
 */
export function storedIdentifiers(event: EventInput, phone: PhoneAnalysis, secret: Buffer | KeyedHashCache, normalized?: NormalizedValues): StoredIdentifier[] {
  const identifiers: StoredIdentifier[] = [];
  const hashOf = secret instanceof KeyedHashCache ? (type: SignalType, value: string) => secret.hash(type, value) : (type: SignalType, value: string) => keyedHash(secret, type, value);
  const add = (type: SignalType, value: string, masked: string): void => {
    identifiers.push({ type, hash: hashOf(type, value), masked });
  };
  const user = event.user;
  if (typeof user?.email === 'string') {
    const email = normalized?.email ?? normalizeEmail(user.email);
    add('email', email, maskEmail(email));
  } else if (typeof user?.email_hash === 'string') {
    add('email', `hash:${user.email_hash}`, maskHash(user.email_hash));
  }
  if (phone.e164 !== null) add('phone', phone.e164, phone.masked!);
  else if (typeof user?.phone_hash === 'string') add('phone', `hash:${user.phone_hash}`, maskHash(user.phone_hash));
  const fp = event.context?.fp_id;
  if (typeof fp === 'string') add('fp', fp, maskToken(fp));
  const ip = normalized !== undefined ? normalized.ip : typeof event.context?.ip === 'string' ? normalizeIp(event.context.ip) : null;
  if (ip !== null) add('ip', ip, maskIp(ip));
  const bin = event.payment?.bin;
  const last4 = event.payment?.last4;
  if (typeof bin === 'string' && typeof last4 === 'string') add('card', cardKey(bin, last4), maskCard(bin, last4));
  return identifiers;
}

/** Its first four characters, at most half of it (a short hash is not shown whole). */
function maskHash(hash: string): string {
  return `hash:${hash.slice(0, Math.min(4, Math.floor(hash.length / 2)))}***`;
}

function maskToken(token: string): string {
  return `${token.slice(0, Math.min(6, Math.floor(token.length / 2)))}***`;
}
