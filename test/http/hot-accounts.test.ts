// The `links` and `account` signals come from memory (src/accounts/hot-accounts.ts), loaded from
// the store at start and kept in step with every commit that changes them: a scored event, a label,
// a case, an erasure. Over real HTTP with a real store: what the rules were given is read back
// exactly from each event's recorded signals, before and after a restart of the server.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore } from '../_helpers/rules.js';
import { api, runCli, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { decodeRecordedSignals, type RecordedSignals } from '../../src/scoring/recorded-signals.js';

async function post(server: TestServer, key: string, fields: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent(fields) });
  if (response.status !== 200) throw new Error(`not scored: ${response.text}`);
  return response.body.data;
}

/** What the rules of an event were given, as stored with it. */
function seen(server: TestServer, eventId: string): RecordedSignals {
  const row = readStore(server, (db) => db.prepare('SELECT signals FROM events WHERE event_id = ?').get(eventId) as { signals: string } | undefined);
  if (row === undefined) throw new Error(`event ${eventId} not stored`);
  return decodeRecordedSignals(row.signals);
}

const noLinks = { email: 0, phone: 0, fp: 0, ip_24h: 0, card: 0, total: 0, fraud: 0 };

for (const from of ['the snapshot', 'the tables'] as const) {
  test(`links and account signals from memory: as stored, after labels and cases, and the same after a restart (loaded from ${from})`, async (t) => {
    let server = await startServer({ keepDataDir: true });
    t.teardown(() => server.stop());
    const { key, projectId } = await newProject(server, 'none');
    // Rules that read links and account (monitoring: they change no decision), and one that sends
    // `extras.risk == 'review'` to review, which opens a case.
    await createRule(server, key, { rule_id: 'reads_state', kind: 'monitoring', status: 'active', expression: 'links.total >= 0 && account.known' });
    await createRule(server, key, { rule_id: 'risky', kind: 'scoring', status: 'active', score_delta: 50, expression: "extras.risk == 'review'" });
    await publish(server, key);
    const tag = randomUUID().slice(0, 8);
    const email = `shared.${tag}@example.com`;
    const fp = `fp_${tag}`;

    const a1 = await post(server, key, { external_account_id: `a-${tag}`, user: { email }, context: { fp_id: fp }, extras: { risk: 'review' } });
    t.is(a1.decision, 'review');
    t.deepEqual(seen(server, a1.event_id).links, noLinks);
    t.deepEqual(seen(server, a1.event_id).account, { known: false });

    const b1 = await post(server, key, { external_account_id: `b-${tag}`, user: { email } });
    t.deepEqual(seen(server, b1.event_id).links, { ...noLinks, email: 1, total: 1 }, 'b shares the email of a');

    // A fraud label on a's first event, then a case of a resolved as fraud.
    const labelled = await api(server, 'PUT', `/v1/events/${a1.event_id}/label`, { key, body: { label: 'fraud', reason: 'chargeback' } });
    t.is(labelled.status, 200, labelled.text);
    const a2 = await post(server, key, { external_account_id: `a-${tag}` });
    t.like(seen(server, a2.event_id).account, { known: true, events: 1, reviews: 1, blocks: 0, fraud_confirmed: false, labelled_fraud: 1 });
    const caseId = (await api(server, 'GET', `/v1/events/${a1.event_id}`, { key })).body.data.case_ids[0];
    const resolved = await api(server, 'PATCH', `/v1/cases/${caseId}?project_id=${projectId}`, { key, body: { resolution: 'fraud' } });
    t.is(resolved.status, 200, resolved.text);

    // c shares a's device: linked by fp, and a counts as fraud now.
    const c1 = await post(server, key, { external_account_id: `c-${tag}`, context: { fp_id: fp } });
    t.deepEqual(seen(server, c1.event_id).links, { ...noLinks, fp: 1, total: 1, fraud: 1 });
    const a3 = await post(server, key, { external_account_id: `a-${tag}`, user: { email } });
    const beforeRestart = seen(server, a3.event_id);
    t.like(beforeRestart.account, { known: true, events: 2, reviews: 1, fraud_confirmed: true, labelled_fraud: 1 }, 'a1 keeps its API label');
    t.deepEqual(beforeRestart.links, { ...noLinks, email: 1, fp: 1, total: 2 }, 'a is linked with b (email) and c (fp), neither flagged');

    // The same state after a restart: loaded from the start snapshot the stop wrote, or from the
    // tables when there is none.
    const { dataDir } = server;
    await server.stop();
    if (from === 'the tables') rmSync(join(dataDir, 'start-snapshot'));
    server = await startServer({ dataDir });
    t.regex(server.output(), new RegExp(`"from_snapshot":${from === 'the snapshot'}`));
    // From the tables, the links came as rows read by the start's thread (accounts/link-rows.ts).
    t.regex(server.output(), new RegExp(`"links_from_start_thread":${from === 'the tables'}`));
    const a4 = await post(server, key, { external_account_id: `a-${tag}`, user: { email } });
    const afterRestart = seen(server, a4.event_id);
    t.deepEqual(afterRestart.links, beforeRestart.links);
    t.like(afterRestart.account, { known: true, events: 3, reviews: 1, blocks: 0, fraud_confirmed: true, labelled_fraud: 1 });
    const d1 = await post(server, key, { external_account_id: `d-${tag}`, user: { email }, context: { fp_id: fp } });
    t.deepEqual(seen(server, d1.event_id).links, { ...noLinks, email: 2, fp: 2, total: 3, fraud: 1 }, 'a, b and c hold the values; a is flagged');

    // A label taken back after the restart is seen at once.
    const relabelled = await api(server, 'PUT', `/v1/events/${a1.event_id}/label`, { key, body: { label: 'legitimate', reason: 'customer_report' } });
    t.is(relabelled.status, 200, relabelled.text);
    const a5 = await post(server, key, { external_account_id: `a-${tag}` });
    t.like(seen(server, a5.event_id).account, { labelled_fraud: 0, fraud_confirmed: true });

    // Erased: gone from memory too; its next event starts a new account that links to nobody's past.
    const erased = await api(server, 'DELETE', `/v1/accounts/c-${tag}`, { key });
    t.is(erased.status, 200, erased.text);
    const c2 = await post(server, key, { external_account_id: `c-${tag}`, user: { email: `other.${tag}@example.com` } });
    t.not(c2.account_public_id, c1.account_public_id);
    t.deepEqual(seen(server, c2.event_id).account, { known: false });
    const d2 = await post(server, key, { external_account_id: `d-${tag}`, context: { fp_id: fp } });
    t.deepEqual(seen(server, d2.event_id).links, { ...noLinks, email: 2, fp: 1, total: 2, fraud: 1 }, 'c no longer holds the device');
  });
}

