// Durability (DESIGN §2, issue 4): a 200 or 202 is sent only after the commit. The server is
// killed with SIGKILL in the middle of a burst of sync and async events and restarted: every event
// that got 200 is readable with the same result, every event that got 202 is scored, and nothing
// is scored twice.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { api, makeDataDir, startServer, waitFor } from '../_helpers/server.js';
import { richEvent } from '../_helpers/events.js';

const kAcknowledgedBeforeKill = 200;

test('SIGKILL mid-burst loses no acknowledged event and scores nothing twice', async (t) => {
  const dataDir = makeDataDir();
  const first = await startServer({ dataDir });
  const key = first.bootstrap.keys.live_secret.key;
  const acknowledged = new Map<string, { status: number; decision?: string; risk?: number }>();

  let stop = false;
  const senders = Array.from({ length: 16 }, async (_, sender) => {
    for (let i = 0; !stop; i++) {
      const event = richEvent({ async: (i + sender) % 2 === 0, external_account_id: `burst-${sender}-${i % 5}` });
      try {
        const response = await api(first, 'POST', '/v1/events', { key, body: event });
        if (response.status === 200) acknowledged.set(event.event_id as string, { status: 200, decision: response.body.data.decision, risk: response.body.data.risk_score });
        else if (response.status === 202) acknowledged.set(event.event_id as string, { status: 202 });
      } catch {
        return; // the server is gone
      }
    }
  });
  // Kill once a fixed number of events were acknowledged (a count, not a stretch of time: a slow
  // machine simply takes longer to get there), while the senders keep requests in flight.
  await waitFor(() => acknowledged.size >= kAcknowledgedBeforeKill, `${kAcknowledgedBeforeKill} acknowledgements`);
  await first.kill();
  stop = true;
  await Promise.all(senders);
  t.true(acknowledged.size >= kAcknowledgedBeforeKill);

  const second = await startServer({ dataDir });
  try {
    for (const [eventId, ack] of acknowledged) {
      const scored = await waitFor(async () => {
        const response = await api(second, 'GET', `/v1/scores/${eventId}`, { key });
        t.is(response.status, 200, `event ${eventId} (${ack.status}) is stored`);
        return response.body.data.state === 'scored' ? response.body.data : null;
      }, `event ${eventId} scored after the restart`);
      if (ack.status === 200) {
        t.is(scored.decision, ack.decision);
        t.is(scored.risk_score, ack.risk);
      }
    }
  } finally {
    // A clean stop writes the rows that follow from the events (account counts among them) that
    // are still waiting for their bulk write (docs/pipeline.md, "Derived rows").
    t.is((await second.stop()).code, 0);
  }
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  const duplicates = db.prepare('SELECT count(*) AS n FROM (SELECT project_id, event_id FROM events GROUP BY 1, 2 HAVING count(*) > 1)').get() as { n: number };
  const pending = db.prepare("SELECT count(*) AS n FROM events WHERE state = 'pending'").get() as { n: number };
  // Each account counts each of its stored events once: the account counter equals the rows —
  // the events recorded before the crash, those replayed after it and those scored since.
  const mismatched = db.prepare(
    `SELECT count(*) AS n FROM accounts a WHERE a.events != (SELECT count(*) FROM events e WHERE e.account_id = a.account_id AND e.state = 'scored')`,
  ).get() as { n: number };
  db.close();
  t.is(duplicates.n, 0);
  t.is(pending.n, 0);
  t.is(mismatched.n, 0);
});
