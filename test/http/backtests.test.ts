// Backtests over real HTTP (docs/backtests.md): the exact replay — a backtest of the version that
// scored a mixed stream (velocity, links, account signals, phones, async events, trust and
// hard-block marks) reproduces every stored decision and score; a changed threshold shows up as
// the transitions it causes; events that cannot be judged exactly are counted apart; a damaged row
// fails the backtest; and every refusal stores nothing.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore, ruleBody, rulesState } from '../_helpers/rules.js';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';

let server: TestServer;

test.before(async () => {
  // Tests poll GET /v1/rules/backtests/{id}: well within the default limit, but several tests poll at once.
  server = await startServer({ env: { RATE_LIMIT_PER_ROUTE: '100000' } });
});

test.after.always(async () => {
  await server?.stop();
});

const kMinute = 60_000;

/** Starts a backtest and waits until it is done or failed. */
async function backtest(key: string, body: Record<string, unknown>): Promise<any> {
  const started = await api(server, 'POST', '/v1/rules/backtests', { key, body });
  if (started.status !== 202) throw new Error(`backtest not started: ${started.text}`);
  const id = started.body.data.backtest_id as string;
  return waitFor(async () => {
    const read = await api(server, 'GET', `/v1/rules/backtests/${id}`, { key });
    return read.body.data.state === 'done' || read.body.data.state === 'failed' ? read.body.data : null;
  }, `backtest ${id} to finish`, 120_000);
}

function window(startedAt: number): { from: string; to: string } {
  return { from: new Date(startedAt - kMinute).toISOString(), to: new Date(Date.now() + kMinute).toISOString() };
}

/** Scores an event (sync, or async and waited for) and answers its stored result. */
async function scoreAndRead(key: string, body: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body });
  if (response.status === 200) return response.body.data;
  if (response.status !== 202) throw new Error(`event refused: ${response.text}`);
  return waitFor(async () => {
    const read = await api(server, 'GET', `/v1/scores/${body.event_id}`, { key });
    return read.body.data?.state === 'scored' ? read.body.data : null;
  }, `async event ${body.event_id} to be scored`);
}

/**
 * A stream that gives every kind of signal something to do: 7 accounts sharing 4 emails, 5 cards
 * and 4 devices (links), 3 IPs and repeated cards within the hour (velocity), new accounts (account
 * signals), E.164, national, invalid and unparseable phones, recent registrations (`now`), bot user agents,
 * trust and hard-block marks, anonymous events, and every sixth event async.
 */
function streamEvent(i: number): Record<string, unknown> {
  const account = i % 7;
  const card = (i * 3) % 5;
  const phones = ['+4915112345678', '015112345678', '+999 1234', 'call me maybe 12', undefined];
  const user: Record<string, unknown> = { email: `shopper${account % 4}@example.com`, country: i % 5 === 0 ? 'FR' : 'DE' };
  const phone = phones[i % phones.length];
  if (phone !== undefined) user.phone = phone;
  if (i % 3 === 0) user.registered_at = new Date(Date.now() - 3_600_000).toISOString();
  if (i % 13 === 5) user.trusted = true;
  if (i % 17 === 3) user.is_known_fraud = true;
  const type = ['payment', 'login', 'deposit', 'payment', 'payout'][i % 5]!;
  const event: Record<string, unknown> = {
    event_id: randomUUID(),
    event_type: type,
    context: { ip: `198.51.100.${i % 3}`, country: i % 2 === 0 ? 'DE' : 'FR', fp_id: `fp-stream-${i % 4}`, user_agent: i % 11 === 0 ? 'python-requests/2.31' : 'Mozilla/5.0' },
    user,
  };
  if (i % 9 !== 0) event.external_account_id = `stream-${account}`;
  if (type !== 'login') {
    event.payment = { amount_cents: 1_000 + ((i * 7_919) % 260_000), currency: 'eur', bin: '411111', last4: String(1000 + card), card_token: `tok-stream-${card}`, billing_country: i % 4 === 0 ? 'GB' : 'DE' };
  }
  if (i % 6 === 0) event.async = true;
  return event;
}

