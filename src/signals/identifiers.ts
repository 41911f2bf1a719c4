// The identifiers of an event that velocity counts and account links are keyed by, normalized so
// that one person's email or one device is always the same key. Pure.
//
// When the caller sends only a hash (user.email_hash, user.phone_hash), the hash is the identifier,
// in its own namespace ("hash:..."): it links to other events that sent the same hash, never to a
// raw address.
import type { EventInput } from '../validation/event-input.js';
import { normalizeEmail } from './email.js';
import { normalizeIp } from './ip.js';

export interface VelocityIdentifiers {
  readonly email: string | null;
  readonly ip: string | null;
  readonly fp: string | null;
  readonly cardToken: string | null;
  readonly amountCents: number;
}

export function velocityIdentifiers(event: EventInput): VelocityIdentifiers {
  const email = typeof event.user?.email === 'string' ? normalizeEmail(event.user.email) : typeof event.user?.email_hash === 'string' ? `hash:${event.user.email_hash}` : null;
  const ip = typeof event.context?.ip === 'string' ? normalizeIp(event.context.ip) : null;
  const fp = typeof event.context?.fp_id === 'string' ? event.context.fp_id : null;
  const cardToken = typeof event.payment?.card_token === 'string' ? event.payment.card_token : null;
  const amount = event.payment?.amount_cents;
  return { email, ip, fp, cardToken, amountCents: typeof amount === 'number' ? amount : 0 };
}

/** external_account_id as stored: numbers as their decimal string. */
export function externalAccountIdOf(event: EventInput): string | null {
  const id = event.external_account_id;
  if (id === undefined) return null;
  return typeof id === 'number' ? String(id) : id;
}
