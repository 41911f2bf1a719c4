// POST /v1/events and GET /v1/scores over real HTTP (interface: Event input, Score result,
// States and transitions, Idempotency, Errors).
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { api, runCli, sleep, startServer, storedEventCount, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent, richEvent } from '../_helpers/events.js';
import { heldAt, metric, release } from '../_helpers/faults.js';

let server: TestServer;
let key: string;

test.before(async () => {
  // Rows written in bulk every 100 ms (the default is seconds), so that countedEvents waits little.
  server = await startServer({ env: { DERIVED_FLUSH_MS: '100' } });
  key = server.bootstrap.keys.live_secret.key;
});

test.after.always(async () => {
  await server?.stop();
});

function storedRows(eventId: string): number {
  return storedEventCount(server.dataDir, eventId);
}

/** The account's event count once its row has been written in bulk (DERIVED_FLUSH_MS after the event). */
function countedEvents(accountId: string): Promise<number> {
  return waitFor(() => {
    const db = new Database(join(server.dataDir, 'fraud-scorer.db'), { readonly: true });
    try {
      const events = db.prepare('SELECT events FROM accounts WHERE account_id = ?').pluck().get(accountId) as number | undefined;
      return events === undefined || events === 0 ? null : events;
    } finally {
      db.close();
    }
  }, `the counts of ${accountId} written`);
}

function waitForScore(eventId: string, withKey = key): Promise<any> {
  return waitFor(async () => {
    const response = await api(server, 'GET', `/v1/scores/${eventId}`, { key: withKey });
    return response.status === 200 && response.body.data.state === 'scored' ? response.body.data : null;
  }, `event ${eventId} scored`);
}

test('a sync event returns every field of the score result', async (t) => {
  const event = richEvent();
  const response = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(response.status, 200, response.text);
  t.is(response.body.status, 1);
  const result = response.body.data;
  t.true(['allow', 'review', 'block'].includes(result.decision));
  t.true(Number.isInteger(result.risk_score) && result.risk_score >= 0);
  t.true(Number.isInteger(result.max_possible) && result.max_possible > 0);
  t.true(Array.isArray(result.breakdown) && result.breakdown.length > 0);
  for (const entry of result.breakdown) {
    t.is(typeof entry.rule_id, 'string');
    t.true(Number.isInteger(entry.rule_version));
    t.is(typeof entry.score_delta, 'number');
    t.is(typeof entry.matched, 'boolean');
    t.is(entry.reason, entry.rule_id);
    t.is(entry.band === null || typeof entry.band === 'string', true);
    if (!entry.matched) t.false('action' in entry);
  }
  t.true(Array.isArray(result.flags));
  t.false(result.trust_override);
  t.false(result.hard_block_hit);
  t.is(result.enrichment_status.phone, 'ok');
  t.regex(result.account_public_id, /^acc_[A-Za-z0-9]{20}$/);
  t.is(typeof result.latency_ms, 'number');
  t.true(result.latency_ms >= 0);
  t.is(result.event_id, event.event_id);
  if ('actions' in result) t.true(result.actions.length > 0);
  if ('degraded' in result) t.true(result.degraded.length > 0);
});

test('without external_account_id there is no account_public_id', async (t) => {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent() });
  t.is(response.status, 200);
  t.false('account_public_id' in response.body.data);
  t.false('actions' in response.body.data, 'actions only when non-empty');
});

for (const mark of ['trusted', 'vip']) {
  test(`user.${mark} gives allow with score 0, a trust override and only the winning rule`, async (t) => {
    const response = await api(server, 'POST', '/v1/events', { key, body: richEvent({ user: { [mark]: true, is_known_fraud: true } }) });
    t.is(response.status, 200);
    const result = response.body.data;
    t.is(result.decision, 'allow');
    t.is(result.risk_score, 0);
    t.true(result.trust_override);
    t.false(result.hard_block_hit);
    t.is(result.breakdown.length, 1);
    t.true(result.breakdown[0].matched);
  });
}