test('exact replay: a backtest of the version that scored a mixed stream reproduces every stored decision and score', async (t) => {
  const project = await newProject(server);
  const startedAt = Date.now();
  const results: any[] = [];
  for (let i = 0; i < 120; i++) results.push(await scoreAndRead(project.key, streamEvent(i)));
  // Another project's events in the same minutes are not this project's backtest.
  await scoreAndRead(server.bootstrap.keys.live_secret.key, streamEvent(1));

  const decisions = { allow: 0, review: 0, block: 0 } as Record<string, number>;
  const hits = new Map<string, number>();
  for (const result of results) {
    decisions[result.decision]++;
    for (const entry of result.breakdown) if (entry.matched) hits.set(entry.rule_id, (hits.get(entry.rule_id) ?? 0) + 1);
  }
  // The stream exercised what exact replay is about: stateful signals and verdicts.
  for (const ruleId of ['card_velocity', 'ip_velocity', 'shared_identity', 'shared_device', 'new_account', 'recently_registered', 'phone_unparseable', 'phone_invalid', 'trusted_user', 'known_fraudster']) {
    t.true((hits.get(ruleId) ?? 0) > 0, `${ruleId} matched in the stream`);
  }
  t.true(decisions.allow! > 0 && decisions.review! > 0 && decisions.block! > 0, JSON.stringify(decisions));

  const done = await backtest(project.key, { version: 1, ...window(startedAt) });
  t.is(done.state, 'done', done.error ?? '');
  t.like(done, { candidate: { version: 1 }, policy: { review_threshold: 40, block_threshold: 80 }, limit: 1_000_000, requested_by: project.keyId, progress: null, error: null });
  const report = done.report;
  t.like(report, {
    events_scanned: 120,
    truncated: false,
    events_replayed: 120,
    not_replayable: { total: 0, no_recorded_signals: 0, erased: 0, signals_not_recorded: 0 },
    candidate_over_budget: 0,
    unchanged: { decision: 120, decision_and_score: 120 },
  });
  t.deepEqual(report.decisions.stored, decisions);
  t.deepEqual(report.decisions.candidate, decisions);
  for (const transition of report.transitions) {
    t.is(transition.events, transition.from === transition.to ? decisions[transition.from] : 0, `${transition.from} → ${transition.to}`);
  }
  t.deepEqual(report.score_distribution.candidate, report.score_distribution.stored);
  t.is(report.score_distribution.stored.events, 120);
  const v1 = (await api(server, 'GET', '/v1/rulesets/1', { key: project.key })).body.data;
  t.deepEqual(report.rules.map((rule: { rule_id: string }) => rule.rule_id), v1.rules.map((rule: { rule_id: string }) => rule.rule_id).sort());
  for (const rule of report.rules) {
    t.is(rule.stored.hits, hits.get(rule.rule_id) ?? 0, `stored hits of ${rule.rule_id}`);
    t.deepEqual(rule.candidate, rule.stored, `hits of ${rule.rule_id} under both`);
  }
  // No event of this stream is labelled: the figures are counted, none made up.
  const none = { precision: null, recall: null };
  t.deepEqual(report.labels, { fraud: 0, legitimate: 0, stored: { block: none, review_or_block: none }, candidate: { block: none, review_or_block: none } });
  t.like(report.rules[0].stored, none);

  // The limit: the first 50 events in arrival order, and a note that there were more.
  const limited = await backtest(project.key, { version: 1, ...window(startedAt), limit: 50 });
  t.like(limited.report, { events_scanned: 50, truncated: true, events_replayed: 50, unchanged: { decision_and_score: 50 } });
});

/** A project without preset whose one rule scores extras.points (10, 30, 50 or 70). */
async function pointsProject(): Promise<{ projectId: string; key: string; keyId: string }> {
  const project = await newProject(server, 'none');
  await createRule(server, project.key, ruleBody('points', {
    kind: 'scoring', expression: 'extras.points > 0',
    bands: [70, 50, 30, 10].map((points) => ({ band: `p${points}`, expression: `extras.points == ${points}`, score_delta: points })),
  }));
  await publish(server, project.key);
  return project;
}

