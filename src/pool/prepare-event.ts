// Inside a worker, before the rules run: the event-local signals (phone, email), the keyed hashes of
// the event's signal values, and the stored signals (links, account) the ruleset reads. Kept off
// the HTTP thread because phone parsing and hashing are the costly part of scoring.
import type { Signals } from '../../compiler/index.js';
import { analyzeEmail, normalizeEmail } from '../signals/email.js';
import { analyzePhone } from '../signals/phone.js';
import { storedIdentifiers, type StoredIdentifier } from '../signals/stored-identifiers.js';
import type { HashedSignal, StoredSignals } from '../signals/stored-signals.js';
import type { EventInput } from '../validation/event-input.js';
import { Needs, type EnrichmentStatus, type EvaluateItem } from './protocol.js';

export interface PreparedEvent {
  readonly event: Record<string, unknown>;
  readonly signals: Partial<Signals>;
  readonly enrichment: Record<string, EnrichmentStatus>;
  readonly identifiers: StoredIdentifier[];
}

export function prepareEvent(item: EvaluateItem, secret: Buffer, stored: StoredSignals): PreparedEvent {
  const event = JSON.parse(item.payload) as EventInput;
  const user = event.user;
  const enrichment: Record<string, EnrichmentStatus> = {};

  const rawPhone = typeof user?.phone === 'string' ? user.phone : null;
  const country = typeof user?.country === 'string' ? user.country : null;
  const phone = analyzePhone(rawPhone, country);
  if (rawPhone !== null) enrichment.phone = phone.status;
  const email = typeof user?.email === 'string' ? normalizeEmail(user.email) : null;
  const emailSignals = analyzeEmail(email);
  if (email !== null) enrichment.email = emailSignals.valid ? 'ok' : 'unparseable';

  const identifiers = (item.needs & (Needs.Links | Needs.StoredIdentifiers)) !== 0 ? storedIdentifiers(event, phone, secret) : [];

  const signals: Partial<Signals> = { phone: phone.signals, email: emailSignals } as Partial<Signals>;
  if (item.velocity !== null) (signals as Record<string, unknown>).velocity = item.velocity;
  if ((item.needs & Needs.Links) !== 0) {
    const hashed: HashedSignal[] = identifiers;
    (signals as Record<string, unknown>).links = stored.links(item.tenantId, item.environment, item.accountId, hashed, item.now);
  }
  if ((item.needs & Needs.Account) !== 0) (signals as Record<string, unknown>).account = stored.account(item.accountId, item.now);

  return { event: viewForRules(event), signals, enrichment, identifiers: (item.needs & Needs.StoredIdentifiers) !== 0 ? identifiers : [] };
}

/**
 * The event as rules see it: country and currency codes upper-cased, external_account_id as a
 * string; everything else as sent. Copies only the objects it changes.
 */
export function viewForRules(event: EventInput): Record<string, unknown> {
  const view: Record<string, unknown> = { ...event };
  if (typeof event.external_account_id === 'number') view.external_account_id = String(event.external_account_id);
  if (event.user !== undefined && typeof event.user.country === 'string') view.user = { ...event.user, country: event.user.country.toUpperCase() };
  if (event.context !== undefined && typeof event.context.country === 'string') view.context = { ...event.context, country: event.context.country.toUpperCase() };
  if (event.payment !== undefined && (typeof event.payment.currency === 'string' || typeof event.payment.billing_country === 'string')) {
    const payment: Record<string, unknown> = { ...event.payment };
    if (typeof payment.currency === 'string') payment.currency = payment.currency.toUpperCase();
    if (typeof payment.billing_country === 'string') payment.billing_country = payment.billing_country.toUpperCase();
    view.payment = payment;
  }
  return view;
}