for (const mark of ['is_known_fraud', 'chargeback_flag', 'name_blocked', 'sanctions_match']) {
  test(`user.${mark} hard-blocks with risk_score = max_possible`, async (t) => {
    const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { [mark]: true } }) });
    t.is(response.status, 200);
    const result = response.body.data;
    t.is(result.decision, 'block');
    t.true(result.hard_block_hit);
    t.false(result.trust_override);
    t.is(result.risk_score, result.max_possible);
    t.is(result.breakdown.length, 1);
    t.true(result.breakdown[0].matched);
  });

  test(`user.${mark} = false does not block`, async (t) => {
    const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { [mark]: false } }) });
    t.is(response.status, 200);
    t.false(response.body.data.hard_block_hit);
  });
}

test('phones: E.164 and national with country are ok; digits that do not parse are accepted as unparseable', async (t) => {
  const e164 = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { phone: '+447911123456' } }) });
  t.is(e164.body.data.enrichment_status.phone, 'ok');
  const national = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { phone: '07911 123456', country: 'GB' } }) });
  t.is(national.body.data.enrichment_status.phone, 'ok');
  const unparseable = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { phone: '12' } }) });
  t.is(unparseable.status, 200);
  t.is(unparseable.body.data.enrichment_status.phone, 'unparseable');
  // Digits of other scripts are digits: fullwidth and Arabic-Indic parse; Bengali ones do not, and are accepted as unparseable.
  for (const [phone, status] of [['+４９１５１１２３４５６７８', 'ok'], ['+٤٩١٥١١٢٣٤٥٦٧٨', 'ok'], ['+৪৯১৫১১২৩৪৫৬৭৮', 'unparseable']] as const) {
    const answer = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { phone } }) });
    t.is(answer.status, 200, answer.text);
    t.is(answer.body.data.enrichment_status.phone, status, phone);
  }
});

