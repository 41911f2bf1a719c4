// What an operator sees: every 5xx logged with request id, route and cause; rule worker deaths and
// replacements; LOG_LEVEL; the access log; keys in no log; /metrics of decisions, rule hits, 503s
// by cause, requests in flight, the async queue bound and the in-memory state.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { api, runCli, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent, richEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, ruleBody } from '../_helpers/rules.js';

/** The JSON log lines a server wrote so far. */
function logLines(server: TestServer): Array<Record<string, unknown>> {
  return server.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Series {
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Every series of one metric in Prometheus text (label order as the server wrote it). */
function metricSeries(text: string, name: string): Series[] {
  const series: Series[] = [];
  for (const match of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1]!, pair[2]!]));
    series.push({ labels, value: Number(match[2]) });
  }
  return series;
}

function metricValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  return metricSeries(text, name).find((series) => Object.entries(labels).every(([label, value]) => series.labels[label] === value))?.value;
}

async function metricsText(server: TestServer): Promise<string> {
  return (await fetch(`${server.url}/metrics`)).text();
}

test('every 5xx is logged with its request id, route and cause; 503s are counted by code', async (t) => {
  const server = await startServer({ env: { SQLITE_BUSY_TIMEOUT_MS: '50' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const lock = new Database(join(server.dataDir, 'fraud-scorer.db'));
  lock.exec('BEGIN EXCLUSIVE');
  const failed = await api(server, 'POST', '/v1/events', { key, body: richEvent(), headers: { 'x-request-id': 'five-hundred' } });
  const refused = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }), headers: { 'x-request-id': 'five-oh-three' } });
  lock.exec('ROLLBACK');
  lock.close();
  t.is(failed.status, 500);
  t.is(refused.status, 503);

  // The server's log reaches the file through a pipe: a line may land after the answer.
  const logged = (requestId: string): boolean => logLines(server).some((line) => line.request_id === requestId);
  await waitFor(() => logged('five-hundred') && logged('five-oh-three'), 'both answers logged');
  const lines = logLines(server);
  const error = lines.find((line) => line.request_id === 'five-hundred');
  t.like(error, { level: 'error', route: 'POST /v1/events', status: 500, code: 'INTERNAL_ERROR' });
  t.regex(String(error?.cause), /SQLITE_BUSY|locked/, 'the cause is the database, not the message sent to the client');
  const unavailable = lines.find((line) => line.request_id === 'five-oh-three');
  t.like(unavailable, { level: 'warn', route: 'POST /v1/events', status: 503, code: 'ASYNC_UNAVAILABLE' });
  t.regex(String(unavailable?.cause), /SQLITE_BUSY|locked/);
  t.regex(await metricsText(server), /fraud_scorer_http_unavailable_total\{code="ASYNC_UNAVAILABLE"\} 1\b/);
});

test('a rule worker that dies is logged and replaced; its event answers 503 with the cause logged, the next event is scored', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'rule_worker_oom', WORKERS: '1', WORKER_MAX_HEAP_MB: '64' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const crashed = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { fault: 'rule_worker_oom' } }), headers: { 'x-request-id': 'crash-1' } });
  t.is(crashed.status, 503);
  t.is(crashed.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  const refusedLine = (line: Record<string, unknown>): boolean => line.request_id === 'crash-1' && line.message === 'request refused: service unavailable';
  await waitFor(() => logLines(server).some((line) => line.message === 'rule worker started to replace one that ended'), 'the replacement worker');
  await waitFor(() => logLines(server).some(refusedLine), 'the refusal logged');
  const lines = logLines(server);
  const answer = lines.find(refusedLine);
  t.like(answer, { level: 'warn', route: 'POST /v1/events', status: 503, code: 'COMPILED_RULES_UNAVAILABLE' });
  t.regex(String(answer?.cause), /worker/);
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent() })).status, 200);
  t.regex(await metricsText(server), /^fraud_scorer_rule_worker_restarts_total [1-9]/m);
});

