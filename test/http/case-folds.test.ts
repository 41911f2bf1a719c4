// New cases and the events that join an open case are written in bulk (docs/pipeline.md, "Cases"):
// over real HTTP, a case is listed, read and filtered, with its events, score and time, as soon
// as they are committed; a change to the case sees all of them (labels), reopening a case sees
// the account's new one, an erasure unlinks it; a clean stop and a SIGKILL lose none and list
// none twice. The servers here never write in bulk on their own (DERIVED_FLUSH_MS of an hour).
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { decodeSeqs } from '../../src/accounts/event-seqs.js';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { newProject } from '../_helpers/rules.js';

const kNoBulkWrites = { DERIVED_FLUSH_MS: '3600000' };

/** With the default preset: disposable email 15 + billing/IP country 15 + user/IP country 10 = 40, review (more with a device). */
function reviewEvent(account: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return minimalEvent({
    external_account_id: account,
    user: { email: `someone.${randomUUID().slice(0, 6)}@mailinator.com`, country: 'FR' },
    context: { country: 'DE' },
    payment: { amount_cents: 1000, currency: 'EUR', billing_country: 'US' },
    ...fields,
  });
}

async function score(server: TestServer, body: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body });
  if (response.status !== 200) throw new Error(response.text);
  if (response.body.data.decision !== 'review') throw new Error(`expected a review: ${response.text}`);
  return response.body.data;
}

async function readCase(server: TestServer, caseId: string): Promise<any> {
  const response = await api(server, 'GET', `/v1/cases/${caseId}?project_id=${server.bootstrap.live_project_id}`, { key: server.bootstrap.keys.live_secret.key });
  if (response.status !== 200) throw new Error(response.text);
  return response.body.data;
}

async function caseIdOf(server: TestServer, eventId: string): Promise<string> {
  const event = await api(server, 'GET', `/v1/events/${eventId}`, { key: server.bootstrap.keys.live_secret.key });
  return event.body.data.case_ids[0];
}

/** What the case's stored rows list (its row and case_event_seqs), as event ids, in the order listed; null: no row. */
function storedCaseEvents(dataDir: string, caseId: string): string[] | null {
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  try {
    const open = db.prepare('SELECT event_seqs FROM cases WHERE case_id = ?').pluck().get(caseId) as Buffer | undefined;
    if (open === undefined) return null;
    const seqs: number[] = [];
    for (const chunk of db.prepare('SELECT seqs FROM case_event_seqs WHERE case_id = ? ORDER BY chunk').pluck().all(caseId) as Buffer[]) decodeSeqs(chunk, seqs);
    decodeSeqs(open, seqs);
    return seqs.map((seq) => db.prepare('SELECT event_id FROM events WHERE seq = ?').pluck().get(seq) as string);
  } finally {
    db.close();
  }
}

async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