const kInvalidEvents: Array<[string, Record<string, unknown>, string]> = [
  ['event_id missing', { event_id: undefined }, 'event_id'],
  ['event_id not a UUID', { event_id: 'evt-1' }, 'event_id'],
  ['event_id a number', { event_id: 12 }, 'event_id'],
  ['event_type missing', { event_type: undefined }, 'event_type'],
  ['event_type unknown', { event_type: 'refund' }, 'event_type'],
  ['an unknown top-level property', { amount: 5 }, 'amount'],
  ['async not a boolean', { async: 'yes' }, 'async'],
  ['external_account_id too long', { external_account_id: 'x'.repeat(65) }, 'external_account_id'],
  ['external_account_id empty', { external_account_id: '' }, 'external_account_id'],
  ['external_account_id a fraction', { external_account_id: 1.5 }, 'external_account_id'],
  ['external_account_id negative', { external_account_id: -1 }, 'external_account_id'],
  ['external_account_id an object', { external_account_id: { id: 1 } }, 'external_account_id'],
  ['brand_id too long', { brand_id: 'b'.repeat(65) }, 'brand_id'],
  ['context not an object', { context: 'web' }, 'context'],
  ['context.ip not an address', { context: { ip: '300.1.1.1' } }, 'context.ip'],
  ['context.country not two letters', { context: { country: 'DEU' } }, 'context.country'],
  ['context.session_anon not a boolean', { context: { session_anon: 1 } }, 'context.session_anon'],
  ['user.email malformed', { user: { email: 'not-an-email' } }, 'user.email'],
  ['user.phone without a digit', { user: { phone: 'call me' } }, 'user.phone'],
  ['user.phone not a string', { user: { phone: 4915112345678 } }, 'user.phone'],
  ['user.registered_at not a date-time', { user: { registered_at: 'yesterday' } }, 'user.registered_at'],
  // RFC 3339 as the rules read it: ajv's date-time alone took these, and the rules then could not.
  ['user.registered_at with a space for the T', { user: { registered_at: '2026-11-29 07:23:13Z' } }, 'user.registered_at'],
  ['user.registered_at with an offset without its colon', { user: { registered_at: '2026-11-29T07:23:13+0000' } }, 'user.registered_at'],
  ['user.registered_at with an offset without minutes', { user: { registered_at: '2026-11-29T07:23:13+00' } }, 'user.registered_at'],
  ['user.registered_at in the year 0000', { user: { registered_at: '0000-01-01T00:00:00Z' } }, 'user.registered_at'],
  ['user.registered_at on a leap second', { user: { registered_at: '2016-12-31T23:59:60Z' } }, 'user.registered_at'],
  ['a mark not a boolean', { user: { trusted: 'true' } }, 'user.trusted'],
  ['payment.amount_cents a fraction', { payment: { amount_cents: 10.5 } }, 'payment.amount_cents'],
  ['payment.amount_cents negative', { payment: { amount_cents: -1 } }, 'payment.amount_cents'],
  ['payment.currency malformed', { payment: { currency: 'EURO' } }, 'payment.currency'],
  ['payment.bin malformed', { payment: { bin: '41a111' } }, 'payment.bin'],
  ['payment.last4 malformed', { payment: { last4: '111' } }, 'payment.last4'],
  ['extras not an object', { extras: [1, 2] }, 'extras'],
  ['brand_id empty', { brand_id: '' }, 'brand_id'],
  ['context.user_agent too long', { context: { user_agent: 'u'.repeat(1025) } }, 'context.user_agent'],
  ['context.fp_id too long', { context: { fp_id: 'f'.repeat(129) } }, 'context.fp_id'],
  ['context.fp_id empty', { context: { fp_id: '' } }, 'context.fp_id'],
  ['context.fp_id only white space', { context: { fp_id: ' \t\u00a0' } }, 'context.fp_id'],
  ['context.fp_id only next-line characters (white space JavaScript\'s trim() keeps)', { context: { fp_id: '\u0085\u0085' } }, 'context.fp_id'],
  ['context.session_id too long', { context: { session_id: 's'.repeat(129) } }, 'context.session_id'],
  ['context.affiliate_id not a string', { context: { affiliate_id: 7 } }, 'context.affiliate_id'],
  ['user not an object', { user: 'jane' }, 'user'],
  ['user.email too long', { user: { email: `${'a'.repeat(250)}@example.com` } }, 'user.email'],
  ['user.phone too long', { user: { phone: `+${'4'.repeat(64)}` } }, 'user.phone'],
  ['user.name too long', { user: { name: 'n'.repeat(257) } }, 'user.name'],
  ['user.country not two letters', { user: { country: 'GBR' } }, 'user.country'],
  ['user.email_hash empty', { user: { email_hash: '' } }, 'user.email_hash'],
  ['user.phone_hash too long', { user: { phone_hash: 'h'.repeat(129) } }, 'user.phone_hash'],
  ['user.vip not a boolean', { user: { vip: 1 } }, 'user.vip'],
  ['user.is_known_fraud not a boolean', { user: { is_known_fraud: 'no' } }, 'user.is_known_fraud'],
  ['user.chargeback_flag not a boolean', { user: { chargeback_flag: 'yes' } }, 'user.chargeback_flag'],
  ['user.name_blocked not a boolean', { user: { name_blocked: 0 } }, 'user.name_blocked'],
  ['user.sanctions_match not a boolean', { user: { sanctions_match: [] } }, 'user.sanctions_match'],
  ['payment not an object', { payment: 100 }, 'payment'],
  ['payment.amount_cents too large', { payment: { amount_cents: 1e16 } }, 'payment.amount_cents'],
  ['payment.method empty', { payment: { method: '' } }, 'payment.method'],
  ['payment.billing_country not two letters', { payment: { billing_country: 'D' } }, 'payment.billing_country'],
  ['payment.card_token too long', { payment: { card_token: 't'.repeat(129) } }, 'payment.card_token'],
];

