// Labels and the event behind a case over real HTTP (DESIGN §8, docs/events.md): PUT and DELETE
// /v1/events/{event_id}/label and GET /v1/events/{event_id}, their refusals (status, code,
// parameter, nothing stored), labels from resolved cases, account.labelled_fraud in rules, and
// stored results that labels never change.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore } from '../_helpers/rules.js';
import { api, serverForFile, startServer, waitFor, type ApiResponse } from '../_helpers/server.js';
import { heldAt, release } from '../_helpers/faults.js';

const file = serverForFile(test);

function refusal(t: import('ava').ExecutionContext, response: ApiResponse, status: number, code: string, parameter: string): void {
  t.is(response.status, status, response.text);
  t.is(response.body.errors[0]?.code, code, response.text);
  t.is(response.body.errors[0]?.parameter, parameter, response.text);
}

/** A project whose rules send `extras.risk == 'review'` to review and hard-block accounts with a fraud label. */
async function project(): Promise<{ projectId: string; key: string }> {
  const created = await newProject(file.server, 'none');
  await createRule(file.server, created.key, { rule_id: 'risky', kind: 'scoring', status: 'active', score_delta: 50, expression: "extras.risk == 'review'" });
  await createRule(file.server, created.key, { rule_id: 'labelled_before', kind: 'hard_block', status: 'active', expression: 'account.labelled_fraud >= 2' });
  await publish(file.server, created.key);
  return created;
}

async function post(key: string, fields: Record<string, unknown>): Promise<any> {
  const response = await api(file.server, 'POST', '/v1/events', { key, body: minimalEvent(fields) });
  if (response.status !== 200) throw new Error(`not scored: ${response.text}`);
  return response.body.data;
}

function labelsState(projectId: string): unknown {
  return readStore(file.server, (db) => ({
    labels: db.prepare('SELECT * FROM event_labels WHERE project_id = ? ORDER BY event_id').all(projectId),
    audit: db.prepare('SELECT count(*) AS n FROM audit_log WHERE project_id = ?').get(projectId),
  }));
}

test('label an event; GET /v1/events shows its input, result, label, account and case; the stored result never changes', async (t) => {
  const { key, projectId } = await project();
  const account = `user-${randomUUID().slice(0, 8)}`;
  const scored = await post(key, { external_account_id: account, user: { email: 'ann@example.com' }, extras: { risk: 'review' } });
  t.is(scored.decision, 'review');
  const before = await api(file.server, 'GET', `/v1/scores/${scored.event_id}`, { key });

  const shown = await api(file.server, 'GET', `/v1/events/${scored.event_id.toUpperCase()}`, { key });
  t.is(shown.status, 200, shown.text);
  const event = shown.body.data;
  t.like(event, { event_id: scored.event_id, event_type: 'payment', state: 'scored', account_public_id: scored.account_public_id, external_account_id: account, label: null });
  t.deepEqual(event.input.user, { email: 'ann@example.com' });
  t.is(event.input.external_account_id, account);
  t.deepEqual(event.result, before.body.data, 'the result as GET /v1/scores gives it');
  t.is(event.case_ids.length, 1);
  t.regex(event.case_ids[0], /^case_/);

  const labelled = await api(file.server, 'PUT', `/v1/events/${scored.event_id}/label`, { key, body: { label: 'fraud', reason: 'chargeback', note: 'Issuer chargeback 4837' } });
  t.is(labelled.status, 200, labelled.text);
  t.like(labelled.body.data, { event_id: scored.event_id, label: 'fraud', reason: 'chargeback', note: 'Issuer chargeback 4837', source: 'api' });
  t.regex(labelled.body.data.labelled_by, /^key_/);
  const relabelled = await api(file.server, 'PUT', `/v1/events/${scored.event_id}/label`, { key, body: { label: 'legitimate', reason: 'customer_report' } });
  t.like(relabelled.body.data, { label: 'legitimate', reason: 'customer_report', note: null });
  // The same PUT again (a retry): the label as it was, its time included, and no new audit record.
  const stored = labelsState(projectId);
  const retried = await api(file.server, 'PUT', `/v1/events/${scored.event_id}/label`, { key, body: { label: 'legitimate', reason: 'customer_report' } });
  t.is(retried.status, 200, retried.text);
  t.deepEqual(retried.body.data, relabelled.body.data);
  t.deepEqual(labelsState(projectId), stored);

  const after = await api(file.server, 'GET', `/v1/events/${scored.event_id}`, { key });
  t.like(after.body.data.label, { label: 'legitimate', reason: 'customer_report', source: 'api' });
  const scoreAfter = await api(file.server, 'GET', `/v1/scores/${scored.event_id}`, { key });
  t.is(scoreAfter.text, before.text, 'byte for byte');
});

