// Query strings over real HTTP, one conformance table for every keyed route: a parameter the route
// does not know, or one given twice, is 400 VALIDATION_ERROR with `parameter` naming it, before
// the route reads or changes anything (src/shared/query.ts). The keyless routes and the browser's
// POST /v1/fp/collect ignore the query (cache busters, probes: docs/fingerprint.md,
// docs/operations.md). The events, scores, accounts and redeliver routes ignored it before.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { minimalEvent } from '../_helpers/events.js';
import { components } from '../_helpers/fingerprint.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

/** The file's server, with its live secret key (every scope). */
const file = { server: null as unknown as TestServer, key: '' };
/** A scored event of an account, read by the routes below (none of them may change it). */
let eventId: string;
let account: string;

test.before(async () => {
  file.server = await startServer();
  file.key = file.server.bootstrap.keys.live_secret.key;
  account = `query-${randomUUID().slice(0, 8)}`;
  const scored = await api(file.server, 'POST', '/v1/events', { key: file.key, body: minimalEvent({ external_account_id: account, user: { email: `${account}@example.com` } }) });
  if (scored.status !== 200) throw new Error(`event refused: ${scored.text}`);
  eventId = scored.body.data.event_id;
});

test.after.always(async () => {
  await file.server?.stop();
});

interface Refusal {
  readonly method: string;
  /** The path with its query; `{event}`, `{account}` and `{project}` are filled in at run time. */
  readonly path: string;
  readonly parameter: string;
  readonly body?: unknown;
}

function fill(path: string): string {
  return path.replaceAll('{event}', eventId).replaceAll('{account}', account).replaceAll('{project}', file.server.bootstrap.live_project_id);
}

const refused = test.macro({
  async exec(t: ExecutionContext, refusal: Refusal) {
    const response = await api(file.server, refusal.method, fill(refusal.path), { key: file.key, body: refusal.body });
    t.is(response.status, 400, response.text);
    t.is(response.body.status, 0);
    t.is(response.body.data, null);
    t.is(response.body.errors.length, 1);
    t.is(response.body.errors[0]!.code, 'VALIDATION_ERROR');
    t.is(response.body.errors[0]!.parameter, refusal.parameter);
  },
  title: (_title, refusal: Refusal) => `${refusal.method} ${refusal.path} → 400 on ${refusal.parameter}`,
});

// ---- Routes that ignored the query until now ----------------------------------------------------
test(refused, { method: 'POST', path: '/v1/events?async=true', body: minimalEvent(), parameter: 'async' });
test(refused, { method: 'GET', path: '/v1/scores/{event}?fields=decision', parameter: 'fields' });
test(refused, { method: 'GET', path: '/v1/scores/{event}?fields=a&fields=b', parameter: 'fields' });
test(refused, { method: 'GET', path: '/v1/accounts/{account}/links?since=2024-01-01', parameter: 'since' });
test(refused, { method: 'GET', path: '/v1/accounts/{account}/links?signal_type=email&signal_type=ip_24h', parameter: 'signal_type' });
test(refused, { method: 'DELETE', path: '/v1/accounts/{account}?across_project=true', parameter: 'across_project' });
test(refused, { method: 'DELETE', path: '/v1/accounts/{account}?across_projects=false&reason=gdpr', parameter: 'reason' });
test(refused, { method: 'DELETE', path: '/v1/accounts/{account}?across_projects=true', parameter: 'across_projects' });
test(refused, { method: 'POST', path: '/v1/webhooks/deliveries/msg_unknown/redeliver?now=1', parameter: 'now' });