for (const [name, change, parameter] of kInvalidEvents) {
  test(`400 VALIDATION_ERROR: ${name}, and nothing stored`, async (t) => {
    const event = { ...minimalEvent(), ...change };
    for (const [field, value] of Object.entries(change)) if (value === undefined) delete (event as Record<string, unknown>)[field];
    const response = await api(server, 'POST', '/v1/events', { key, body: event });
    t.is(response.status, 400, response.text);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(response.body.errors[0]?.parameter, parameter);
    if (typeof event.event_id === 'string') t.is(storedRows(event.event_id.toLowerCase()), 0);
  });
}

test('user.registered_at in any form of RFC 3339 the rules read is accepted, and the rule reading it is not degraded', async (t) => {
  for (const registeredAt of ['2026-01-31T12:00:00Z', '2026-01-31t12:00:00z', '2026-01-31T13:00:00.250+01:00', '2026-01-31T06:00:00.123456789-06:00']) {
    const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ event_type: 'registration', user: { registered_at: registeredAt } }) });
    t.is(response.status, 200, `${registeredAt}: ${response.text}`);
    t.false((response.body.data.degraded ?? []).includes('recently_registered'), `${registeredAt}: ${response.text}`);
  }
});

test('the open objects accept extra members', async (t) => {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ context: { tab: 'checkout' }, user: { tier: 'gold' }, payment: { installments: 3 } }) });
  t.is(response.status, 200, response.text);
});

test('a number external_account_id is accepted and resolves to the same account as its decimal string', async (t) => {
  const id = Math.floor(Math.random() * 1e12);
  const first = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: id }) });
  const second = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: String(id) }) });
  t.is(first.status, 200);
  t.is(first.body.data.account_public_id, second.body.data.account_public_id);
});

test('a number external_account_id above 2^53 - 1 is refused (JSON parsers round it to another id), with a message that says so, and nothing stored', async (t) => {
  const event = minimalEvent();
  const rawBody = JSON.stringify(event).replace(/}$/, ',"external_account_id":9007199254740993}');
  const response = await api(server, 'POST', '/v1/events', { key, rawBody });
  t.is(response.status, 400, response.text);
  t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
  t.is(response.body.errors[0]?.parameter, 'external_account_id');
  // Refused as any integer beyond 2^53 - 1 in a body is (docs/events.md): it says to send a string.
  t.regex(response.body.errors[0]?.message, /beyond ±9007199254740991 .*send it as a string/);
  t.is(storedRows(event.event_id as string), 0);
  const largest = await api(server, 'POST', '/v1/events', { key, rawBody: JSON.stringify(minimalEvent()).replace(/}$/, ',"external_account_id":9007199254740991}') });
  t.is(largest.status, 200, largest.text);
});

test('an integer beyond 2^53 - 1 anywhere in the body is refused naming it (it would read back as another number, and two such bodies as one), and nothing stored', async (t) => {
  for (const [extras, parameter] of [['{"order_ref":12345678901234567}', 'extras.order_ref'], ['{"refs":[1, -9007199254740993]}', 'extras.refs[1]']] as const) {
    const event = minimalEvent();
    const rawBody = JSON.stringify(event).replace(/}$/, `,"extras":${extras}}`);
    const response = await api(server, 'POST', '/v1/events', { key, rawBody });
    t.is(response.status, 400, response.text);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(response.body.errors[0]?.parameter, parameter);
    t.regex(response.body.errors[0]?.message, /send it as a string/);
    t.is(storedRows(event.event_id as string), 0);
  }
  // The largest exact integer, the same digits as a string, and a double in exponent form or with a fraction are taken.
  const taken = minimalEvent({ extras: { n: 9007199254740991, s: '12345678901234567' } });
  // A string's text that writes such an integer is a string: a double of the same value elsewhere is taken.
  const body = JSON.stringify(taken).replace(/}}$/, ',"e":1e20,"f":12345678901234567.5,"raw":"{\\"id\\":12345678901234567}","ratio":1.2345678901234568e16}}');
  const answer = await api(server, 'POST', '/v1/events', { key, rawBody: body });
  t.is(answer.status, 200, answer.text);
});