test('a case lists its events, highest score and latest time as soon as they are committed; resolving it labels every one', async (t) => {
  const server = await startServer({ env: kNoBulkWrites });
  t.teardown(() => server.stop());
  const account = `folds-${randomUUID().slice(0, 8)}`;
  const first = await score(server, reviewEvent(account));
  const caseId = await caseIdOf(server, first.event_id);
  // The second comes from a new device: +10 (new_device_for_account), a higher score.
  const second = await score(server, reviewEvent(account, { context: { country: 'DE', fp_id: `fp_${account}` } }));
  const third = await score(server, reviewEvent(account));
  t.true(second.risk_score > first.risk_score, `${second.risk_score} > ${first.risk_score}`);

  const read = await readCase(server, caseId);
  t.deepEqual(read.event_ids, [first.event_id, second.event_id, third.event_id]);
  t.is(read.risk_score, Math.max(first.risk_score, second.risk_score, third.risk_score));
  t.true(Date.parse(read.updated_at) >= Date.parse(read.created_at));
  t.like(read, { status: 'open', resolution: null, external_account_id: account, decision: 'review', assignee: null, notes: [] });
  t.is(read.created_at, new Date(Date.parse(read.created_at)).toISOString());
  t.is(storedCaseEvents(server.dataDir, caseId), null, 'no row yet: the case and its events wait');
  t.is(await metric(server, 'fraud_scorer_cases_unfolded'), 1);
  const list = async (query: string): Promise<Array<[string, string[], number]>> => {
    const listed = await api(server, 'GET', `/v1/cases?project_id=${server.bootstrap.live_project_id}&${query}`, { key: server.bootstrap.keys.live_secret.key });
    t.is(listed.status, 200, listed.text);
    return listed.body.data.cases.map((entry: any) => [entry.case_id, entry.event_ids, entry.risk_score]);
  };
  const listedAs = [[caseId, read.event_ids, read.risk_score]];
  t.deepEqual(await list(`account=${account}`), listedAs);
  t.deepEqual(await list(`account=${first.account_public_id}&status=open`), listedAs);
  t.deepEqual(await list(`account=${account}&status=closed`), []);
  t.deepEqual(await list(`account=${account}&created_after=${read.created_at}`), [], 'created_after is exclusive');
  t.deepEqual(await list(`account=${account}&created_before=${new Date(Date.parse(read.created_at) + 1).toISOString()}`), listedAs);
  const newest = await list('limit=1');
  t.deepEqual(newest, listedAs, 'the newest case first');

  const resolved = await api(server, 'PATCH', `/v1/cases/${caseId}?project_id=${server.bootstrap.live_project_id}`, {
    key: server.bootstrap.keys.live_secret.key, body: { resolution: 'fraud' },
  });
  t.is(resolved.status, 200, resolved.text);
  t.deepEqual(resolved.body.data.event_ids, read.event_ids);
  t.is(resolved.body.data.risk_score, read.risk_score);
  t.is(resolved.body.data.created_at, read.created_at);
  t.deepEqual(storedCaseEvents(server.dataDir, caseId), read.event_ids, 'the change wrote the case with its events first');
  t.is(await metric(server, 'fraud_scorer_cases_unfolded'), 0);
  for (const event of [first, second, third]) {
    const label = (await api(server, 'GET', `/v1/events/${event.event_id}`, { key: server.bootstrap.keys.live_secret.key })).body.data.label;
    t.like(label, { label: 'fraud', source: `case:${caseId}` }, event.event_id);
  }
});

test('reopening a closed case sees the account\'s new case; an erasure unlinks a case not written yet', async (t) => {
  const server = await startServer({ env: kNoBulkWrites });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const project = server.bootstrap.live_project_id;
  const account = `reopen-${randomUUID().slice(0, 8)}`;
  const first = await score(server, reviewEvent(account));
  const firstCase = await caseIdOf(server, first.event_id);
  t.is((await api(server, 'PATCH', `/v1/cases/${firstCase}?project_id=${project}`, { key, body: { resolution: 'legitimate' } })).status, 200);
  const second = await score(server, reviewEvent(account));
  const secondCase = await caseIdOf(server, second.event_id);
  t.not(secondCase, firstCase);
  t.is(storedCaseEvents(server.dataDir, secondCase), null);
  const reopen = await api(server, 'PATCH', `/v1/cases/${firstCase}?project_id=${project}`, { key, body: { status: 'open', resolution: null } });
  t.is(reopen.status, 400, reopen.text);
  t.is(reopen.body.errors[0]?.code, 'VALIDATION_ERROR');
  t.is(reopen.body.errors[0]?.parameter, 'status');
  t.is((await readCase(server, firstCase)).status, 'closed', 'nothing changed');
  t.deepEqual(storedCaseEvents(server.dataDir, secondCase), [second.event_id], 'written to be found');
  const listed = await api(server, 'GET', `/v1/cases?project_id=${project}&account=${account}`, { key });
  t.deepEqual(listed.body.data.cases.map((entry: any) => entry.case_id), [secondCase, firstCase], 'each case once');

  const erased = `erased-${randomUUID().slice(0, 8)}`;
  const opening = await score(server, reviewEvent(erased));
  const erasedCase = await caseIdOf(server, opening.event_id);
  t.is(storedCaseEvents(server.dataDir, erasedCase), null);
  const erasure = await api(server, 'DELETE', `/v1/accounts/${erased}`, { key });
  t.is(erasure.status, 200, erasure.text);
  t.is(erasure.body.data.erased.cases_unlinked, 1);
  t.like(await readCase(server, erasedCase), { account_public_id: null, external_account_id: null, event_ids: [opening.event_id] });
  t.deepEqual(storedCaseEvents(server.dataDir, erasedCase), [opening.event_id]);
  // The erasure's change of the case is in the case's trail, as every change of a case is.
  const trail = await api(server, 'GET', `/v1/audit?target=${encodeURIComponent(`case:${erasedCase}`)}`, { key });
  t.is(trail.status, 200, trail.text);
  t.like(trail.body.data.records, [{ action: 'case.change', summary: { account_erased: erasure.body.data.account_public_id } }]);
  t.is(trail.body.data.records.length, 1);
});