test('refusals: scopes, body fields, unknown events and other projects; nothing stored', async (t) => {
  const { projectId, key } = await project();
  const scored = await post(key, {});
  const reader = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'cases:read'])).key;
  const backend = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'events:write,scores:read'])).key;
  const before = labelsState(projectId);
  const path = `/v1/events/${scored.event_id}/label`;
  const cases: Array<[unknown, string]> = [
    [{ reason: 'chargeback' }, 'label'],
    [{ label: 'fraudulent', reason: 'chargeback' }, 'label'],
    [{ label: 'fraud' }, 'reason'],
    [{ label: 'fraud', reason: 'because' }, 'reason'],
    [{ label: 'fraud', reason: 'other', note: '' }, 'note'],
    [{ label: 'fraud', reason: 'other', note: ' \n\t ' }, 'note'],
    [{ label: 'fraud', reason: 'other', note: '\u0085\u0085 ' }, 'note'],
    [{ label: 'fraud', reason: 'other', note: 'x'.repeat(4001) }, 'note'],
    [{ label: 'fraud', reason: 'other', note: 7 }, 'note'],
    [{ label: 'fraud', reason: 'other', source: 'api' }, 'source'],
  ];
  for (const [body, parameter] of cases) refusal(t, await api(file.server, 'PUT', path, { key, body }), 400, 'VALIDATION_ERROR', parameter);
  // The message says whether the member was missing or sent with a value that is not one of those allowed.
  t.is((await api(file.server, 'PUT', path, { key, body: { reason: 'other' } })).body.errors[0]?.message, 'label is required: fraud or legitimate.');
  t.is((await api(file.server, 'PUT', path, { key, body: { label: 'bogus', reason: 'other' } })).body.errors[0]?.message, 'label must be fraud or legitimate.');
  t.regex((await api(file.server, 'PUT', path, { key, body: { label: 'fraud', reason: 5 } })).body.errors[0]?.message ?? '', /^reason must be one of chargeback, /);
  refusal(t, await api(file.server, 'PUT', `${path}?force=1`, { key, body: { label: 'fraud', reason: 'other' } }), 400, 'VALIDATION_ERROR', 'force');
  refusal(t, await api(file.server, 'PUT', path, { key, rawBody: 'label=fraud', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400, 'VALIDATION_ERROR', 'Content-Type');
  refusal(t, await api(file.server, 'PUT', path, { key: reader, body: { label: 'fraud', reason: 'other' } }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'PUT', path, { key: backend, body: { label: 'fraud', reason: 'other' } }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'GET', `/v1/events/${scored.event_id}`, { key: backend }), 403, 'SCOPE_ERROR', '');
  t.is((await api(file.server, 'GET', `/v1/events/${scored.event_id}`, { key: reader })).status, 200);
  const unknown = randomUUID();
  refusal(t, await api(file.server, 'PUT', `/v1/events/${unknown}/label`, { key, body: { label: 'fraud', reason: 'other' } }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'GET', `/v1/events/${unknown}`, { key }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'GET', '/v1/events/not-a-uuid', { key }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'GET', `/v1/events/${scored.event_id}?x=1`, { key }), 400, 'VALIDATION_ERROR', 'x');
  // Another project's key, and the sandbox, do not see the event.
  refusal(t, await api(file.server, 'GET', `/v1/events/${scored.event_id}`, { key: file.key }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'PUT', path, { key: file.server.bootstrap.keys.sandbox_secret.key, body: { label: 'fraud', reason: 'other' } }), 404, 'NOT_FOUND', 'event_id');
  t.deepEqual(labelsState(projectId), before);
});