test('resending a sync request returns the stored result without scoring again', async (t) => {
  const event = richEvent();
  const first = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(first.status, 200);
  // Key order and whitespace do not make a different body.
  const reordered = Object.fromEntries(Object.entries(event).reverse());
  const again = await api(server, 'POST', '/v1/events', { key, rawBody: JSON.stringify(reordered, null, 2) });
  t.is(again.status, 200);
  const { latency_ms: _l, account_public_id: _a, degraded: _d, ...expected } = first.body.data;
  t.deepEqual(again.body.data, expected);
  t.false('latency_ms' in again.body.data);
  t.false('account_public_id' in again.body.data);
  t.false('degraded' in again.body.data);
  t.is(storedRows(event.event_id as string), 1);
  t.is(await countedEvents(first.body.data.account_public_id), 1, 'the account counted the event once');
});

test('the same event_id with a different body is 409 EVENT_ID_CONFLICT; the stored result is unchanged', async (t) => {
  const event = minimalEvent();
  const first = await api(server, 'POST', '/v1/events', { key, body: event });
  const conflict = await api(server, 'POST', '/v1/events', { key, body: { ...event, event_type: 'login' } });
  t.is(conflict.status, 409);
  t.is(conflict.body.errors[0]?.code, 'EVENT_ID_CONFLICT');
  t.is(conflict.body.errors[0]?.parameter, 'event_id');
  const asyncConflict = await api(server, 'POST', '/v1/events', { key, body: { ...event, brand_id: 'b', async: true } });
  t.is(asyncConflict.status, 409);
  const stored = await api(server, 'GET', `/v1/scores/${event.event_id}`, { key });
  t.is(stored.body.data.decision, first.body.data.decision);
});

test('the async flag is not part of the compared body; a repeated async request gets a new receipt', async (t) => {
  const event = minimalEvent();
  const sync = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(sync.status, 200);
  const asAsync = await api(server, 'POST', '/v1/events', { key, body: { ...event, async: true } });
  t.is(asAsync.status, 202);
  t.is(asAsync.body.data.state, 'scored');

  const pending = minimalEvent({ async: true });
  const first = await api(server, 'POST', '/v1/events', { key, body: pending });
  await sleep(5);
  const second = await api(server, 'POST', '/v1/events', { key, body: pending });
  t.is(first.status, 202);
  t.is(second.status, 202);
  t.not(first.body.data.accepted_at, second.body.data.accepted_at);
  t.is(storedRows(pending.event_id as string), 1);
});

test('concurrent duplicates of one event are scored once', async (t) => {
  const event = richEvent();
  const responses = await Promise.all(Array.from({ length: 20 }, () => api(server, 'POST', '/v1/events', { key, body: event })));
  t.true(responses.every((response) => response.status === 200));
  t.is(new Set(responses.map((response) => response.body.data.decision)).size, 1);
  t.is(storedRows(event.event_id as string), 1);
  t.is(await countedEvents(responses[0]!.body.data.account_public_id), 1);
});

test('an async event is accepted with 202, reads as pending, then scored', async (t) => {
  const event = richEvent({ async: true });
  const accepted = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(accepted.status, 202);
  t.is(accepted.body.data.event_id, event.event_id);
  t.is(accepted.body.data.state, 'pending');
  t.false(Number.isNaN(Date.parse(accepted.body.data.accepted_at)));
  const scored = await waitForScore(event.event_id as string);
  t.true(['allow', 'review', 'block'].includes(scored.decision));
  t.false('latency_ms' in scored);
  t.false('account_public_id' in scored);
  t.true(Array.isArray(scored.breakdown));
});