test('LOG_LEVEL=warn leaves out info lines and keeps warnings', async (t) => {
  const server = await startServer({ env: { LOG_LEVEL: 'warn', FAULT_INJECTION: 'rate_limiter_unready' } });
  t.teardown(() => server.stop());
  const levels = new Set(logLines(server).map((line) => line.level));
  t.false(levels.has('info'), 'no "store ready" and the like');
  t.true(levels.has('warn'), 'the fault-injection warning');
});

test('ACCESS_LOG=on: one line per request with id, method, route pattern, status, duration and key id; never a key', async (t) => {
  const server = await startServer({ env: { ACCESS_LOG: 'on', LOG_LEVEL: 'debug' } });
  t.teardown(() => server.stop());
  const created = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', 'live', '--kind', 'secret', '--json'])).stdout) as { key: string; key_id: string };
  const revoked = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', 'live', '--kind', 'secret', '--json'])).stdout) as { key: string; key_id: string };
  t.is((await runCli(['keys', 'revoke', '--data-dir', server.dataDir, '--key-id', revoked.key_id])).code, 0);
  const event = minimalEvent();
  await api(server, 'POST', '/v1/events', { key: created.key, body: event, headers: { 'x-request-id': 'access-1' } });
  await api(server, 'GET', `/v1/scores/${event.event_id}`, { key: created.key, headers: { 'x-request-id': 'access-2' } });
  await fetch(`${server.url}/healthz`, { method: 'HEAD', headers: { 'x-request-id': 'access-3' } });
  await api(server, 'GET', '/nope', { headers: { 'x-request-id': 'access-4' } });
  // Refused keys: unknown, revoked (once the server has noticed), malformed.
  await api(server, 'GET', '/v1/rules', { key: 'ak_live_AAAAAAAAAAAAAAAAAAAAAA' });
  await waitFor(async () => (await api(server, 'GET', '/v1/rules', { key: revoked.key })).status === 401, 'the revoked key refused');
  await api(server, 'GET', '/v1/rules', { headers: { authorization: `Bearer ${created.key}x` } });

  await waitFor(() => logLines(server).some((line) => line.request_id === 'access-4'), 'the access lines');
  const access = logLines(server).filter((line) => line.message === 'request');
  const byId = (id: string): Record<string, unknown> | undefined => access.find((line) => line.request_id === id);
  t.like(byId('access-1'), { method: 'POST', route: '/v1/events', status: 200, key_id: created.key_id });
  t.like(byId('access-2'), { method: 'GET', route: '/v1/scores/:event_id', status: 200, key_id: created.key_id });
  t.like(byId('access-3'), { method: 'HEAD', route: '/healthz', status: 200, key_id: null });
  t.like(byId('access-4'), { method: 'GET', route: 'unmatched', status: 404, key_id: null });
  for (const line of [byId('access-1'), byId('access-2')]) {
    t.is(typeof line?.duration_ms, 'number');
    t.regex(String(line?.time), /^\d{4}-\d{2}-\d{2}T/);
  }
  const output = server.output();
  for (const secret of [created.key, revoked.key]) t.false(output.includes(secret), 'a key in the log');
  t.false(output.includes(created.key.slice(8)), 'not even the secret part of a key');
});