test('a lower block threshold in the drafts: the backtest shows which reviews would block, with their event ids', async (t) => {
  const project = await pointsProject();
  const startedAt = Date.now();
  const byPoints = new Map<number, string[]>();
  for (let i = 0; i < 24; i++) {
    const points = [10, 30, 50, 70][i % 4]!;
    const result = await scoreAndRead(project.key, minimalEvent({ extras: { points } }));
    t.is(result.decision, points >= 40 ? 'review' : 'allow');
    byPoints.set(points, [...(byPoints.get(points) ?? []), result.event_id]);
  }
  const policy = await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 40, block_threshold: 60 } });
  t.is(policy.status, 200);

  const done = await backtest(project.key, window(startedAt));
  t.is(done.state, 'done', done.error ?? '');
  t.deepEqual(done.candidate, { version: null, drafts: { rules: { points: 1 }, policy_version: 1 } });
  t.deepEqual(done.policy, { review_threshold: 40, block_threshold: 60 });
  const report = done.report;
  t.like(report, { events_scanned: 24, events_replayed: 24, unchanged: { decision: 18, decision_and_score: 18 } });
  t.deepEqual(report.decisions, { stored: { allow: 12, review: 12, block: 0 }, candidate: { allow: 12, review: 6, block: 6 } });
  const reviewToBlock = report.transitions.find((tr: { from: string; to: string }) => tr.from === 'review' && tr.to === 'block');
  t.is(reviewToBlock.events, 6);
  t.deepEqual(reviewToBlock.sample_event_ids, byPoints.get(70), 'the events that would block, in arrival order');
  t.deepEqual(report.transitions.filter((tr: { from: string; to: string; events: number }) => tr.from !== tr.to && tr.events > 0).length, 1);
  const unlabelled = { precision: null, recall: null };
  t.deepEqual(report.rules, [{ rule_id: 'points', candidate_status: 'active', stored: { hits: 24, shadow_hits: 0, ...unlabelled }, candidate: { hits: 24, shadow_hits: 0, ...unlabelled } }]);
  t.like(report.score_distribution.stored, { events: 24, mean: 40, p50: 30, p90: 70, max: 70 });
  t.deepEqual(report.score_distribution.stored.buckets.map((b: { events: number }) => b.events), [0, 6, 0, 6, 0, 6, 0, 6]);

  // Discarded: the drafts go back to the published thresholds, and a backtest of them changes nothing.
  t.is((await api(server, 'PUT', '/v1/policy', { key: project.key, body: { review_threshold: 40, block_threshold: 80 } })).status, 200);
  const again = await backtest(project.key, window(startedAt));
  t.like(again.report, { unchanged: { decision_and_score: 24 } });
});

test('a rule that reads a list judges the replayed events as it did live: in_list() reads the project\'s lists', async (t) => {
  const project = await newProject(server, 'none');
  const created = await api(server, 'POST', '/v1/lists', { key: project.key, body: { list_id: 'bad_emails', kind: 'email', description: 'known fraudsters' } });
  t.is(created.status, 201, created.text);
  t.is((await api(server, 'POST', '/v1/lists/bad_emails/items', { key: project.key, body: { items: [{ value: 'mallory@example.com' }] } })).status, 200);
  await createRule(server, project.key, { rule_id: 'listed', kind: 'hard_block', status: 'active', expression: "in_list('bad_emails', user.email)" });
  await publish(server, project.key);
  const startedAt = Date.now();
  t.is((await scoreAndRead(project.key, minimalEvent({ user: { email: 'mallory@example.com' } }))).decision, 'block');
  t.is((await scoreAndRead(project.key, minimalEvent({ user: { email: 'alice@example.com' } }))).decision, 'allow');

  const done = await backtest(project.key, window(startedAt));
  t.is(done.state, 'done', done.error ?? '');
  t.like(done.report, { events_replayed: 2, unchanged: { decision_and_score: 2 } });
  t.deepEqual(done.report.decisions.candidate, { allow: 1, review: 0, block: 1 });
});

test('events that cannot be judged exactly are counted apart: no recorded signals, erased accounts, signals the scoring version did not read', async (t) => {
  const project = await pointsProject();
  const startedAt = Date.now();
  const events: any[] = [];
  for (let i = 0; i < 10; i++) {
    events.push(await scoreAndRead(project.key, minimalEvent({ external_account_id: `gone-${i < 2 ? 'a' : i}`, extras: { points: 50 } })));
  }
  // Two events as stored before signals were recorded (migration 010): their signals are null.
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  try {
    db.pragma('busy_timeout = 5000');
    const forget = db.prepare('UPDATE events SET signals = NULL WHERE project_id = ? AND event_id = ?');
    for (const event of events.slice(8)) forget.run(project.projectId, event.event_id);
  } finally {
    db.close();
  }
  // The account of the first two is erased: their payloads keep amounts and ids only.
  const erased = await api(server, 'DELETE', '/v1/accounts/gone-a', { key: project.key });
  t.is(erased.status, 200, erased.text);

  const published = await backtest(project.key, { version: 1, ...window(startedAt) });
  t.like(published.report, {
    events_scanned: 10,
    events_replayed: 6,
    not_replayable: { total: 4, no_recorded_signals: 2, erased: 2, signals_not_recorded: 0 },
    decisions: { stored: { review: 6 }, candidate: { review: 6 } },
    unchanged: { decision_and_score: 6 },
  });

  // A draft rule reading velocity: version 1 read none, so no event has it recorded.
  await createRule(server, project.key, ruleBody('busy_ip', { kind: 'scoring', score_delta: 20, expression: 'velocity.ip_1h >= 100' }));
  const drafts = await backtest(project.key, window(startedAt));
  t.like(drafts.report, {
    events_scanned: 10,
    events_replayed: 0,
    not_replayable: { total: 10, no_recorded_signals: 2, erased: 2, signals_not_recorded: 6, missing_signals: { velocity: 6, links: 0, account: 0 } },
    decisions: { stored: { allow: 0, review: 0, block: 0 } },
  });
  t.like(drafts.report.rules.find((rule: { rule_id: string }) => rule.rule_id === 'busy_ip'), { candidate_status: 'active', candidate: { hits: 0 } });

  // Two groups the scoring version did not read, in one rule: each counted, not only the first.
  await createRule(server, project.key, ruleBody('linked_and_busy', { kind: 'scoring', score_delta: 5, expression: 'links.email >= 1 || account.events >= 3' }));
  const both = await backtest(project.key, window(startedAt));
  t.like(both.report, { not_replayable: { signals_not_recorded: 6, missing_signals: { velocity: 6, links: 6, account: 6 } } });
});