test('a sync request for a queued async event scores it once: the queued job is dropped, never scored again', async (t) => {
  const held = await startServer({ env: { FAULT_INJECTION: 'hold_points' } });
  const liveKey = held.bootstrap.keys.live_secret.key;
  const decisions = async (): Promise<number> => {
    const text = await (await fetch(`${held.url}/metrics`)).text();
    const pattern = new RegExp(`^fraud_scorer_decisions_total\\{[^}]*project_id="${held.bootstrap.live_project_id}"[^}]*\\} (\\d+)`, 'gm');
    return [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
  };
  try {
    await heldAt(held, 'async-scorer'); // the background scorer waits: the async event stays queued
    const event = minimalEvent({ external_account_id: `once-${randomUUID().slice(0, 8)}` });
    const accepted = await api(held, 'POST', '/v1/events', { key: liveKey, body: { ...event, async: true } });
    t.is(accepted.status, 202, accepted.text);
    t.is(await metric(held, 'fraud_scorer_async_queue_depth'), 1);
    const scored = await api(held, 'POST', '/v1/events', { key: liveKey, body: event });
    t.is(scored.status, 200, scored.text);
    t.is(await metric(held, 'fraud_scorer_async_queue_depth'), 0, 'scored by the sync request: its queued job is gone');
    release(held, 'async-scorer');
    // A later async event is scored after where the dropped job was in the queue.
    const later = minimalEvent({ async: true });
    t.is((await api(held, 'POST', '/v1/events', { key: liveKey, body: later })).status, 202);
    await waitFor(async () => (await metric(held, 'fraud_scorer_async_scored_total')) === 1, 'the later async event to be scored');
    t.is(await decisions(), 2, 'two events judged: the sync one and the later one');
    const read = await api(held, 'GET', `/v1/scores/${event.event_id}`, { key: liveKey });
    t.is(read.status, 200);
    t.deepEqual(read.body.data.breakdown, scored.body.data.breakdown);
    t.is(read.body.data.risk_score, scored.body.data.risk_score);
    t.is(storedEventCount(held.dataDir, event.event_id as string), 1, 'one row for the event');
  } finally {
    await held.stop();
  }
});

test('event ids are per project: the same UUID in the sandbox is another event', async (t) => {
  const event = minimalEvent({ user: { is_known_fraud: true } });
  const live = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(live.body.data.decision, 'block');
  const sandboxKey = server.bootstrap.keys.sandbox_secret.key;
  const other = { ...event, user: { trusted: true } };
  const sandbox = await api(server, 'POST', '/v1/events', { key: sandboxKey, body: other });
  t.is(sandbox.status, 200, 'not a conflict: another project');
  t.is(sandbox.body.data.decision, 'allow');
  t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key: sandboxKey })).body.data.decision, 'allow');
  t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).body.data.decision, 'block');
  const unseen = minimalEvent();
  await api(server, 'POST', '/v1/events', { key, body: unseen });
  t.is((await api(server, 'GET', `/v1/scores/${unseen.event_id}`, { key: sandboxKey })).status, 404);
});

test('GET /v1/scores of an unknown event is 404 NOT_FOUND', async (t) => {
  for (const id of [randomUUID(), 'not-a-uuid']) {
    const response = await api(server, 'GET', `/v1/scores/${id}`, { key });
    t.is(response.status, 404);
    t.is(response.body.errors[0]?.code, 'NOT_FOUND');
    t.is(response.body.errors[0]?.parameter, 'event_id');
  }
});

test('an event_id in capitals is the same event', async (t) => {
  const event = minimalEvent();
  await api(server, 'POST', '/v1/events', { key, body: event });
  const upper = await api(server, 'POST', '/v1/events', { key, body: { ...event, event_id: (event.event_id as string).toUpperCase() } });
  t.is(upper.status, 200);
  t.false('latency_ms' in upper.body.data, 'answered from the store');
  t.is((await api(server, 'GET', `/v1/scores/${(event.event_id as string).toUpperCase()}`, { key })).status, 200);
});

test('a project without a published ruleset: sync is 503 COMPILED_RULES_UNAVAILABLE and stores nothing; async waits', async (t) => {
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'bare', '--preset', 'none', '--json'])).stdout);
  const bareKey = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const event = minimalEvent();
  const sync = await api(server, 'POST', '/v1/events', { key: bareKey, body: event });
  t.is(sync.status, 503);
  t.is(sync.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  t.is(storedRows(event.event_id as string), 0);
  const later = minimalEvent({ async: true });
  const accepted = await api(server, 'POST', '/v1/events', { key: bareKey, body: later });
  t.is(accepted.status, 202);
  await sleep(300);
  t.is((await api(server, 'GET', `/v1/scores/${later.event_id}`, { key: bareKey })).body.data.state, 'pending');
});

