// GET /v1/cases?order=oldest never shows a case behind a page already read: a case whose event
// began scoring first but is stored last (its created_at is the earlier) is listed only once no
// event that began before it is still being scored. Driven with the test-only hold points
// (FAULT_INJECTION=hold_points): an event held scored and not stored.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { heldAt, release } from '../_helpers/faults.js';
import { minimalEvent } from '../_helpers/events.js';
import { api, startServer } from '../_helpers/server.js';

/** With the default preset: disposable email 15 + billing/IP country 15 + user/IP country 10 = 40, review. */
function reviewEvent(extras: Record<string, unknown> = {}): Record<string, unknown> {
  return minimalEvent({
    user: { email: `someone.${randomUUID().slice(0, 6)}@mailinator.com`, country: 'FR' },
    context: { country: 'DE' },
    payment: { amount_cents: 1000, currency: 'EUR', billing_country: 'US' },
    extras,
  });
}

test('a case stored after a later-begun one is listed oldest first before it, never behind a cursor already given', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const project = server.bootstrap.live_project_id;
  const listed = async (order: string): Promise<{ events: string[]; cursor: string | null }> => {
    const response = await api(server, 'GET', `/v1/cases?project_id=${project}&order=${order}&limit=100`, { key });
    t.is(response.status, 200, response.text);
    return { events: response.body.data.cases.map((entry: { event_ids: string[] }) => entry.event_ids[0]), cursor: response.body.data.next_cursor };
  };

  // The first event is scored, then held before it is stored: its case's created_at is set.
  const first = reviewEvent({ fault_hold: 'late-case' });
  const firstAnswer = api(server, 'POST', '/v1/events', { key, body: first });
  await heldAt(server, 'late-case');
  const second = await api(server, 'POST', '/v1/events', { key, body: reviewEvent() });
  t.is(second.body.data?.decision, 'review', second.text);

  // Newest first shows what is stored; oldest first waits for the event that began before.
  t.deepEqual((await listed('newest')).events, [second.body.data.event_id]);
  t.deepEqual(await listed('oldest'), { events: [], cursor: null });

  release(server, 'late-case');
  const stored = await firstAnswer;
  t.is(stored.body.data?.decision, 'review', stored.text);
  t.deepEqual((await listed('oldest')).events, [first.event_id, second.body.data.event_id], 'in the order of created_at');
});
