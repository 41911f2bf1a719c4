// Inside a worker, before the rules run: the event-local signals (phone, email) and what the main
// thread found in the service's state (velocity, links, account). Phone parsing runs here unless
// the main thread already did it to hash the number.
import type { Signals } from '../../compiler/index.js';
import { analyzeEmail, normalizeEmail } from '../signals/email.js';
import { analyzeEventPhone } from '../signals/phone.js';
import type { EventInput } from '../validation/event-input.js';
import type { EnrichmentStatus, EvaluateItem } from './protocol.js';

export interface PreparedEvent {
  readonly event: Record<string, unknown>;
  readonly signals: Partial<Signals>;
  readonly enrichment: Record<string, EnrichmentStatus>;
}

export function prepareEvent(item: EvaluateItem): PreparedEvent {
  const event = JSON.parse(item.payload) as EventInput;
  const user = event.user;
  const enrichment: Record<string, EnrichmentStatus> = {};

  const phone = item.phone ?? analyzeEventPhone(event);
  if (typeof user?.phone === 'string') enrichment.phone = phone.status;
  const email = typeof user?.email === 'string' ? normalizeEmail(user.email) : null;
  const emailSignals = analyzeEmail(email);
  if (email !== null) enrichment.email = emailSignals.valid ? 'ok' : 'unparseable';

  const signals: Record<string, unknown> = { phone: phone.signals, email: emailSignals };
  if (item.velocity !== null) signals.velocity = item.velocity;
  if (item.links !== null) signals.links = item.links;
  if (item.account !== null) signals.account = item.account;
  return { event: viewForRules(event), signals: signals as Partial<Signals>, enrichment };
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