test('a corrupt project policy is 503 PROJECT_POLICY_UNAVAILABLE and stores nothing', async (t) => {
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'broken', '--json'])).stdout);
  const brokenKey = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  t.is((await api(server, 'POST', '/v1/events', { key: brokenKey, body: minimalEvent() })).status, 200);
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  db.pragma('busy_timeout = 5000');
  db.prepare("UPDATE rulesets SET policy = '{\"review_threshold\": \"forty\"}' WHERE project_id = ?").run(project.project_id);
  db.close();
  // The server notices changed rulesets at its next poll: events are scored until then.
  let event = minimalEvent();
  const response = await waitFor(async () => {
    event = minimalEvent();
    const answer = await api(server, 'POST', '/v1/events', { key: brokenKey, body: event });
    return answer.status === 200 ? null : answer;
  }, 'the corrupt policy to be noticed');
  t.is(response.status, 503);
  t.is(response.body.errors[0]?.code, 'PROJECT_POLICY_UNAVAILABLE');
  t.is(storedRows(event.event_id as string), 0);
});

test('a ruleset whose compiled source does not load is 503 COMPILED_RULES_UNAVAILABLE', async (t) => {
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'garbled', '--json'])).stdout);
  const garbledKey = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  db.pragma('busy_timeout = 5000');
  db.prepare("UPDATE rulesets SET source = 'this is not javascript (' WHERE project_id = ?").run(project.project_id);
  db.close();
  const event = minimalEvent();
  const response = await api(server, 'POST', '/v1/events', { key: garbledKey, body: event });
  t.is(response.status, 503);
  t.is(response.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  t.is(storedRows(event.event_id as string), 0);
});

// Numbers JSON can write but a double cannot hold (issue 12): 1e400 parses as Infinity and would be
// stored as written but compared as null, so `extras.n: 1e400` and `extras.n: null` were one body.
const kHugeNumbers: Array<[string, string, string]> = [
  ['extras.n: 1e400', '"extras": {"n": 1e400}', 'extras.n'],
  ['extras.n: -1e400', '"extras": {"n": -1e400}', 'extras.n'],
  ['a nested 1E+999', '"extras": {"a": {"b": [1, 2, 1E+999]}}', 'extras.a.b[2]'],
  ['an open member of 400 digits', `"user": {"score": ${'9'.repeat(400)}}`, 'user.score'],
  ['payment.amount_cents: 1e400', '"payment": {"amount_cents": 1e400}', 'payment.amount_cents'],
];

for (const [name, member, parameter] of kHugeNumbers) {
  test(`400 VALIDATION_ERROR: a number beyond a double, ${name}, and nothing stored`, async (t) => {
    const eventId = randomUUID();
    const response = await api(server, 'POST', '/v1/events', { key, rawBody: `{"event_id": "${eventId}", "event_type": "payment", ${member}}` });
    t.is(response.status, 400, response.text);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(response.body.errors[0]?.parameter, parameter);
    t.regex(response.body.errors[0]?.message ?? '', /outside the range of a double/);
    t.is(storedRows(eventId), 0);
  });
}

test('1e400 and null are different bodies: the null event is scored, the 1e400 one refused, nothing conflicts', async (t) => {
  const eventId = randomUUID();
  const withNull = await api(server, 'POST', '/v1/events', { key, rawBody: `{"event_id": "${eventId}", "event_type": "payment", "extras": {"n": null}}` });
  t.is(withNull.status, 200, withNull.text);
  const huge = await api(server, 'POST', '/v1/events', { key, rawBody: `{"event_id": "${eventId}", "event_type": "payment", "extras": {"n": 1e400}}` });
  t.is(huge.status, 400, huge.text);
  t.is(huge.body.errors[0]?.parameter, 'extras.n');
  // Large but finite numbers and exponents are fine.
  const big = await api(server, 'POST', '/v1/events', { key, rawBody: `{"event_id": "${randomUUID()}", "event_type": "payment", "extras": {"n": 1.7e308, "m": 1e-400, "s": "1e400"}}` });
  t.is(big.status, 200, big.text);
});

