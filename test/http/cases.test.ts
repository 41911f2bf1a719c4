// The review queue over real HTTP (interface: GET /v1/cases; DESIGN §4; issue 6 part 1).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { api, runCli, sleep, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';

let server: TestServer;
let key: string;
let project: string;

test.before(async () => {
  server = await startServer();
  key = server.bootstrap.keys.live_secret.key;
  project = server.bootstrap.live_project_id;
});

test.after.always(async () => {
  await server?.stop();
});

/** With the default preset: disposable email 15 + billing/IP country 15 + user/IP country 10 = 40, review. */
function reviewEvent(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return minimalEvent({
    user: { email: `someone.${randomUUID().slice(0, 6)}@mailinator.com`, country: 'FR' },
    context: { country: 'DE' },
    payment: { amount_cents: 1000, currency: 'EUR', billing_country: 'US' },
    ...fields,
  });
}

async function score(body: Record<string, unknown>, withKey = key): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key: withKey, body });
  if (response.status !== 200) throw new Error(response.text);
  return response.body.data;
}

async function listCases(query: string, withKey = key): Promise<any> {
  return api(server, 'GET', `/v1/cases?${query}`, { key: withKey });
}

async function caseOf(eventId: string): Promise<any> {
  const all = await listCases(`project_id=${project}&limit=100`);
  return all.body.data.cases.find((entry: { event_ids: string[] }) => entry.event_ids.includes(eventId));
}

test('a review opens a case for the account, and the account\'s next review joins it', async (t) => {
  const account = `rev-${randomUUID().slice(0, 8)}`;
  const first = await score(reviewEvent({ external_account_id: account }));
  t.is(first.decision, 'review');
  const opened = await caseOf(first.event_id);
  t.regex(opened.case_id, /^case_/);
  t.is(opened.project_id, project);
  t.is(opened.status, 'open');
  t.is(opened.resolution, null);
  t.is(opened.account_public_id, first.account_public_id);
  t.is(opened.external_account_id, account);
  t.is(opened.decision, 'review');
  t.is(opened.risk_score, first.risk_score);
  t.is(opened.assignee, null);
  t.deepEqual(opened.notes, []);
  const second = await score(reviewEvent({ external_account_id: account }));
  const joined = await caseOf(second.event_id);
  t.is(joined.case_id, opened.case_id);
  t.deepEqual(joined.event_ids, [first.event_id, second.event_id]);
});

test('a review without an account opens a case of its own; allow and block open none', async (t) => {
  const lone = await score(reviewEvent());
  const own = await caseOf(lone.event_id);
  t.is(own.account_public_id, null);
  t.deepEqual(own.event_ids, [lone.event_id]);
  const allowed = await score(minimalEvent());
  const blocked = await score(minimalEvent({ user: { is_known_fraud: true } }));
  t.is(allowed.decision, 'allow');
  t.is(blocked.decision, 'block');
  t.is(await caseOf(allowed.event_id), undefined);
  t.is(await caseOf(blocked.event_id), undefined);
});