test('resolving a case labels its events (an API label stays); reopening takes the case\'s labels back', async (t) => {
  const { key, projectId } = await project();
  const account = `user-${randomUUID().slice(0, 8)}`;
  const first = await post(key, { external_account_id: account, extras: { risk: 'review' } });
  const second = await post(key, { external_account_id: account, extras: { risk: 'review' } });
  const third = await post(key, { external_account_id: account, extras: { risk: 'review' } });
  const caseId = (await api(file.server, 'GET', `/v1/events/${first.event_id}`, { key })).body.data.case_ids[0];
  await api(file.server, 'PUT', `/v1/events/${third.event_id}/label`, { key, body: { label: 'legitimate', reason: 'customer_report' } });

  const resolved = await api(file.server, 'PATCH', `/v1/cases/${caseId}?project_id=${projectId}`, { key, body: { resolution: 'fraud' } });
  t.is(resolved.status, 200, resolved.text);
  const labelOf = async (eventId: string): Promise<any> => (await api(file.server, 'GET', `/v1/events/${eventId}`, { key })).body.data.label;
  t.like(await labelOf(first.event_id), { label: 'fraud', reason: 'manual_review', source: `case:${caseId}` });
  t.like(await labelOf(second.event_id), { label: 'fraud', reason: 'manual_review', source: `case:${caseId}` });
  t.like(await labelOf(third.event_id), { label: 'legitimate', reason: 'customer_report', source: 'api' });

  // Two fraud labels on the account: the next event of it is hard-blocked by account.labelled_fraud.
  const next = await post(key, { external_account_id: account });
  t.is(next.decision, 'block');
  t.true(next.hard_block_hit);
  t.is(next.breakdown[0].rule_id, 'labelled_before');

  const reopened = await api(file.server, 'PATCH', `/v1/cases/${caseId}?project_id=${projectId}`, { key, body: { status: 'open' } });
  t.is(reopened.status, 200, reopened.text);
  t.is(await labelOf(first.event_id), null);
  t.is(await labelOf(second.event_id), null);
  t.like(await labelOf(third.event_id), { label: 'legitimate', source: 'api' });
  t.is((await post(key, { external_account_id: account })).decision, 'allow');
  // The case's events kept their results: labels never change them.
  t.is((await api(file.server, 'GET', `/v1/scores/${first.event_id}`, { key })).body.data.decision, 'review');
});

test('DELETE takes back a label set through the API: the account counts it no more, a retry changes nothing, a resolved case\'s label comes back', async (t) => {
  const { key, projectId } = await project();
  const account = `user-${randomUUID().slice(0, 8)}`;
  const reviewed = await post(key, { external_account_id: account, extras: { risk: 'review' } });
  const other = await post(key, { external_account_id: account });
  for (const event of [reviewed, other]) {
    t.is((await api(file.server, 'PUT', `/v1/events/${event.event_id}/label`, { key, body: { label: 'fraud', reason: 'chargeback' } })).status, 200);
  }
  t.is((await post(key, { external_account_id: account })).decision, 'block', 'two fraud labels: hard-blocked');

  const path = `/v1/events/${other.event_id}/label`;
  const removed = await api(file.server, 'DELETE', path, { key });
  t.is(removed.status, 200, removed.text);
  t.deepEqual(removed.body.data, { event_id: other.event_id, removed: true, label: null });
  t.is((await api(file.server, 'GET', `/v1/events/${other.event_id}`, { key })).body.data.label, null);
  t.is((await post(key, { external_account_id: account })).decision, 'allow', 'one fraud label left');
  const trail = (await api(file.server, 'GET', `/v1/audit?target=${encodeURIComponent(`event:${other.event_id}`)}`, { key })).body.data.records;
  t.deepEqual(trail.map((record: { action: string }) => record.action), ['event.unlabel', 'event.label']);
  t.deepEqual(trail[0].summary, { previous: { label: 'fraud', reason: 'chargeback' }, case_label: null });
  // Again (a retry whose answer was lost): nothing to take back, nothing stored or audited.
  const stored = labelsState(projectId);
  const again = await api(file.server, 'DELETE', path, { key });
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body.data, { event_id: other.event_id, removed: false, label: null });
  t.deepEqual(labelsState(projectId), stored);

  // The reviewed event's case resolved as legitimate: its own fraud label stays over the case's;
  // taken back, the case's label is the event's, as if its own had never been set.
  const caseId = (await api(file.server, 'GET', `/v1/events/${reviewed.event_id}`, { key })).body.data.case_ids[0];
  t.is((await api(file.server, 'PATCH', `/v1/cases/${caseId}?project_id=${projectId}`, { key, body: { resolution: 'legitimate' } })).status, 200);
  t.like((await api(file.server, 'GET', `/v1/events/${reviewed.event_id}`, { key })).body.data.label, { label: 'fraud', source: 'api' });
  const uncovered = await api(file.server, 'DELETE', `/v1/events/${reviewed.event_id.toUpperCase()}/label`, { key });
  t.is(uncovered.status, 200, uncovered.text);
  t.like(uncovered.body.data, { event_id: reviewed.event_id, removed: true, label: { event_id: reviewed.event_id, label: 'legitimate', reason: 'manual_review', note: null, source: `case:${caseId}` } });
  const shownLabel = (await api(file.server, 'GET', `/v1/events/${reviewed.event_id}`, { key })).body.data.label;
  t.like(shownLabel, { label: 'legitimate', source: `case:${caseId}` });
  t.deepEqual(uncovered.body.data.label, shownLabel, 'the same label object as GET /v1/events shows');
  t.like((await api(file.server, 'GET', `/v1/audit?target=${encodeURIComponent(`event:${reviewed.event_id}`)}`, { key })).body.data.records[0], {
    action: 'event.unlabel', summary: { previous: { label: 'fraud', reason: 'chargeback' }, case_label: { label: 'legitimate', source: `case:${caseId}` } },
  });
  t.is((await post(key, { external_account_id: account })).decision, 'allow');

  // A label the case gave is the case's to take back: refused, nothing changed.
  const caseLabels = labelsState(projectId);
  const refused = await api(file.server, 'DELETE', `/v1/events/${reviewed.event_id}/label`, { key });
  refusal(t, refused, 400, 'VALIDATION_ERROR', 'event_id');
  t.true(refused.body.errors[0]!.message.includes(caseId), refused.text);
  t.deepEqual(labelsState(projectId), caseLabels);
  // Reopening the case takes it back.
  t.is((await api(file.server, 'PATCH', `/v1/cases/${caseId}?project_id=${projectId}`, { key, body: { status: 'open' } })).status, 200);
  t.is((await api(file.server, 'GET', `/v1/events/${reviewed.event_id}`, { key })).body.data.label, null);
});