// ---- Routes that refused it already: the same answer everywhere ---------------------------------
test(refused, { method: 'GET', path: '/v1/events/{event}?include=input', parameter: 'include' });
test(refused, { method: 'PUT', path: '/v1/events/{event}/label?force=true', body: { label: 'fraud', reason: 'other' }, parameter: 'force' });
test(refused, { method: 'DELETE', path: '/v1/events/{event}/label?force=true', parameter: 'force' });
test(refused, { method: 'GET', path: '/v1/cases?project_id={project}&sort=asc', parameter: 'sort' });
test(refused, { method: 'GET', path: '/v1/cases/case_unknown?project_id={project}&bogus=1', parameter: 'bogus' });
test(refused, { method: 'PATCH', path: '/v1/cases/case_unknown?project_id={project}&bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/rules?bogus=1', parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/rules?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/rules/known_fraudster?bogus=1', parameter: 'bogus' });
test(refused, { method: 'PUT', path: '/v1/rules/known_fraudster?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/rules/known_fraudster/stats?bogus=1', parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/rules/publish?bogus=1', parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/rules/backtests?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/rules/backtests/bt_00000000000000000000?bogus=1', parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/policy?bogus=1', parameter: 'bogus' });
test(refused, { method: 'PUT', path: '/v1/policy?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/rulesets?bogus=1', parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/rulesets/1?bogus=1', parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/rulesets/1/restore?bogus=1', parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/lists?bogus=1', parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/lists?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/lists/no_such_list?bogus=1', parameter: 'bogus' });
test(refused, { method: 'DELETE', path: '/v1/lists/no_such_list?bogus=1', parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/lists/no_such_list/items?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'POST', path: '/v1/lists/no_such_list/remove?bogus=1', body: {}, parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/audit?bogus=1', parameter: 'bogus' });
test(refused, { method: 'GET', path: '/v1/webhooks/deliveries?bogus=1', parameter: 'bogus' });

// ---- A known parameter given twice: refused on every route that has one -------------------------
test(refused, { method: 'DELETE', path: '/v1/accounts/{account}?across_projects=false&across_projects=false', parameter: 'across_projects' });
test(refused, { method: 'GET', path: '/v1/cases?project_id={project}&limit=1&limit=2', parameter: 'limit' });
test(refused, { method: 'GET', path: '/v1/cases/case_unknown?project_id={project}&project_id={project}', parameter: 'project_id' });
test(refused, { method: 'GET', path: '/v1/rules/known_fraudster?history=true&history=true', parameter: 'history' });
test(refused, { method: 'GET', path: '/v1/rules/known_fraudster/stats?from=2026-01-01&from=2026-01-02', parameter: 'from' });
test(refused, { method: 'GET', path: '/v1/rulesets?limit=1&limit=2', parameter: 'limit' });
test(refused, { method: 'GET', path: '/v1/lists/no_such_list?limit=1&limit=2', parameter: 'limit' });
test(refused, { method: 'GET', path: '/v1/audit?limit=1&limit=2', parameter: 'limit' });
test(refused, { method: 'GET', path: '/v1/webhooks/deliveries?limit=1&limit=2', parameter: 'limit' });

// ---- A malformed percent escape: refused naming its parameter, not read as other text -------------
test(refused, { method: 'GET', path: '/v1/cases?project_id={project}&assignee=%ZZ', parameter: 'assignee' });
test(refused, { method: 'GET', path: '/v1/cases?project_id={project}&account=%C3', parameter: 'account' });
test(refused, { method: 'GET', path: '/v1/audit?actor=key_%', parameter: 'actor' });
test(refused, { method: 'GET', path: '/v1/webhooks/deliveries?st%ZZatus=failed', parameter: 'query' });
test(refused, { method: 'GET', path: '/v1/audit?=%ZZ', parameter: 'query' });
test(refused, { method: 'GET', path: '/v1/audit?=1', parameter: 'query' });
test(refused, { method: 'POST', path: '/v1/events?x=%E2%82', body: minimalEvent(), parameter: 'x' });
test(refused, { method: 'DELETE', path: '/v1/accounts/{account}?across_projects=%FF', parameter: 'across_projects' });

test('well-formed escapes, in UTF-8, are read as what they write', async (t) => {
  const assignee = 'zoë@fraud-team';
  const response = await api(file.server, 'GET', `/v1/cases?project_id=${file.server.bootstrap.live_project_id}&assignee=${encodeURIComponent(assignee)}`, { key: file.key });
  t.is(response.status, 200, response.text);
  t.deepEqual(response.body.data.cases, []);
});

// ---- What a refusal leaves -----------------------------------------------------------------------
test('POST /v1/events?async=true stores nothing; a bare "?" is no parameter', async (t) => {
  const body = minimalEvent();
  const refusal = await api(file.server, 'POST', '/v1/events?async=true', { key: file.key, body });
  t.is(refusal.status, 400, refusal.text);
  t.is(refusal.body.errors[0]!.parameter, 'async');
  t.is((await api(file.server, 'GET', `/v1/scores/${body.event_id}`, { key: file.key })).status, 404, 'the refused event was not stored');
  const scored = await api(file.server, 'POST', '/v1/events?', { key: file.key, body });
  t.is(scored.status, 200, scored.text);
  t.is((await api(file.server, 'GET', `/v1/scores/${body.event_id}?`, { key: file.key })).status, 200);
});

test('a refused DELETE /v1/accounts/{id} erases nothing; the links and the score still read without a query', async (t) => {
  const target = `erase-${randomUUID().slice(0, 8)}`;
  const scored = await api(file.server, 'POST', '/v1/events', { key: file.key, body: minimalEvent({ external_account_id: target }) });
  t.is(scored.status, 200, scored.text);
  for (const query of ['?across_project=true', '?reason=gdpr', '?across_projects=true&dry_run=true']) {
    const refusal = await api(file.server, 'DELETE', `/v1/accounts/${target}${query}`, { key: file.key });
    t.is(refusal.status, 400, `${query}: ${refusal.text}`);
    t.is(refusal.body.errors[0]!.code, 'VALIDATION_ERROR');
  }
  const links = await api(file.server, 'GET', `/v1/accounts/${target}/links`, { key: file.key });
  t.is(links.status, 200, links.text);
  t.is(links.body.data.account_public_id, scored.body.data.account_public_id, 'the account is still there');
  t.is((await api(file.server, 'GET', `/v1/scores/${scored.body.data.event_id}`, { key: file.key })).status, 200);
});

test('a refused PUT /v1/events/{event_id}/label records no label', async (t) => {
  await api(file.server, 'PUT', `/v1/events/${eventId}/label?force=true`, { key: file.key, body: { label: 'fraud', reason: 'other' } });
  const event = await api(file.server, 'GET', `/v1/events/${eventId}`, { key: file.key });
  t.is(event.status, 200, event.text);
  t.is(event.body.data.label, null);
});

// ---- The routes that ignore the query (documented) -----------------------------------------------
test('GET /v1/fp/agent.js, /healthz and /metrics ignore the query (cache busters, probes)', async (t) => {
  for (const path of ['/v1/fp/agent.js?v=3', '/v1/fp/agent.js?v=3&v=4', '/healthz?probe=lb', '/metrics?name[]=up', '/healthz?x=%ZZ']) {
    t.is((await api(file.server, 'GET', path)).status, 200, path);
  }
});

test('POST /v1/fp/collect ignores the query: the page that calls it may not control the URL', async (t) => {
  const response = await api(file.server, 'POST', '/v1/fp/collect?_=1700000000000&ref=%ZZ', {
    key: file.server.bootstrap.keys.live_publishable.key,
    body: { components: components() },
    headers: { origin: 'https://shop.example' },
  });
  t.is(response.status, 200, response.text);
  t.regex(response.body.data.fp_id, /^fp_/);
});