test('a clean stop writes every waiting case and event; after a SIGKILL the start does, each listed once', async (t) => {
  const first = await startServer({ env: kNoBulkWrites, keepDataDir: true });
  t.teardown(() => first.kill());
  const dataDir = first.dataDir;
  const account = `stop-${randomUUID().slice(0, 8)}`;
  const events = [await score(first, reviewEvent(account)), await score(first, reviewEvent(account)), await score(first, reviewEvent(account))];
  const caseId = await caseIdOf(first, events[0].event_id);
  t.is(storedCaseEvents(dataDir, caseId), null);
  t.like(await first.stop(), { code: 0 });
  const ids = events.map((event) => event.event_id);
  t.deepEqual(storedCaseEvents(dataDir, caseId), ids, 'folded at the stop');

  const second = await startServer({ dataDir, env: kNoBulkWrites, keepDataDir: true });
  t.teardown(() => second.kill());
  events.push(await score(second, reviewEvent(account)), await score(second, reviewEvent(account)));
  ids.push(events[3].event_id, events[4].event_id);
  t.deepEqual((await readCase(second, caseId)).event_ids, ids);
  t.deepEqual(storedCaseEvents(dataDir, caseId), ids.slice(0, 3));
  // A case opened just before the crash: committed, so answered, and nowhere but in the log.
  const fresh = await score(second, reviewEvent(`fresh-${randomUUID().slice(0, 8)}`));
  const freshCase = await caseIdOf(second, fresh.event_id);
  const freshRead = await readCase(second, freshCase);
  t.is(storedCaseEvents(dataDir, freshCase), null);
  await second.kill();

  const third = await startServer({ dataDir, env: kNoBulkWrites });
  t.teardown(() => third.stop());
  t.deepEqual(storedCaseEvents(dataDir, caseId), ids, 'written by the start, before it listened');
  t.deepEqual((await readCase(third, caseId)).event_ids, ids);
  t.deepEqual(storedCaseEvents(dataDir, freshCase), [fresh.event_id]);
  t.deepEqual(await readCase(third, freshCase), freshRead, 'the same case as answered before the crash');
  t.is(await metric(third, 'fraud_scorer_cases_unfolded'), 0);
});

test('after a SIGKILL, a start whose bulk write of cases fails shows the cases a crash left unwritten from memory, then writes them', async (t) => {
  const first = await startServer({ env: kNoBulkWrites, keepDataDir: true });
  t.teardown(() => first.kill());
  const dataDir = first.dataDir;
  const account = `crash-${randomUUID().slice(0, 8)}`;
  const events = [await score(first, reviewEvent(account)), await score(first, reviewEvent(account))];
  const caseId = await caseIdOf(first, events[0].event_id);
  const before = await readCase(first, caseId);
  await first.kill();

  const second = await startServer({ dataDir, env: { ...kNoBulkWrites, FAULT_INJECTION: 'case_folds_fail' }, keepDataDir: true });
  t.teardown(() => second.kill());
  t.is(storedCaseEvents(dataDir, caseId), null, 'the start could not write it');
  t.deepEqual(await readCase(second, caseId), before, 'answered as before the crash');
  const listed = await api(second, 'GET', `/v1/cases?project_id=${second.bootstrap.live_project_id}`, { key: second.bootstrap.keys.live_secret.key });
  t.true((listed.body.data.cases as Array<{ case_id: string }>).some((item) => item.case_id === caseId), 'listed');
  const later = await score(second, reviewEvent(account));
  t.deepEqual((await readCase(second, caseId)).event_ids, [...before.event_ids, later.event_id], 'the account\'s next review joins it');
  t.like(await second.stop(), { code: 0 });

  const third = await startServer({ dataDir, env: kNoBulkWrites });
  t.teardown(() => third.stop());
  t.deepEqual(storedCaseEvents(dataDir, caseId), [...before.event_ids, later.event_id], 'written by the next start');
});

