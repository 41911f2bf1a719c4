// Payloads in the event log with the schema's member names coded (scoring/stored-payload.ts,
// migration 21): over real HTTP, what is stored is shorter, the view event_payloads gives back each
// body exactly as sent (compact, pretty, async), and what reads payloads — an idempotent resend,
// a conflicting body, an async event scored after a crash, an erasure — reads them as before.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { kMarker } from '../../src/scoring/stored-payload.js';
import { heldAt } from '../_helpers/faults.js';
import { api, startServer, waitFor } from '../_helpers/server.js';
import { richEvent } from '../_helpers/events.js';

function storedRows(dataDir: string, eventIds: readonly string[]): Array<{ stored: string; viewed: string; state: string }> {
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  try {
    return eventIds.map((eventId) =>
      db.prepare(
        `SELECT e.payload AS stored, v.payload AS viewed, e.state AS state FROM events e JOIN event_payloads v ON v.seq = e.seq WHERE e.event_id = ?`,
      ).get(eventId) as { stored: string; viewed: string; state: string },
    );
  } finally {
    db.close();
  }
}

test('bodies are stored coded, read back exactly as sent, and every reader of payloads still reads them', async (t) => {
  let server = await startServer({ keepDataDir: true, env: { FAULT_INJECTION: 'hold_points' } });
  const { dataDir } = server;
  const key = server.bootstrap.keys.live_secret.key;
  t.teardown(() => server.kill());
  const compact = richEvent({ external_account_id: 'payload-user' });
  const pretty = richEvent({ external_account_id: 'payload-user', extras: { note: 'a "quoted" "email": inside', email: 'x' } });
  const prettyText = JSON.stringify(pretty, null, 2);
  t.is((await api(server, 'POST', '/v1/events', { key, body: compact })).status, 200);
  t.is((await api(server, 'POST', '/v1/events', { key, rawBody: prettyText })).status, 200);

  // Resent: the stored body is read back and compared (same body: the stored answer; another: 409).
  const resent = await api(server, 'POST', '/v1/events', { key, rawBody: prettyText });
  t.is(resent.status, 200);
  const conflict = await api(server, 'POST', '/v1/events', { key, body: { ...compact, event_type: 'login' } });
  t.is(conflict.status, 409);
  t.is(conflict.body.errors[0]?.code, 'EVENT_ID_CONFLICT');
  t.is(conflict.body.errors[0]?.parameter, 'event_id');

  // An async event accepted before a crash, its background scorer held (never released): read
  // back from the log and scored at the next start.
  await heldAt(server, 'async-scorer');
  const queued = richEvent({ external_account_id: 'payload-user', async: true });
  t.is((await api(server, 'POST', '/v1/events', { key, body: queued })).status, 202);
  await server.kill();
  const beforeStart = storedRows(dataDir, [compact.event_id as string, pretty.event_id as string, queued.event_id as string]);
  for (const [row, text] of beforeStart.map((row, i) => [row, [JSON.stringify(compact), prettyText, JSON.stringify(queued)][i]!] as const)) {
    t.is(row.stored[0], kMarker);
    t.is(row.viewed, text, 'the view gives the body as sent');
    t.true(Buffer.byteLength(row.stored) < Buffer.byteLength(text) * 0.8, `${Buffer.byteLength(row.stored)} of ${Buffer.byteLength(text)} bytes`);
  }

  server = await startServer({ dataDir });
  t.is(beforeStart[2]!.state, 'pending');
  await waitFor(async () => {
    const score = await api(server, 'GET', `/v1/scores/${queued.event_id}`, { key });
    return score.status === 200 && score.body.data.state === 'scored' ? score : null;
  }, 'the queued event scored after the restart');
  t.is(storedRows(dataDir, [queued.event_id as string])[0]!.state, 'scored');

  // The erasure reads each payload to find the account's values and scrubs them.
  const erased = await api(server, 'DELETE', '/v1/accounts/payload-user', { key });
  t.is(erased.status, 200, erased.text);
  t.is(erased.body.data.erased.events, 3);
  for (const row of storedRows(dataDir, [compact.event_id as string, pretty.event_id as string, queued.event_id as string])) {
    t.false(row.viewed.includes('jane.doe@example.com'));
    t.false(row.stored.includes('jane.doe@example.com'));
    t.is(JSON.parse(row.viewed).erased, true);
  }
  await server.stop();
});
