// Event bodies for tests: a valid minimal event, and a richer one, each with a fresh event_id.
import { randomUUID } from 'node:crypto';

export function minimalEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { event_id: randomUUID(), event_type: 'payment', ...overrides };
}

export function richEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: randomUUID(),
    event_type: 'payment',
    external_account_id: `user-${randomUUID().slice(0, 8)}`,
    context: { ip: '203.0.113.7', user_agent: 'Mozilla/5.0', country: 'DE', session_id: 's-1' },
    user: { email: 'jane.doe@example.com', phone: '+4915112345678', country: 'DE', registered_at: '2024-01-01T00:00:00Z' },
    payment: { amount_cents: 4200, currency: 'EUR', method: 'card', bin: '411111', last4: '1111', billing_country: 'DE', card_token: 'tok_test_1' },
    ...overrides,
  };
}