test('/metrics: decisions per project and decision, hits per published rule (active and shadow), in-flight requests, the async queue bound', async (t) => {
  const server = await startServer({ env: { ASYNC_QUEUE_LIMIT: '1234' } });
  t.teardown(() => server.stop());
  // A project of its own, with a shadow rule beside the preset's.
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('shadow_watch', { status: 'shadow', expression: 'extras.shadow_watch == true' }));
  await publish(server, project.key);
  for (let i = 0; i < 3; i++) t.is((await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent() })).status, 200);
  const blocked = await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ user: { is_known_fraud: true }, extras: { shadow_watch: true } }) });
  t.is(blocked.body.data.decision, 'block');
  const hardBlock = (blocked.body.data.breakdown as Array<{ rule_id: string; matched: boolean }>).find((entry) => entry.matched)!.rule_id;

  const text = await metricsText(server);
  t.is(metricValue(text, 'fraud_scorer_decisions_total', { project_id: project.projectId, decision: 'allow' }), 3);
  t.is(metricValue(text, 'fraud_scorer_decisions_total', { project_id: project.projectId, decision: 'block' }), 1);
  t.is(metricValue(text, 'fraud_scorer_rule_hits_total', { project_id: project.projectId, rule_id: hardBlock, status: 'active' }), 1);
  t.is(metricValue(text, 'fraud_scorer_rule_hits_total', { project_id: project.projectId, rule_id: 'shadow_watch', status: 'shadow' }), 1);
  const shadowHits = metricSeries(text, 'fraud_scorer_rule_hits_total').filter((series) => series.labels.status === 'shadow');
  t.deepEqual(shadowHits.map((series) => series.labels.rule_id), ['shadow_watch'], 'only matched rules are counted');
  t.regex(text, /^fraud_scorer_http_in_flight 1$/m, 'the scrape itself');
  t.regex(text, /^fraud_scorer_async_queue_limit 1234$/m);
  t.regex(text, /^fraud_scorer_rule_pool_queue \d+$/m);
});

test('/metrics: the in-memory state by kind, entries and bytes, as events add accounts, values, links and event ids', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const entries = (text: string, kind: string): number => metricValue(text, 'fraud_scorer_state_entries', { kind })!;
  const bytes = (text: string, kind: string): number => metricValue(text, 'fraud_scorer_state_bytes', { kind })!;
  const before = await metricsText(server);
  for (const kind of ['accounts', 'signal_values', 'signal_holders', 'links', 'event_ids']) {
    t.is(entries(before, kind), 0, kind);
    t.true(bytes(before, kind) >= 0, kind);
  }
  // Two accounts sharing an email: two accounts, two holders of one value, one link; three event ids.
  const email = `shared-${randomUUID().slice(0, 8)}@example.com`;
  for (const account of ['metrics-a', 'metrics-b']) {
    t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: `${account}-${email}`, user: { email } }) })).status, 200);
  }
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent() })).status, 200);
  const after = await metricsText(server);
  t.is(entries(after, 'accounts'), 2);
  t.is(entries(after, 'signal_values'), 1);
  t.is(entries(after, 'signal_holders'), 2);
  t.is(entries(after, 'links'), 1);
  t.is(entries(after, 'event_ids'), 3);
  t.true(entries(after, 'velocity_keys') > 0);
  for (const kind of ['accounts', 'signal_values', 'signal_holders', 'links', 'event_ids', 'velocity_keys']) t.true(bytes(after, kind) > 0, kind);
});

test('/metrics: how long scored events waited for the rule workers and for the commit, one observation each; a refused event adds none', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  const count = (text: string, stage: string): number | undefined => metricValue(text, 'fraud_scorer_scoring_stage_seconds_count', { stage });
  const before = await metricsText(server);
  t.is(count(before, 'rules'), 0);
  t.is(count(before, 'commit'), 0);
  for (let i = 0; i < 5; i++) t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent() })).status, 200);
  // Refused before scoring: nothing is timed.
  const refused = await api(server, 'POST', '/v1/events', { key, body: { ...minimalEvent(), event_type: 'teleport' } });
  t.is(refused.status, 400);
  // A replay of a stored event answers from the store: nothing is timed either.
  const event = minimalEvent();
  t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 200);
  t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 200);
  const after = await metricsText(server);
  for (const stage of ['rules', 'commit']) {
    t.is(count(after, stage), 6, stage);
    const buckets = metricSeries(after, 'fraud_scorer_scoring_stage_seconds_bucket').filter((series) => series.labels.stage === stage);
    t.is(buckets.at(-1)!.labels.le, '+Inf');
    t.is(buckets.at(-1)!.value, 6);
    t.true(buckets.every((bucket, i) => i === 0 || bucket.value >= buckets[i - 1]!.value), `${stage}: cumulative`);
    t.true(metricValue(after, 'fraud_scorer_scoring_stage_seconds_sum', { stage })! > 0, stage);
  }
});
