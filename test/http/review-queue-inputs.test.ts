// Inputs of the review queue's routes over real HTTP (docs/cases.md, docs/events.md "Labels",
// docs/audit.md): lengths are counted in characters, as the documents say (an emoji is one, not
// the two UTF-16 units String.length counts), and a time filter is a date of the calendar
// (2026-02-30 is refused, not read as March 2). Each refusal names its parameter and stores nothing.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { minimalEvent } from '../_helpers/events.js';
import { api, serverForFile, type ApiResponse } from '../_helpers/server.js';

const file = serverForFile(test);

/** With the default preset: disposable email 15 + billing/IP country 15 + user/IP country 10 = 40, review. */
function reviewEvent(account: string): Record<string, unknown> {
  return minimalEvent({
    external_account_id: account,
    user: { email: `someone.${randomUUID().slice(0, 6)}@mailinator.com`, country: 'FR' },
    context: { country: 'DE' },
    payment: { amount_cents: 1000, currency: 'EUR', billing_country: 'US' },
  });
}

function refusal(t: import('ava').ExecutionContext, response: ApiResponse, status: number, code: string, parameter: string): void {
  t.is(response.status, status, response.text);
  t.is(response.body.errors[0]?.code, code, response.text);
  t.is(response.body.errors[0]?.parameter, parameter, response.text);
}

async function openCase(): Promise<{ caseId: string; eventId: string; project: string }> {
  const project = file.server.bootstrap.live_project_id;
  const account = `chars-${randomUUID().slice(0, 8)}`;
  const scored = await api(file.server, 'POST', '/v1/events', { key: file.key, body: reviewEvent(account) });
  if (scored.status !== 200 || scored.body.data.decision !== 'review') throw new Error(scored.text);
  const listed = await api(file.server, 'GET', `/v1/cases?project_id=${project}&account=${account}`, { key: file.key });
  return { caseId: listed.body.data.cases[0].case_id, eventId: scored.body.data.event_id, project };
}

/** The trail's length; the tests that compare it run serially, so no other test adds to it meanwhile. */
async function auditCount(): Promise<number> {
  const response = await api(file.server, 'GET', '/v1/audit?limit=100', { key: file.key });
  return response.body.data.records.length;
}

// 😀 is one character and two UTF-16 units.
const kEmoji = '\u{1F600}';

test.serial('a case note and an assignee are counted in characters: at the limit taken, past it refused', async (t) => {
  const { caseId, project } = await openCase();
  const path = `/v1/cases/${caseId}?project_id=${project}`;
  const note = kEmoji.repeat(4000);
  const assignee = kEmoji.repeat(128);
  const changed = await api(file.server, 'PATCH', path, { key: file.key, body: { note, assignee } });
  t.is(changed.status, 200, changed.text.slice(0, 300));
  t.is(changed.body.data.assignee, assignee);
  t.is(changed.body.data.notes.at(-1).body, note);

  const before = await api(file.server, 'GET', path, { key: file.key });
  const records = await auditCount();
  refusal(t, await api(file.server, 'PATCH', path, { key: file.key, body: { note: kEmoji.repeat(4001) } }), 400, 'VALIDATION_ERROR', 'note');
  refusal(t, await api(file.server, 'PATCH', path, { key: file.key, body: { assignee: kEmoji.repeat(129) } }), 400, 'VALIDATION_ERROR', 'assignee');
  // Only white space is no note nor assignee, and the refusal says so.
  for (const body of [{ note: ' \n ' }, { note: '\u0085' }, { assignee: '   ' }, { assignee: '\u0085\u2028' }, { note: null }]) {
    const blank = await api(file.server, 'PATCH', path, { key: file.key, body });
    refusal(t, blank, 400, 'VALIDATION_ERROR', Object.keys(body)[0]!);
    if (!('note' in body && body.note === null)) t.regex(blank.body.errors[0].message, /not only white space/);
  }
  t.deepEqual((await api(file.server, 'GET', path, { key: file.key })).body.data, before.body.data);
  t.is(await auditCount(), records);
});

test.serial('a label note is counted in characters: at the limit taken, past it refused', async (t) => {
  const { eventId } = await openCase();
  const path = `/v1/events/${eventId}/label`;
  const note = kEmoji.repeat(4000);
  const labelled = await api(file.server, 'PUT', path, { key: file.key, body: { label: 'fraud', reason: 'chargeback', note } });
  t.is(labelled.status, 200, labelled.text.slice(0, 300));
  t.is(labelled.body.data.note, note);

  const before = await api(file.server, 'GET', `/v1/events/${eventId}`, { key: file.key });
  const records = await auditCount();
  refusal(t, await api(file.server, 'PUT', path, { key: file.key, body: { label: 'legitimate', reason: 'other', note: kEmoji.repeat(4001) } }), 400, 'VALIDATION_ERROR', 'note');
  t.deepEqual((await api(file.server, 'GET', `/v1/events/${eventId}`, { key: file.key })).body.data.label, before.body.data.label);
  t.is(await auditCount(), records);
});

const kNotInCalendar = ['2026-02-30T00:00:00Z', '2026-04-31T12:00:00Z', '2026-11-27T24:00:00Z', '2026-11-27T10:00:00+02:60'];

test('the time filters of GET /v1/cases refuse a date-time that is not in the calendar', async (t) => {
  const project = file.server.bootstrap.live_project_id;
  for (const name of ['created_after', 'created_before']) {
    for (const time of kNotInCalendar) {
      refusal(t, await api(file.server, 'GET', `/v1/cases?project_id=${project}&${name}=${encodeURIComponent(time)}`, { key: file.key }), 400, 'VALIDATION_ERROR', name);
    }
    const leap = await api(file.server, 'GET', `/v1/cases?project_id=${project}&${name}=${encodeURIComponent('2028-02-29T23:59:59.5+14:00')}`, { key: file.key });
    t.is(leap.status, 200, leap.text);
  }
});

test('the time filters of GET /v1/audit refuse a date-time that is not in the calendar', async (t) => {
  for (const name of ['created_after', 'created_before']) {
    for (const time of kNotInCalendar) {
      refusal(t, await api(file.server, 'GET', `/v1/audit?${name}=${encodeURIComponent(time)}`, { key: file.key }), 400, 'VALIDATION_ERROR', name);
    }
    const leap = await api(file.server, 'GET', `/v1/audit?${name}=${encodeURIComponent('2028-02-29T23:59:59.5+14:00')}`, { key: file.key });
    t.is(leap.status, 200, leap.text);
  }
});
