// What an erased account's events keep (interface: DELETE /v1/accounts/{id}, GDPR): only what is
// not personal, so that counts and audit still add up. Pure.

/** Top-level members kept as they are: identifiers of the event, not of the person. */
const kKeptTopLevel = ['event_id', 'event_type', 'brand_id'] as const;
/** Payment members kept: amounts and currency. Card fields (bin, last4, token) are personal. */
const kKeptPayment = ['amount_cents', 'currency'] as const;

/**
 * The payload of an erased account's event: event id and type, brand, amount and currency, and a
 * marker. Email, phone, name, IP, user agent, device, card fields, the external account id and
 * the free-form extras are gone.
 */
export function scrubPayload(payload: string): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return JSON.stringify({ erased: true });
  }
  const kept: Record<string, unknown> = {};
  for (const name of kKeptTopLevel) if (event[name] !== undefined) kept[name] = event[name];
  const payment = event.payment;
  if (typeof payment === 'object' && payment !== null) {
    const keptPayment: Record<string, unknown> = {};
    for (const name of kKeptPayment) {
      const value = (payment as Record<string, unknown>)[name];
      if (value !== undefined) keptPayment[name] = value;
    }
    if (Object.keys(keptPayment).length > 0) kept.payment = keptPayment;
  }
  kept.erased = true;
  return JSON.stringify(kept);
}