const kBadQueries: Array<[string, string, number, string, string]> = [
  ['no project_id', 'status=open', 400, 'VALIDATION_ERROR', 'project_id'],
  ['an empty project_id', 'project_id=', 400, 'VALIDATION_ERROR', 'project_id'],
  ['another project', 'project_id=prj_someoneelse', 403, 'SCOPE_ERROR', 'project_id'],
  ['an unknown parameter', 'project_id=$P&colour=red', 400, 'VALIDATION_ERROR', 'colour'],
  ['a repeated parameter', 'project_id=$P&status=open&status=closed', 400, 'VALIDATION_ERROR', 'status'],
  ['a bad status', 'project_id=$P&status=pending', 400, 'VALIDATION_ERROR', 'status'],
  ['a bad created_after', 'project_id=$P&created_after=yesterday', 400, 'VALIDATION_ERROR', 'created_after'],
  ['a bad created_before', 'project_id=$P&created_before=2024-13-45', 400, 'VALIDATION_ERROR', 'created_before'],
  ['limit 0', 'project_id=$P&limit=0', 400, 'VALIDATION_ERROR', 'limit'],
  ['limit 101', 'project_id=$P&limit=101', 400, 'VALIDATION_ERROR', 'limit'],
  ['limit not a number', 'project_id=$P&limit=ten', 400, 'VALIDATION_ERROR', 'limit'],
  ['an unknown order', 'project_id=$P&order=riskiest', 400, 'VALIDATION_ERROR', 'order'],
  ['a bad updated_after', 'project_id=$P&updated_after=2026-11-29', 400, 'VALIDATION_ERROR', 'updated_after'],
  ['a negative min_risk_score', 'project_id=$P&min_risk_score=-1', 400, 'VALIDATION_ERROR', 'min_risk_score'],
  ['a fractional min_risk_score', 'project_id=$P&min_risk_score=40.5', 400, 'VALIDATION_ERROR', 'min_risk_score'],
  ['a min_risk_score of ten digits', 'project_id=$P&min_risk_score=1000000000', 400, 'VALIDATION_ERROR', 'min_risk_score'],
  ['an empty min_risk_score', 'project_id=$P&min_risk_score=', 400, 'VALIDATION_ERROR', 'min_risk_score'],
  ['an empty assignee', 'project_id=$P&assignee=', 400, 'VALIDATION_ERROR', 'assignee'],
  ['a blank assignee', 'project_id=$P&assignee=%20%20', 400, 'VALIDATION_ERROR', 'assignee'],
  ['a long assignee', `project_id=$P&assignee=${'a'.repeat(129)}`, 400, 'VALIDATION_ERROR', 'assignee'],
  ['assigned neither true nor false', 'project_id=$P&assigned=yes', 400, 'VALIDATION_ERROR', 'assigned'],
  ['a bad cursor', 'project_id=$P&cursor=not-a-cursor', 400, 'VALIDATION_ERROR', 'cursor'],
  ['a forged cursor', `project_id=$P&cursor=${Buffer.from('[1,"x; DROP TABLE cases"]').toString('base64url')}`, 400, 'VALIDATION_ERROR', 'cursor'],
];

for (const [name, query, status, code, parameter] of kBadQueries) {
  test(`GET /v1/cases with ${name}: ${status} ${code}`, async (t) => {
    const response = await listCases(query.replaceAll('$P', project));
    t.is(response.status, status, response.text);
    t.is(response.body.errors[0]?.code, code);
    t.is(response.body.errors[0]?.parameter, parameter);
    t.is(response.body.data, null);
  });
}