/** What the tables hold of the accounts with these external ids: counts, signal rows, link rows. */
function tables(server: TestServer, externalIds: readonly string[]): { events: number[]; signals: number; links: number } {
  return readStore(server, (db) => {
    const ids = externalIds.map((external) => (db.prepare('SELECT account_id, events FROM accounts WHERE external_account_id = ?').get(external) as { account_id: string; events: number } | undefined));
    const accountIds = ids.filter((row) => row !== undefined).map((row) => row.account_id);
    const count = (sql: string): number => accountIds.reduce((sum, id) => sum + (db.prepare(sql).pluck().get(id) as number), 0);
    return {
      events: ids.map((row) => row?.events ?? -1),
      signals: count('SELECT count(*) FROM account_signals WHERE account_id = ?'),
      links: count('SELECT count(*) FROM account_links WHERE account_id = ?'),
    };
  });
}

test('a crash before the rows of scored events are written: the next start records those events again', async (t) => {
  // Rows are written in bulk only every hour here: every event below is acknowledged, and none of
  // the rows that follow from it (counts, signals, links) is written before the crash.
  let server = await startServer({ keepDataDir: true, env: { DERIVED_FLUSH_MS: '3600000' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const tag = randomUUID().slice(0, 8);
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => `${name}-${tag}`);
  const email = `crash.${tag}@example.com`;
  const fp = `fp_crash_${tag}`;
  await post(server, key, { external_account_id: a, user: { email }, context: { fp_id: fp } });
  await post(server, key, { external_account_id: b, user: { email } });
  await post(server, key, { external_account_id: a });
  await post(server, key, { external_account_id: c, context: { fp_id: fp } });
  const linksOf = async (id: string): Promise<string> => {
    const response = await api(server, 'GET', `/v1/accounts/${id}/links`, { key });
    t.is(response.status, 200, response.text);
    return JSON.stringify(response.body.data);
  };
  const before = await linksOf(a);
  t.deepEqual(JSON.parse(before).links.map((link: { signal_type: string }) => link.signal_type), ['email', 'fp'], 'the route answers from memory at once');
  t.deepEqual(tables(server, [a, b, c]), { events: [0, 0, 0], signals: 0, links: 0 }, 'the accounts rows exist, nothing that follows from the events is written yet');

  await server.kill();
  const { dataDir } = server;
  server = await startServer({ dataDir, keepDataDir: true, env: { DERIVED_FLUSH_MS: '3600000' } });
  t.regex(server.output(), /"events_replayed":4/);
  t.is(await linksOf(a), before, 'the same links, as the same JSON');
  // The replay's rows are written before the server answers.
  t.deepEqual(tables(server, [a, b, c]), { events: [2, 1, 1], signals: 4, links: 4 }, 'a: email and fp, b: email, c: fp; a–b and a–c, a row per direction');

  // A second crash: only what came after the first replay is recorded again.
  const d1 = await post(server, key, { external_account_id: d, user: { email }, context: { fp_id: fp } });
  t.deepEqual(seen(server, d1.event_id).links, { ...noLinks, email: 2, fp: 2, total: 3 });
  await server.kill();
  server = await startServer({ dataDir, env: { DERIVED_FLUSH_MS: '3600000' } });
  t.regex(server.output(), /"events_replayed":1/);
  const d2 = await post(server, key, { external_account_id: d });
  t.like(seen(server, d2.event_id).account, { known: true, events: 1 });
  t.deepEqual(tables(server, [a, b, c, d]), { events: [2, 1, 1, 1], signals: 6, links: 12 }, 'd is linked with a, b (email) and a, c (fp)');
  // A clean stop writes the rest.
  await server.stop();
  t.deepEqual(tables(server, [a, b, c, d]), { events: [2, 1, 1, 2], signals: 6, links: 12 });
});

test('events without an account move the stamp past them: a stretch of them does not hold the point erasures and a start read the log from', async (t) => {
  const server = await startServer({ env: { DERIVED_FLUSH_MS: '200' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const stamp = (): { scored_order: number; from_seq: number } =>
    readStore(server, (db) => db.prepare('SELECT scored_order, from_seq FROM derived_stamp WHERE id = 1').get()) as { scored_order: number; from_seq: number };
  await post(server, key, { external_account_id: `acc-${randomUUID().slice(0, 8)}` });
  await waitFor(() => stamp().from_seq === 2, 'a stamp past the account\'s event');
  // Anonymous events only, from here on: before, the stamp stayed at the account's event, and
  // from_seq at the first of them, until an event with an account came.
  for (let i = 0; i < 5; i++) await post(server, key, {});
  await waitFor(() => stamp().from_seq === 7, 'a stamp past the anonymous events');
  t.is(stamp().scored_order, 6);
});

test('a value used again more than an hour after its row was written: that row is refreshed, found by its first seen, not written twice', async (t) => {
  // account_signals is keyed by (first seen in whole seconds, account, type, hash) (migration 26):
  // the refresh's row must carry the first seen memory holds, or it would be a second row.
  let server = await startServer({ keepDataDir: true });
  const { dataDir } = server;
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const key = server.bootstrap.keys.live_secret.key;
  const tag = randomUUID().slice(0, 8);
  const event = { external_account_id: `refresh-${tag}`, context: { fp_id: `fp_refresh_${tag}` } };
  const first = await post(server, key, event);
  t.is((await server.stop()).code, 0);
  // The row as if written three hours ago and last used two hours ago (the start loads it so).
  const rowsOf = (): Array<{ first_seen_s: number; last_seen: number }> => readStore(server, (db) =>
    db.prepare("SELECT first_seen_s, last_seen FROM account_signals WHERE account_id = ? AND signal_type = 'fp'").all(first.account_public_id) as Array<{ first_seen_s: number; last_seen: number }>);
  const [written] = rowsOf();
  const aged = { first_seen_s: written!.first_seen_s - 3 * 3600, last_seen: written!.last_seen - 2 * 3_600_000 };
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  t.is(db.prepare("UPDATE account_signals SET first_seen_s = ?, last_seen = ? WHERE account_id = ? AND signal_type = 'fp'").run(aged.first_seen_s, aged.last_seen, first.account_public_id).changes, 1);
  db.close();

  server = await startServer({ dataDir, keepDataDir: true });
  t.regex(server.output(), /"from_snapshot":false/, 'the changed table voids the snapshot: the row is loaded from it');
  await post(server, key, event);
  t.is((await server.stop()).code, 0);
  const after = rowsOf();
  t.is(after.length, 1, 'one row: the refresh found it');
  t.is(after[0]!.first_seen_s, aged.first_seen_s);
  t.true(after[0]!.last_seen > aged.last_seen + 3_600_000, 'its last seen moved to the refresh');
});

// Both directions of the link: the load reads one of them.
for (const [table, where, rows] of [['account_signals', 'account_id = @id', 1], ['account_links', 'account_id = @id OR other_account_id = @id', 2]] as const) {
  test(`a start that finds a row of ${table} of no known type refuses to serve, naming the account`, async (t) => {
    const server = await startServer({ keepDataDir: true });
    const key = server.bootstrap.keys.live_secret.key;
    const tag = randomUUID().slice(0, 8);
    const email = `shared.${tag}@example.com`;
    const first = await post(server, key, { external_account_id: `a-${tag}`, user: { email } });
    await post(server, key, { external_account_id: `b-${tag}`, user: { email } });
    await server.stop();
    // A clean stop wrote the rows; one of them is then given a type no build knows.
    const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
    db.pragma('ignore_check_constraints = ON');
    t.is(db.prepare(`UPDATE ${table} SET signal_type = 'shoe_size' WHERE ${where}`).run({ id: first.account_public_id }).changes, rows);
    db.close();
    const result = await runCli(['serve', '--port', '0', '--data-dir', server.dataDir]);
    rmSync(server.dataDir, { recursive: true, force: true });
    t.not(result.code, 0);
    t.regex(result.stderr, /could not be loaded \((signal|link) of acc_\w+\): an unknown (signal|link) type/);
  });
}