test('a declared member sent as null is absent, as if left out: scored as the body without it, stored without it, and one event with it for idempotency', async (t) => {
  const tag = randomUUID().slice(0, 8);
  const present = { external_account_id: `nulls-${tag}`, user: { name: 'Ann', nickname: null }, payment: { amount_cents: 5000, currency: 'EUR', card_token: `tok-${tag}` }, extras: { k: null } };
  const nulls = {
    ...present,
    brand_id: null,
    context: { ip: null, user_agent: null, fp_id: null, session_id: null, country: null, affiliate_id: null, session_anon: null },
    user: { ...present.user, email: null, phone: null, country: null, registered_at: null, email_hash: null, phone_hash: null, trusted: null, vip: null, is_known_fraud: null, chargeback_flag: null, name_blocked: null, sanctions_match: null },
    payment: { ...present.payment, method: null, bin: null, last4: null, billing_country: null },
  };
  const withNulls = minimalEvent(nulls);
  const sent = await api(server, 'POST', '/v1/events', { key, body: withNulls });
  t.is(sent.status, 200, sent.text);
  const twin = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ ...present, external_account_id: `twin-${tag}`, payment: { ...present.payment, card_token: `tok2-${tag}` } }) });
  t.is(twin.status, 200, twin.text);
  t.is(sent.body.data.decision, twin.body.data.decision);
  t.is(sent.body.data.risk_score, twin.body.data.risk_score);
  t.deepEqual(sent.body.data.breakdown.map((entry: { matched: boolean }) => entry.matched), twin.body.data.breakdown.map((entry: { matched: boolean }) => entry.matched));
  t.deepEqual(sent.body.data.degraded ?? [], []);
  // Stored without the declared nulls; an undeclared member's null is kept as sent.
  const stored = await api(server, 'GET', `/v1/events/${withNulls.event_id as string}`, { key });
  t.is(stored.status, 200, stored.text);
  t.deepEqual(stored.body.data.input.user, { name: 'Ann', nickname: null });
  t.deepEqual(stored.body.data.input.context, {});
  t.false('brand_id' in stored.body.data.input);
  t.deepEqual(stored.body.data.input.extras, { k: null });
  // The same event with the nulls left out, or sent again with them: one event, not 409.
  const { context: _context, brand_id: _brand, ...withoutNulls } = withNulls;
  for (const retry of [{ ...withoutNulls, user: present.user, payment: present.payment, context: {} }, withNulls]) {
    const again = await api(server, 'POST', '/v1/events', { key, body: retry });
    t.is(again.status, 200, again.text);
    t.is(again.body.data.risk_score, sent.body.data.risk_score);
  }
  t.is(storedEventCount(server.dataDir, withNulls.event_id as string), 1);
});

test('optional objects sent as null are absent; the required members are not optional: event_id or event_type null is 400 naming it', async (t) => {
  const event: Record<string, unknown> = { ...minimalEvent(), async: null, external_account_id: null, context: null, user: null, payment: null, extras: null };
  const sent = await api(server, 'POST', '/v1/events', { key, body: event });
  t.is(sent.status, 200, sent.text);
  const stored = await api(server, 'GET', `/v1/events/${String(event.event_id)}`, { key });
  t.deepEqual(Object.keys(stored.body.data.input).sort(), ['event_id', 'event_type']);
  for (const required of ['event_id', 'event_type']) {
    const refused = await api(server, 'POST', '/v1/events', { key, body: { ...minimalEvent(), [required]: null } });
    t.is(refused.status, 400, refused.text);
    t.is(refused.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(refused.body.errors[0]?.parameter, required);
  }
});