test('paging: a stable order, every case once, and the last page says so', async (t) => {
  // A project of its own, so that other tests' cases do not interleave.
  const own = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'paging', '--json'])).stdout);
  const ownKey = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', own.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const empty = await listCases(`project_id=${own.project_id}`, ownKey);
  t.deepEqual(empty.body.data, { cases: [], next_cursor: null });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await score(reviewEvent(), ownKey)).event_id);
    await sleep(2);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const response: any = await listCases(`project_id=${own.project_id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, ownKey);
    t.is(response.status, 200);
    for (const entry of response.body.data.cases) seen.push(entry.event_ids[0]);
    cursor = response.body.data.next_cursor;
    pages++;
  } while (cursor !== null && pages < 10);
  t.is(pages, 3);
  t.deepEqual(seen, [...ids].reverse(), 'newest first, each once');
  // A cursor belongs to its listing: not to another project's, not changed by a character.
  const second = (await listCases(`project_id=${own.project_id}&limit=2`, ownKey)).body.data.next_cursor as string;
  for (const [cursorText, withKey, projectId] of [[second, key, project], [`${second}A`, ownKey, own.project_id], [`A${second}`, ownKey, own.project_id]] as const) {
    const refused = await listCases(`project_id=${projectId}&cursor=${cursorText}`, withKey);
    t.is(refused.status, 400, cursorText);
    t.is(refused.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(refused.body.errors[0]?.parameter, 'cursor');
  }
  const exact = await listCases(`project_id=${own.project_id}&limit=5`, ownKey);
  t.is(exact.body.data.cases.length, 5);
  t.is(exact.body.data.next_cursor, null, 'a full last page has no next cursor');
});

test('order=oldest: pages in creation order, cases written and not written yet alike; a cursor belongs to its order', async (t) => {
  const own = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', 'oldest first', '--json'])).stdout);
  const ownKey = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', own.project_id, '--kind', 'secret', '--json'])).stdout).key;
  const cases: string[] = [];
  for (let i = 0; i < 5; i++) {
    const eventId = (await score(reviewEvent(), ownKey)).event_id;
    const listed = (await listCases(`project_id=${own.project_id}&limit=100`, ownKey)).body.data.cases;
    cases.push(listed.find((entry: { event_ids: string[] }) => entry.event_ids.includes(eventId)).case_id);
    await sleep(2);
  }
  // The second and fourth written by a change; the others wait in memory (DERIVED_FLUSH_MS).
  for (const caseId of [cases[1], cases[3]]) {
    t.is((await api(server, 'PATCH', `/v1/cases/${caseId}?project_id=${own.project_id}`, { key: ownKey, body: { note: 'seen' } })).status, 200);
  }
  const pagesOf = async (order: string): Promise<{ ids: string[]; cursors: string[] }> => {
    const ids: string[] = [];
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const response: any = await listCases(`project_id=${own.project_id}&limit=2${order}${cursor ? `&cursor=${cursor}` : ''}`, ownKey);
      t.is(response.status, 200, response.text);
      ids.push(...response.body.data.cases.map((entry: { case_id: string }) => entry.case_id));
      cursor = response.body.data.next_cursor;
      if (cursor !== null) cursors.push(cursor);
    } while (cursor !== null && cursors.length < 10);
    return { ids, cursors };
  };
  const oldest = await pagesOf('&order=oldest');
  t.deepEqual(oldest.ids, cases);
  t.is(oldest.cursors.length, 2);
  const newest = await pagesOf('&order=newest');
  t.deepEqual(newest.ids, [...cases].reverse());
  t.deepEqual((await pagesOf('')).ids, newest.ids, 'newest first by default');
  // A cursor of one order is refused in the other, not read as a position in it.
  for (const [cursor, order] of [[oldest.cursors[0], ''], [oldest.cursors[0], '&order=newest'], [newest.cursors[0], '&order=oldest']] as const) {
    const refused = await listCases(`project_id=${own.project_id}&cursor=${cursor}${order}`, ownKey);
    t.is(refused.status, 400, refused.text);
    t.is(refused.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(refused.body.errors[0]?.parameter, 'cursor');
  }
});

test('the account filter reads an erased account\'s acc_ id as that account, not as the external id of an account that reused it', async (t) => {
  const tag = randomUUID().slice(0, 8);
  const first = await score(reviewEvent({ external_account_id: `erased-${tag}` }));
  const reuser = await score(reviewEvent({ external_account_id: first.account_public_id }));
  t.is((await listCases(`project_id=${project}&account=${first.account_public_id}`)).body.data.cases.length, 1);
  const erased = await api(server, 'DELETE', `/v1/accounts/${first.account_public_id}`, { key });
  t.is(erased.status, 200, erased.text);
  const byErasedId = await listCases(`project_id=${project}&account=${first.account_public_id}`);
  t.is(byErasedId.status, 200, byErasedId.text);
  t.deepEqual(byErasedId.body.data.cases, [], 'the erased account has no cases, and the other account\'s are not its');
  const byReuser = await listCases(`project_id=${project}&account=${reuser.account_public_id}`);
  t.deepEqual(byReuser.body.data.cases.map((entry: { event_ids: string[] }) => entry.event_ids), [[reuser.event_id]]);
});

test('filters: status, account (acc_ or external id), created after and before', async (t) => {
  const account = `filter-${randomUUID().slice(0, 8)}`;
  const before = new Date(Date.now() - 1000).toISOString();
  const event = await score(reviewEvent({ external_account_id: account }));
  const after = new Date(Date.now() + 1000).toISOString();
  const byAccount = await listCases(`project_id=${project}&account=${account}`);
  t.deepEqual(byAccount.body.data.cases.map((entry: { event_ids: string[] }) => entry.event_ids), [[event.event_id]]);
  const byId = await listCases(`project_id=${project}&account=${event.account_public_id}`);
  t.is(byId.body.data.cases.length, 1);
  t.is((await listCases(`project_id=${project}&account=nobody-here`)).body.data.cases.length, 0);
  t.is((await listCases(`project_id=${project}&account=${account}&status=closed`)).body.data.cases.length, 0);
  t.is((await listCases(`project_id=${project}&account=${account}&status=open`)).body.data.cases.length, 1);
  t.is((await listCases(`project_id=${project}&account=${account}&created_after=${encodeURIComponent(before)}`)).body.data.cases.length, 1);
  t.is((await listCases(`project_id=${project}&account=${account}&created_after=${encodeURIComponent(after)}`)).body.data.cases.length, 0);
  t.is((await listCases(`project_id=${project}&account=${account}&created_before=${encodeURIComponent(before)}`)).body.data.cases.length, 0);
  // The case's own millisecond and an instant finer than it: before that instant, not after it.
  const createdAt = byAccount.body.data.cases[0].created_at as string;
  const finer = createdAt.replace(/Z$/, '5Z');
  t.is((await listCases(`project_id=${project}&account=${account}&created_before=${encodeURIComponent(finer)}`)).body.data.cases.length, 1);
  t.is((await listCases(`project_id=${project}&account=${account}&created_after=${encodeURIComponent(finer)}`)).body.data.cases.length, 0);
  t.is((await listCases(`project_id=${project}&account=${account}&created_before=${encodeURIComponent(createdAt)}`)).body.data.cases.length, 0);
  // An external id that starts with acc_ (and any characters, percent-encoded) is found as one.
  const lookalike = `acc_partner ${randomUUID().slice(0, 8)}/ü`;
  const lookalikeEvent = await score(reviewEvent({ external_account_id: lookalike }));
  const byLookalike = await listCases(`project_id=${project}&account=${encodeURIComponent(lookalike)}`);
  t.deepEqual(byLookalike.body.data.cases.map((entry: { event_ids: string[] }) => entry.event_ids), [[lookalikeEvent.event_id]]);
  t.is((await listCases(`project_id=${project}&account=${lookalikeEvent.account_public_id}`)).body.data.cases.length, 1);
});

test('filters: assignee, and assigned or not (a case just opened, not written yet, included)', async (t) => {
  const account = `queue-${randomUUID().slice(0, 8)}`;
  const analyst = `ana ${randomUUID().slice(0, 8)}@fraud-team`;
  const picked = await caseOf((await score(reviewEvent({ external_account_id: account }))).event_id);
  t.is((await api(server, 'PATCH', `/v1/cases/${picked.case_id}?project_id=${project}`, { key, body: { assignee: analyst } })).status, 200);
  const waiting = await score(reviewEvent({ external_account_id: `${account}-other` }));
  const ids = async (query: string): Promise<string[]> => (await listCases(`project_id=${project}&${query}`)).body.data.cases.map((entry: { case_id: string }) => entry.case_id);
  t.deepEqual(await ids(`assignee=${encodeURIComponent(analyst)}`), [picked.case_id]);
  t.deepEqual(await ids(`assignee=${encodeURIComponent(analyst.toUpperCase())}`), [], 'exactly as set');
  t.deepEqual(await ids(`account=${account}&assigned=true`), [picked.case_id]);
  t.deepEqual(await ids(`account=${account}&assigned=false`), []);
  const unassigned = await ids(`account=${account}-other&assigned=false`);
  t.deepEqual(unassigned, [(await caseOf(waiting.event_id)).case_id]);
  t.deepEqual(await ids(`account=${account}-other&assigned=true`), []);
  t.deepEqual(await ids(`account=${account}-other&assignee=${encodeURIComponent(analyst)}`), []);
  // Unassigned again: back in the queue nobody has picked up.
  await api(server, 'PATCH', `/v1/cases/${picked.case_id}?project_id=${project}`, { key, body: { assignee: null } });
  t.deepEqual(await ids(`account=${account}&assigned=false`), [picked.case_id]);
  t.deepEqual(await ids(`assignee=${encodeURIComponent(analyst)}`), []);
});

test('filter updated_after: the cases changed or joined by an event since, those whose events are not on their row yet included', async (t) => {
  const account = `poll-${randomUUID().slice(0, 8)}`;
  const first = await score(reviewEvent({ external_account_id: account }));
  const caseId = (await caseOf(first.event_id)).case_id;
  const path = `/v1/cases/${caseId}?project_id=${project}`;
  const ids = async (owner: string, after: string): Promise<string[]> =>
    (await listCases(`project_id=${project}&account=${owner}&updated_after=${encodeURIComponent(after)}`)).body.data.cases.map((entry: { case_id: string }) => entry.case_id);
  const justBefore = (time: string): string => new Date(Date.parse(time) - 1).toISOString();

  // A change writes the case's row, with the change's time.
  const noted = (await api(server, 'PATCH', path, { key, body: { note: 'Looking into it.' } })).body.data;
  t.deepEqual(await ids(account, justBefore(noted.updated_at)), [caseId]);
  t.deepEqual(await ids(account, noted.updated_at), [], 'after, not at');
  // An event joins: it waits in memory before the row is rewritten with it (CASE_EVENTS_WAIT_MS),
  // and the case is found by its time all the same.
  await waitFor(() => Date.now() > Date.parse(noted.updated_at), 'the clock to pass the change');
  const joined = await score(reviewEvent({ external_account_id: account }));
  const read = (await api(server, 'GET', path, { key })).body.data;
  t.deepEqual(read.event_ids, [first.event_id, joined.event_id]);
  t.true(Date.parse(read.updated_at) > Date.parse(noted.updated_at));
  t.deepEqual(await ids(account, noted.updated_at), [caseId]);
  t.deepEqual(await ids(account, read.updated_at), []);
  // A case just opened, its row not written yet: by the time of its event.
  const newcomer = `${account}-new`;
  const opened = await caseOf((await score(reviewEvent({ external_account_id: newcomer }))).event_id);
  t.deepEqual(await ids(newcomer, justBefore(opened.updated_at)), [opened.case_id]);
  t.deepEqual(await ids(newcomer, opened.updated_at), []);
});

test('filter min_risk_score: the highest score of a case\'s events, those not on its row yet included', async (t) => {
  const account = `risky-${randomUUID().slice(0, 8)}`;
  const first = await score(reviewEvent({ external_account_id: account }));
  t.is(first.risk_score, 40);
  const caseId = (await caseOf(first.event_id)).case_id;
  const path = `/v1/cases/${caseId}?project_id=${project}`;
  const ids = async (minimum: number, owner = account): Promise<string[]> =>
    (await listCases(`project_id=${project}&account=${owner}&min_risk_score=${minimum}`)).body.data.cases.map((entry: { case_id: string }) => entry.case_id);
  // Written by a change: its row says 40.
  t.is((await api(server, 'PATCH', path, { key, body: { note: 'Looking into it.' } })).status, 200);
  t.deepEqual(await ids(40), [caseId]);
  t.deepEqual(await ids(41), []);
  // A riskier event joins (an anonymous session adds 10, or more): it waits in memory before the
  // row is rewritten with it, and the case is found by its score all the same.
  const joined = await score(reviewEvent({ external_account_id: account, context: { country: 'DE', session_anon: true } }));
  t.is(joined.decision, 'review');
  t.true(joined.risk_score > 40, String(joined.risk_score));
  t.is((await api(server, 'GET', path, { key })).body.data.risk_score, joined.risk_score);
  t.deepEqual(await ids(joined.risk_score), [caseId]);
  t.deepEqual(await ids(joined.risk_score + 1), []);
  // A case just opened, its row not written yet: by its event's score.
  const newcomer = `${account}-new`;
  const opened = await caseOf((await score(reviewEvent({ external_account_id: newcomer }))).event_id);
  t.is(opened.risk_score, 40);
  t.deepEqual(await ids(40, newcomer), [opened.case_id]);
  t.deepEqual(await ids(41, newcomer), []);
  t.deepEqual(await ids(0, newcomer), [opened.case_id]);
});

test('GET /v1/cases/{case_id}: found, unknown, and project_id checked', async (t) => {
  const event = await score(reviewEvent());
  const found = await caseOf(event.event_id);
  const one = await api(server, 'GET', `/v1/cases/${found.case_id}?project_id=${project}`, { key });
  t.is(one.status, 200);
  t.deepEqual(one.body.data, found);
  const unknown = await api(server, 'GET', `/v1/cases/case_nothere?project_id=${project}`, { key });
  t.is(unknown.status, 404);
  t.is(unknown.body.errors[0]?.code, 'NOT_FOUND');
  t.is(unknown.body.errors[0]?.parameter, 'case_id');
  const missing = await api(server, 'GET', `/v1/cases/${found.case_id}`, { key });
  t.is(missing.status, 400);
  t.is(missing.body.errors[0]?.parameter, 'project_id');
  const sandbox = server.bootstrap;
  const other = await api(server, 'GET', `/v1/cases/${found.case_id}?project_id=${sandbox.sandbox_project_id}`, { key: sandbox.keys.sandbox_secret.key });
  t.is(other.status, 404, 'another project\'s case is not found through its own project id');
  const foreign = await api(server, 'GET', `/v1/cases/${found.case_id}?project_id=${project}`, { key: sandbox.keys.sandbox_secret.key });
  t.is(foreign.status, 403);
});

const kBadChanges: Array<[string, Record<string, unknown>, string]> = [
  ['an empty body', {}, 'body'],
  ['an unknown field', { priority: 'high' }, 'priority'],
  ['a bad status', { status: 'done' }, 'status'],
  ['a bad resolution', { resolution: 'maybe' }, 'resolution'],
  ['an empty assignee', { assignee: ' ' }, 'assignee'],
  ['a long assignee', { assignee: 'a'.repeat(129) }, 'assignee'],
  ['an assignee number', { assignee: 7 }, 'assignee'],
  ['an empty note', { note: '' }, 'note'],
  ['a long note', { note: 'n'.repeat(4001) }, 'note'],
  ['an open case with a resolution', { status: 'open', resolution: 'fraud' }, 'resolution'],
  ['an updated_at that is not a date-time', { note: 'x', updated_at: 'yesterday' }, 'updated_at'],
  ['an updated_at as epoch milliseconds', { note: 'x', updated_at: 1764374400000 }, 'updated_at'],
  ['an updated_at not in the calendar', { note: 'x', updated_at: '2026-02-30T00:00:00.000Z' }, 'updated_at'],
  ['an updated_at and nothing to change', { updated_at: '2026-11-29T00:00:00.000Z' }, 'body'],
];

for (const [name, body, parameter] of kBadChanges) {
  test(`PATCH with ${name}: 400 VALIDATION_ERROR, and the case unchanged`, async (t) => {
    const event = await score(reviewEvent());
    const before = await caseOf(event.event_id);
    const response = await api(server, 'PATCH', `/v1/cases/${before.case_id}?project_id=${project}`, { key, body });
    t.is(response.status, 400, response.text);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(response.body.errors[0]?.parameter, parameter);
    t.deepEqual(await caseOf(event.event_id), before);
  });
}

test('PATCH needs cases:write; an unknown case is 404', async (t) => {
  const event = await score(reviewEvent());
  const found = await caseOf(event.event_id);
  const reader = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'cases:read', '--json'])).stdout).key;
  t.is((await api(server, 'GET', `/v1/cases/${found.case_id}?project_id=${project}`, { key: reader })).status, 200);
  const refused = await api(server, 'PATCH', `/v1/cases/${found.case_id}?project_id=${project}`, { key: reader, body: { note: 'x' } });
  t.is(refused.status, 403);
  t.is(refused.body.errors[0]?.code, 'SCOPE_ERROR');
  const unknown = await api(server, 'PATCH', `/v1/cases/case_nothere?project_id=${project}`, { key, body: { note: 'x' } });
  t.is(unknown.status, 404);
  t.is(unknown.body.errors[0]?.parameter, 'case_id');
});

test('changes are recorded as notes with the author key and time; a fraud resolution marks the account', async (t) => {
  const account = `fraudster-${randomUUID().slice(0, 8)}`;
  const event = await score(reviewEvent({ external_account_id: account, context: { country: 'DE', fp_id: `fp_${account}` } }));
  const linked = await score(minimalEvent({ external_account_id: `${account}-friend`, context: { fp_id: `fp_${account}` } }));
  const found = await caseOf(event.event_id);
  const path = `/v1/cases/${found.case_id}?project_id=${project}`;
  const assigned = await api(server, 'PATCH', path, { key, body: { assignee: 'ana@fraud-team', note: 'Looks like a mule.' } });
  t.is(assigned.status, 200, assigned.text);
  t.is(assigned.body.data.assignee, 'ana@fraud-team');
  const resolved = await api(server, 'PATCH', path, { key, body: { resolution: 'fraud' } });
  t.is(resolved.body.data.status, 'closed');
  t.is(resolved.body.data.resolution, 'fraud');
  const notes = resolved.body.data.notes;
  t.deepEqual(notes.map((note: { kind: string; body: string }) => [note.kind, note.body]), [
    ['change', 'assignee: none → ana@fraud-team'],
    ['note', 'Looks like a mule.'],
    ['change', 'status: open → closed'],
    ['change', 'resolution: none → fraud'],
  ]);
  for (const note of notes) {
    t.is(note.author_key_id, server.bootstrap.keys.live_secret.key_id);
    t.false(Number.isNaN(Date.parse(note.created_at)));
  }
  // The account is confirmed fraud: the preset hard-blocks its next event...
  const next = await score(minimalEvent({ external_account_id: account }));
  t.is(next.decision, 'block');
  t.true(next.hard_block_hit);
  t.is(next.breakdown[0].rule_id, 'confirmed_fraud_account');
  // ...and an account linked to it counts a link to fraud.
  const friend = await score(minimalEvent({ external_account_id: `${account}-friend` }));
  t.true(friend.breakdown.find((entry: { rule_id: string }) => entry.rule_id === 'linked_to_fraud').matched);
  t.not(linked.account_public_id, next.account_public_id);

  // Reopening clears the resolution, recorded as changes; the account is no longer confirmed.
  const reopened = await api(server, 'PATCH', path, { key, body: { status: 'open' } });
  t.is(reopened.body.data.status, 'open');
  t.is(reopened.body.data.resolution, null);
  t.deepEqual(reopened.body.data.notes.slice(-2).map((note: { body: string }) => note.body), ['status: closed → open', 'resolution: fraud → none']);
  t.not((await score(minimalEvent({ external_account_id: account }))).decision, 'block');
});

test('a PATCH that sets what the case already is changes nothing: updated_at, notes and the audit trail stay as they were', async (t) => {
  const event = await score(reviewEvent());
  const found = await caseOf(event.event_id);
  const path = `/v1/cases/${found.case_id}?project_id=${project}`;
  const before = await api(server, 'GET', path, { key });
  const auditPath = `/v1/audit?target=${encodeURIComponent(`case:${found.case_id}`)}`;
  const auditBefore = (await api(server, 'GET', auditPath, { key })).body.data.records.length;
  for (const body of [{ assignee: null }, { status: 'open' }, { status: 'open', resolution: null, assignee: null }]) {
    const same = await api(server, 'PATCH', path, { key, body });
    t.is(same.status, 200, same.text);
    t.deepEqual(same.body.data, before.body.data, JSON.stringify(body));
  }
  t.is((await api(server, 'GET', auditPath, { key })).body.data.records.length, auditBefore);
  // A real change still moves both, even within the millisecond of the one before.
  const changed = await api(server, 'PATCH', path, { key, body: { assignee: 'bo@fraud-team' } });
  t.true(Date.parse(changed.body.data.updated_at) > Date.parse(before.body.data.updated_at));
  const again = await api(server, 'PATCH', path, { key, body: { assignee: 'cy@fraud-team' } });
  t.true(Date.parse(again.body.data.updated_at) > Date.parse(changed.body.data.updated_at));
  t.is((await api(server, 'GET', auditPath, { key })).body.data.records.length, auditBefore + 2);
});

test('PATCHes of one case sent together: each answer shows the case as its own change left it, not as later ones did', async (t) => {
  const event = await score(reviewEvent());
  const found = await caseOf(event.event_id);
  const path = `/v1/cases/${found.case_id}?project_id=${project}`;
  // Sent at once, so that the writer commits several in one group commit.
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => api(server, 'PATCH', path, { key, body: { assignee: `analyst-${i}`, note: `note ${i}` } })));
  answers.forEach((answer, i) => {
    t.is(answer.status, 200, answer.text);
    t.is(answer.body.data.assignee, `analyst-${i}`, `answer ${i}`);
    t.is(answer.body.data.notes.at(-1).body, `note ${i}`, `answer ${i}: its own note last`);
  });
  t.is(new Set(answers.map((answer) => answer.body.data.updated_at)).size, 12, 'each change its own updated_at');
  const last = answers.reduce((a, b) => (Date.parse(a.body.data.updated_at) > Date.parse(b.body.data.updated_at) ? a : b));
  t.deepEqual((await api(server, 'GET', path, { key })).body.data, last.body.data, 'the case is what the last change left');
});

test('the audit trail of a case change counts the labels its resolution gave and those a reopen took back', async (t) => {
  const event = await score(reviewEvent({ external_account_id: `audit-${randomUUID().slice(0, 8)}` }));
  const found = await caseOf(event.event_id);
  const path = `/v1/cases/${found.case_id}?project_id=${project}`;
  const auditPath = `/v1/audit?target=${encodeURIComponent(`case:${found.case_id}`)}`;
  t.is((await api(server, 'PATCH', path, { key, body: { resolution: 'fraud' } })).status, 200);
  t.like((await api(server, 'GET', auditPath, { key })).body.data.records[0].summary, { resolution: [null, 'fraud'], events_labelled: 1 });
  t.like((await api(server, 'GET', `/v1/events/${event.event_id}`, { key })).body.data.label, { label: 'fraud', source: `case:${found.case_id}` });
  t.is((await api(server, 'PATCH', path, { key, body: { status: 'open' } })).status, 200);
  const reopened = (await api(server, 'GET', auditPath, { key })).body.data.records[0].summary;
  t.like(reopened, { status: ['closed', 'open'], resolution: ['fraud', null], events_labelled: 0, events_unlabelled: 1 });
  t.is((await api(server, 'GET', `/v1/events/${event.event_id}`, { key })).body.data.label, null, 'the label went with the resolution');
});

test('a PATCH with the updated_at it read changes the case only if nothing changed it since: not another analyst, not an event that joined', async (t) => {
  const account = `contested-${randomUUID().slice(0, 8)}`;
  const event = await score(reviewEvent({ external_account_id: account }));
  const path = `/v1/cases/${(await caseOf(event.event_id)).case_id}?project_id=${project}`;
  const auditPath = `/v1/audit?target=${encodeURIComponent(`case:${(await caseOf(event.event_id)).case_id}`)}`;
  const read = (await api(server, 'GET', path, { key })).body.data;

  // Two analysts read the same case; the first one's change lands.
  const first = await api(server, 'PATCH', path, { key, body: { assignee: 'ana@fraud-team', updated_at: read.updated_at } });
  t.is(first.status, 200, first.text);
  t.is(first.body.data.assignee, 'ana@fraud-team');
  const afterFirst = (await api(server, 'GET', path, { key })).body.data;
  const auditAfterFirst = (await api(server, 'GET', auditPath, { key })).body.data.records.length;

  // The second one's, made on what it read before, is refused, and changes nothing: not the
  // resolution, not the labels, not the notes, not the audit trail — even a change to what the case
  // already is.
  for (const body of [{ resolution: 'legitimate', note: 'Fine.' }, { assignee: 'ana@fraud-team' }]) {
    const stale = await api(server, 'PATCH', path, { key, body: { ...body, updated_at: read.updated_at } });
    t.is(stale.status, 400, stale.text);
    t.is(stale.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(stale.body.errors[0]?.parameter, 'updated_at');
    t.true(stale.body.errors[0]?.message.includes(afterFirst.updated_at), stale.body.errors[0]?.message);
  }
  // The instant read, with a digit below the millisecond: another instant, refused as well.
  const finer = await api(server, 'PATCH', path, { key, body: { note: 'Finer.', updated_at: afterFirst.updated_at.replace('Z', '1Z') } });
  t.is(finer.status, 400, finer.text);
  t.like(finer.body.errors[0], { code: 'VALIDATION_ERROR', parameter: 'updated_at' });
  // Its digits below the millisecond all zero: the same instant, in another form.
  const zeros = await api(server, 'PATCH', path, { key, body: { assignee: 'ana@fraud-team', updated_at: afterFirst.updated_at.replace('Z', '000Z') } });
  t.is(zeros.status, 200, zeros.text);
  t.deepEqual((await api(server, 'GET', path, { key })).body.data, afterFirst);
  t.is((await api(server, 'GET', `/v1/events/${event.event_id}`, { key })).body.data.label, null);
  t.is((await api(server, 'GET', auditPath, { key })).body.data.records.length, auditAfterFirst);

  // An event that joined the case after the read moves updated_at too: resolving the case on a
  // read that did not show it is refused. (updated_at counts milliseconds: the event is sent once
  // the clock is past the change.)
  await waitFor(() => Date.now() > Date.parse(afterFirst.updated_at), 'the clock to pass the first change');
  const joined = await score(reviewEvent({ external_account_id: account }));
  const withEvent = (await api(server, 'GET', path, { key })).body.data;
  t.deepEqual(withEvent.event_ids, [event.event_id, joined.event_id]);
  const blind = await api(server, 'PATCH', path, { key, body: { resolution: 'legitimate', updated_at: afterFirst.updated_at } });
  t.is(blind.status, 400, blind.text);
  t.is(blind.body.errors[0]?.parameter, 'updated_at');
  t.is((await api(server, 'GET', path, { key })).body.data.status, 'open');

  // Read again, the change lands; one without updated_at is applied as before, whatever changed.
  const resolved = await api(server, 'PATCH', path, { key, body: { resolution: 'legitimate', updated_at: withEvent.updated_at } });
  t.is(resolved.status, 200, resolved.text);
  t.is(resolved.body.data.resolution, 'legitimate');
  const unconditional = await api(server, 'PATCH', path, { key, body: { note: 'Checked with the bank.' } });
  t.is(unconditional.status, 200, unconditional.text);
});

test('a closed case cannot be reopened while the account has another open case', async (t) => {
  const account = `twice-${randomUUID().slice(0, 8)}`;
  const first = await score(reviewEvent({ external_account_id: account }));
  const firstCase = await caseOf(first.event_id);
  await api(server, 'PATCH', `/v1/cases/${firstCase.case_id}?project_id=${project}`, { key, body: { resolution: 'legitimate' } });
  const second = await score(reviewEvent({ external_account_id: account }));
  const secondCase = await caseOf(second.event_id);
  t.not(secondCase.case_id, firstCase.case_id, 'a closed case is not extended');
  const reopen = await api(server, 'PATCH', `/v1/cases/${firstCase.case_id}?project_id=${project}`, { key, body: { status: 'open', resolution: null } });
  t.is(reopen.status, 400);
  t.is(reopen.body.errors[0]?.parameter, 'status');
  t.is((await caseOf(first.event_id)).status, 'closed');
});