test('a stored result that cannot be read fails the backtest, naming the event', async (t) => {
  const project = await pointsProject();
  const startedAt = Date.now();
  const event = await scoreAndRead(project.key, minimalEvent({ extras: { points: 10 } }));
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(`UPDATE events SET result = '[1,[9999],{}]' WHERE project_id = ? AND event_id = ?`).run(project.projectId, event.event_id);
  } finally {
    db.close();
  }
  const failed = await backtest(project.key, { version: 1, ...window(startedAt) });
  t.is(failed.state, 'failed');
  t.is(failed.report, null);
  t.regex(failed.error, new RegExp(`^event ${event.event_id} \\(seq \\d+\\) cannot be judged again: stored result names entry 9999`));
  t.truthy(failed.finished_at);
  // The project may start the next one.
  t.is((await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { version: 1, ...window(startedAt), limit: 1 } })).status, 202);
});

test('backtest refusals: every malformed field, an unknown version, drafts that do not compile, a missing scope; nothing stored changes', async (t) => {
  const project = await pointsProject();
  const from = '2026-11-01T00:00:00Z';
  const to = '2026-11-02T00:00:00Z';
  const cases: Array<[unknown, number, string, string]> = [
    [{}, 400, 'VALIDATION_ERROR', 'from'],
    [{ from }, 400, 'VALIDATION_ERROR', 'to'],
    [{ from: 'last week', to }, 400, 'VALIDATION_ERROR', 'from'],
    [{ from: '2026-02-30', to }, 400, 'VALIDATION_ERROR', 'from'],
    [{ from: '2026-11-01T25:00:00Z', to }, 400, 'VALIDATION_ERROR', 'from'],
    [{ from: 1_700_000_000_000, to }, 400, 'VALIDATION_ERROR', 'from'],
    [{ from, to: '2026-11-01' }, 400, 'VALIDATION_ERROR', 'to'],
    [{ from, to: from }, 400, 'VALIDATION_ERROR', 'to'],
    [{ from: '2026-01-01', to: '2026-04-04' }, 400, 'VALIDATION_ERROR', 'to'],
    [{ from, to, limit: 0 }, 400, 'VALIDATION_ERROR', 'limit'],
    [{ from, to, limit: 1_000_001 }, 400, 'VALIDATION_ERROR', 'limit'],
    [{ from, to, limit: 2.5 }, 400, 'VALIDATION_ERROR', 'limit'],
    [{ from, to, limit: '100' }, 400, 'VALIDATION_ERROR', 'limit'],
    [{ from, to, version: 0 }, 400, 'VALIDATION_ERROR', 'version'],
    [{ from, to, version: 'v1' }, 400, 'VALIDATION_ERROR', 'version'],
    [{ from, to, rules: [] }, 400, 'VALIDATION_ERROR', 'rules'],
    [{ from, to, version: 7 }, 404, 'NOT_FOUND', 'version'],
  ];
  const backtests = (): number => readStore(server, (db) => (db.prepare('SELECT count(*) AS n FROM backtests WHERE project_id = ?').get(project.projectId) as { n: number }).n);
  for (const [body, status, code, parameter] of cases) {
    const response = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body });
    t.is(response.status, status, `${JSON.stringify(body)}: ${response.text}`);
    t.is(response.body.errors[0].code, code, JSON.stringify(body));
    t.is(response.body.errors[0].parameter, parameter, JSON.stringify(body));
  }
  const noBody = await api(server, 'POST', '/v1/rules/backtests', { key: project.key });
  t.is(noBody.status, 400);
  const withQuery = await api(server, 'POST', '/v1/rules/backtests?version=1', { key: project.key, body: { from, to } });
  t.like(withQuery.body.errors[0], { code: 'VALIDATION_ERROR', parameter: 'version' });
  t.is(withQuery.status, 400);

  // Drafts that do not compile (planted, as a draft saved under an older compiler would be).
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  try {
    db.pragma('busy_timeout = 5000');
    const planted = { ...ruleBody('broken'), expression: 'extras.broken == true &&', score_delta: 0, bands: null, action: null, version: 1 };
    db.prepare('INSERT INTO rules (project_id, rule_id, version, definition, created_at, updated_at) VALUES (?, ?, 1, ?, 0, 0)').run(project.projectId, 'broken', JSON.stringify(planted));
  } finally {
    db.close();
  }
  const broken = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { from, to } });
  t.is(broken.status, 400, broken.text);
  t.like(broken.body.errors[0], { code: 'VALIDATION_ERROR', parameter: 'rules.broken.expression' });
  t.regex(broken.body.errors[0].message, /^The drafts do not compile: rules\.broken\.expression: line 1, column 25: .+ Nothing was started/);

  // Scopes: rules:read is enough to backtest; events:write is not.
  const eventsOnly = (await createKeyWithCli(server.dataDir, ['--project', project.projectId, '--kind', 'secret', '--scopes', 'events:write'])).key;
  const reader = (await createKeyWithCli(server.dataDir, ['--project', project.projectId, '--kind', 'secret', '--scopes', 'rules:read'])).key;
  const denied = await api(server, 'POST', '/v1/rules/backtests', { key: eventsOnly, body: { version: 1, from, to } });
  t.is(denied.status, 403);
  t.is(denied.body.errors[0].code, 'SCOPE_ERROR');
  t.is((await api(server, 'POST', '/v1/rules/backtests', { key: null, body: { version: 1, from, to } })).status, 401);
  const rulesBefore = rulesState(server, project.projectId);
  t.is(backtests(), 0);

  const accepted = await api(server, 'POST', '/v1/rules/backtests', { key: reader, body: { version: 1, from, to } });
  t.is(accepted.status, 202, accepted.text);
  t.is(accepted.headers.get('location'), `/v1/rules/backtests/${accepted.body.data.backtest_id}`);
  t.regex(accepted.body.data.backtest_id, /^bt_[A-Za-z0-9]{20}$/);
  t.true(['queued', 'running'].includes(accepted.body.data.state));
  t.like(accepted.body.data, { from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z', report: null, finished_at: null });
  t.is(backtests(), 1);
  t.deepEqual(rulesState(server, project.projectId), rulesBefore, 'a backtest changes no rule, policy or ruleset');

  // GET refusals: a malformed id, an unknown one, another project's, a missing scope.
  const id = accepted.body.data.backtest_id as string;
  const other = await newProject(server, 'none');
  const reads: Array<[string, string, number, string, string]> = [
    [project.key, '/v1/rules/backtests/42', 400, 'VALIDATION_ERROR', 'backtest_id'],
    [project.key, '/v1/rules/backtests/bt_00000000000000000000', 404, 'NOT_FOUND', 'backtest_id'],
    [other.key, `/v1/rules/backtests/${id}`, 404, 'NOT_FOUND', 'backtest_id'],
    [project.key, `/v1/rules/backtests/${id}?verbose=1`, 400, 'VALIDATION_ERROR', 'verbose'],
    [eventsOnly, `/v1/rules/backtests/${id}`, 403, 'SCOPE_ERROR', ''],
  ];
  for (const [key, path, status, code, parameter] of reads) {
    const response = await api(server, 'GET', path, { key });
    t.is(response.status, status, `${path}: ${response.text}`);
    t.like(response.body.errors[0], { code, parameter });
  }
  const done = await waitFor(async () => {
    const read = await api(server, 'GET', `/v1/rules/backtests/${id}`, { key: reader });
    return read.body.data.state === 'done' ? read.body.data : null;
  }, 'the backtest to finish');
  t.like(done.report, { events_scanned: 0, events_replayed: 0, truncated: false });
  t.is(backtests(), 1);
});