test('DELETE of a label refused: scopes, unknown events, other projects, the sandbox, a query; the label stays', async (t) => {
  const { projectId, key } = await project();
  const scored = await post(key, {});
  const path = `/v1/events/${scored.event_id}/label`;
  t.is((await api(file.server, 'PUT', path, { key, body: { label: 'fraud', reason: 'other' } })).status, 200);
  const reader = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'cases:read'])).key;
  const before = labelsState(projectId);
  refusal(t, await api(file.server, 'DELETE', path, { key: reader }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'DELETE', `/v1/events/${randomUUID()}/label`, { key }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'DELETE', path, { key: file.key }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'DELETE', path, { key: file.server.bootstrap.keys.sandbox_secret.key }), 404, 'NOT_FOUND', 'event_id');
  refusal(t, await api(file.server, 'DELETE', `${path}?force=true`, { key }), 400, 'VALIDATION_ERROR', 'force');
  refusal(t, await api(file.server, 'DELETE', path), 401, 'AUTH_ERROR', 'authorization');
  t.deepEqual(labelsState(projectId), before);
  t.like((await api(file.server, 'GET', `/v1/events/${scored.event_id}`, { key })).body.data.label, { label: 'fraud', source: 'api' });
});

test('a fraud label put on an event while it was pending counts for its account once it is scored, and after a restart', async (t) => {
  // Its own server: the background scorer is held, so that the event stays pending.
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points' }, keepDataDir: true });
  t.teardown(() => server.kill());
  await heldAt(server, 'async-scorer');
  const { key } = await newProject(server, 'none');
  await createRule(server, key, { rule_id: 'labelled', kind: 'hard_block', status: 'active', expression: 'account.labelled_fraud >= 1' });
  await publish(server, key);
  const account = `pending-label-${randomUUID().slice(0, 8)}`;
  const queued = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account, async: true }) });
  t.is(queued.status, 202, queued.text);
  const eventId = queued.body.data.event_id as string;
  const pending = await api(server, 'GET', `/v1/events/${eventId}`, { key });
  t.like(pending.body.data, { state: 'pending', account_public_id: null, external_account_id: account, result: null }, 'no account yet; the id it was sent with');
  const labelled = await api(server, 'PUT', `/v1/events/${eventId}/label`, { key, body: { label: 'fraud', reason: 'chargeback' } });
  t.is(labelled.status, 200, labelled.text);
  release(server, 'async-scorer');
  await waitFor(async () => (await api(server, 'GET', `/v1/scores/${eventId}`, { key })).body.data?.state === 'scored' || undefined, 'the event scored');
  const scored = await api(server, 'GET', `/v1/events/${eventId}`, { key });
  t.like(scored.body.data, { state: 'scored', external_account_id: account });
  t.regex(scored.body.data.account_public_id, /^acc_/);
  const next = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account }) });
  t.is(next.body.data.decision, 'block', next.text);
  t.like(await server.stop(), { code: 0 });
  const again = await startServer({ dataDir: server.dataDir });
  t.teardown(() => again.stop());
  const after = await api(again, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account }) });
  t.is(after.body.data.decision, 'block', 'counted from the stored label after a restart');
});
