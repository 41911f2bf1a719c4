// Velocity counts an event from the moment it is scored, not from its commit (docs/rules.md,
// "Velocity"): a burst of card tests sent in parallel sees itself, as the same burst sent one by
// one does. An event that is not stored after all (refused by its rules, failed write) is taken
// back out. Regression: ten parallel events on one new card all read card_1h = 0 while they were
// in flight together, and a velocity hard block let the whole burst through.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, ruleBody } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

let server: TestServer;

test.before(async () => {
  server = await startServer({ env: { SQLITE_BUSY_TIMEOUT_MS: '50' } });
});

test.after.always(async () => {
  await server?.stop();
});

function cardEvent(token: string): Record<string, unknown> {
  return minimalEvent({ event_type: 'payment', payment: { amount_cents: 100, currency: 'EUR', card_token: token } });
}

// Serial: the second test locks the database, which would fail the first one's burst.
test.serial('a burst of parallel events on one card counts itself: the third and later are blocked, as sent one by one', async (t) => {
  const project = await newProject(server, 'none');
  await createRule(server, project.key, ruleBody('card_burst', { kind: 'hard_block', expression: 'velocity.card_1h >= 2' }));
  await publish(server, project.key);
  const token = `tok_burst_${randomUUID()}`;
  const answers = await Promise.all(Array.from({ length: 10 }, () => api(server, 'POST', '/v1/events', { key: project.key, body: cardEvent(token) })));
  t.deepEqual(answers.map((answer) => answer.status), Array(10).fill(200));
  const blocked = answers.filter((answer) => answer.body.data.decision === 'block').length;
  t.is(blocked, 8, 'each event sees those scored before it, in flight or stored');
});

test.serial('an event that is not stored is taken back out of the windows', async (t) => {
  const project = await newProject(server, 'none');
  await createRule(server, project.key, ruleBody('card_seen', { kind: 'hard_block', expression: 'velocity.card_1h >= 1' }));
  await publish(server, project.key);
  const token = `tok_failed_${randomUUID()}`;
  // The write fails (the database locked past the busy timeout): 500, nothing stored.
  const lock = new Database(join(server.dataDir, 'fraud-scorer.db'));
  lock.exec('BEGIN EXCLUSIVE');
  const failed = await api(server, 'POST', '/v1/events', { key: project.key, body: cardEvent(token) });
  lock.exec('ROLLBACK');
  lock.close();
  t.is(failed.status, 500);
  // It does not count: the next event on the card is the first one stored.
  const next = await api(server, 'POST', '/v1/events', { key: project.key, body: cardEvent(token) });
  t.is(next.status, 200, next.text);
  t.is(next.body.data.decision, 'allow');
  const after = await api(server, 'POST', '/v1/events', { key: project.key, body: cardEvent(token) });
  t.is(after.body.data.decision, 'block');
});