test('a new case is written with the next bulk write; the events that join it wait CASE_EVENTS_WAIT_MS, then go into its row together', async (t) => {
  // Bulk writes every 50 ms; events that join a written case wait an hour here.
  const waiting = await startServer({ env: { DERIVED_FLUSH_MS: '50', CASE_EVENTS_WAIT_MS: '3600000' }, keepDataDir: true });
  t.teardown(() => waiting.kill());
  const dataDir = waiting.dataDir;
  const account = `wait-${randomUUID().slice(0, 8)}`;
  const opening = await score(waiting, reviewEvent(account));
  const caseId = await caseIdOf(waiting, opening.event_id);
  await waitFor(() => storedCaseEvents(dataDir, caseId) !== null, 'the new case written by a bulk write');
  t.deepEqual(storedCaseEvents(dataDir, caseId), [opening.event_id]);
  const joined = [await score(waiting, reviewEvent(account)), await score(waiting, reviewEvent(account))];
  const ids = [opening.event_id, ...joined.map((event) => event.event_id)];
  // Three bulk writes after they were committed, each of another account's event (a bulk write
  // counts only when it has rows), each followed by the folds of its flush.
  for (let i = 0; i < 3; i++) {
    const batches = await metric(waiting, 'fraud_scorer_derived_batches_total');
    const other = await api(waiting, 'POST', '/v1/events', { key: waiting.bootstrap.keys.live_secret.key, body: minimalEvent({ external_account_id: `other-${randomUUID().slice(0, 8)}` }) });
    t.is(other.status, 200, other.text);
    await waitFor(async () => (await metric(waiting, 'fraud_scorer_derived_batches_total')) > batches || null, 'a bulk write');
  }
  const fresh = await score(waiting, reviewEvent(`fresh-${randomUUID().slice(0, 8)}`));
  const freshCase = await caseIdOf(waiting, fresh.event_id);
  await waitFor(() => storedCaseEvents(dataDir, freshCase) !== null || null, 'a new case meanwhile written');
  t.deepEqual(storedCaseEvents(dataDir, caseId), [opening.event_id], 'the joined events still wait');
  t.deepEqual((await readCase(waiting, caseId)).event_ids, ids, 'and are answered');
  t.is(await metric(waiting, 'fraud_scorer_cases_unfolded'), 1);
  await waiting.kill();

  // After a crash the start writes them before it listens; then, with a short wait, joined events
  // go into the row within a few bulk writes.
  const short = await startServer({ dataDir, env: { DERIVED_FLUSH_MS: '50', CASE_EVENTS_WAIT_MS: '200' } });
  t.teardown(() => short.stop());
  t.deepEqual(storedCaseEvents(dataDir, caseId), ids, 'written by the start');
  const late = await score(short, reviewEvent(account));
  ids.push(late.event_id);
  t.deepEqual((await readCase(short, caseId)).event_ids, ids);
  await waitFor(() => storedCaseEvents(dataDir, caseId)?.length === ids.length || null, 'the joined event written after its wait');
  t.deepEqual(storedCaseEvents(dataDir, caseId), ids);
  t.is(await metric(short, 'fraud_scorer_cases_unfolded'), 0);
});

test('a PATCH refused because the case is another project\'s writes nothing of it: not its row, not its waiting events', async (t) => {
  const server = await startServer({ env: kNoBulkWrites });
  t.teardown(() => server.stop());
  const other = await newProject(server, 'none');
  const account = `patched-${randomUUID().slice(0, 8)}`;
  const first = await score(server, reviewEvent(account));
  const caseId = await caseIdOf(server, first.event_id);
  const patchFrom = (projectId: string, key: string, body: Record<string, unknown>) => api(server, 'PATCH', `/v1/cases/${caseId}?project_id=${projectId}`, { key, body });

  // Opened in memory, no row yet.
  const refused = await patchFrom(other.projectId, other.key, { resolution: 'fraud' });
  t.is(refused.status, 404, refused.text);
  t.is(refused.body.errors[0]?.parameter, 'case_id');
  t.is(storedCaseEvents(server.dataDir, caseId), null, 'no row written');

  // Its row written by its own project's change; a second event joins it in memory only.
  const own = await patchFrom(server.bootstrap.live_project_id, server.bootstrap.keys.live_secret.key, { assignee: 'ana' });
  t.is(own.status, 200, own.text);
  const second = await score(server, reviewEvent(account));
  t.is(await caseIdOf(server, second.event_id), caseId);
  t.deepEqual(storedCaseEvents(server.dataDir, caseId), [first.event_id]);
  const refusedAgain = await patchFrom(other.projectId, other.key, { resolution: 'fraud' });
  t.is(refusedAgain.status, 404, refusedAgain.text);
  t.deepEqual(storedCaseEvents(server.dataDir, caseId), [first.event_id], 'the waiting event not folded in by the refused request');
  t.like(await readCase(server, caseId), { status: 'open', resolution: null, assignee: 'ana' });
  t.deepEqual((await readCase(server, caseId)).event_ids, [first.event_id, second.event_id]);
});
