// The decision webhook (DESIGN §4) with a real receiver on loopback: Standard Webhooks signature,
// retries after failures with the same message id, delivery after a restart, sync events not sent.
import test, { type ExecutionContext } from 'ava';
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { api, makeDataDir, runCli, sleep, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent, richEvent } from '../_helpers/events.js';
import { readStore } from '../_helpers/rules.js';
import { heldAt, reached, release } from '../_helpers/faults.js';
import Database from 'better-sqlite3';
import { join } from 'node:path';

interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A receiver that fails the first `failures` deliveries with 500, then answers 204. */
async function startReceiver(failures = 0, port = 0): Promise<{ url: string; port: number; received: Received[]; attempts: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const attempts: Received[] = [];
  let failuresLeft = failures;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
      const entry = { headers: request.headers as Record<string, string>, body };
      attempts.push(entry);
      if (failuresLeft > 0) {
        failuresLeft--;
        response.writeHead(500).end('not now');
        return;
      }
      received.push(entry);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    received,
    attempts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  await waitFor(condition, what);
}

/** /metrics once it matches `pattern`. */
function metricsMatching(url: string, pattern: RegExp): Promise<string> {
  return waitFor(async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    return pattern.test(text) ? text : null;
  }, `/metrics to match ${pattern}`);
}

async function setWebhook(dataDir: string, url: string, project = 'live'): Promise<string> {
  const result = (await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', project, '--url', url, '--json']));
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout).secret;
}

test('an async decision is delivered signed; the signature verifies; sync decisions are not sent', async (t) => {
  const receiver = await startReceiver();
  const server = await startServer();
  try {
    const secret = await setWebhook(server.dataDir, receiver.url);
    t.regex(secret, /^whsec_/);
    const key = server.bootstrap.keys.live_secret.key;
    await api(server, 'POST', '/v1/events', { key, body: minimalEvent() });
    const event = richEvent({ async: true });
    t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 202);
    await until(() => receiver.received.length >= 1, 'the delivery');
    await sleep(200);
    t.is(receiver.received.length, 1, 'only the async decision');
    const delivery = receiver.received[0]!;
    t.is(delivery.headers['content-type'], 'application/json');
    t.regex(delivery.headers['webhook-id'] ?? '', /^msg_/);
    const payload = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; project_id: string; environment: string; data: { event_id: string; decision: string; account_public_id: string } };
    t.is(payload.type, 'event.scored');
    t.is(payload.project_id, server.bootstrap.live_project_id);
    t.is(payload.environment, 'live');
    t.is(payload.data.event_id, event.event_id as string);
    t.true(['allow', 'review', 'block'].includes(payload.data.decision));
    t.regex(payload.data.account_public_id, /^acc_/);
    const tampered = { ...delivery.headers, 'webhook-signature': delivery.headers['webhook-signature']!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) };
    t.throws(() => new Webhook(secret).verify(delivery.body, tampered));
  } finally {
    await server.stop();
    await receiver.close();
  }
});

test('failed deliveries are retried with backoff, with the same webhook-id, until one succeeds', async (t) => {
  const receiver = await startReceiver(3);
  const server = await startServer({ env: { WEBHOOK_RETRY_BASE_MS: '40' } });
  try {
    const secret = await setWebhook(server.dataDir, receiver.url);
    const event = minimalEvent({ async: true });
    await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body: event });
    await until(() => receiver.received.length === 1, 'a successful delivery');
    t.is(receiver.attempts.length, 4);
    t.is(new Set(receiver.attempts.map((attempt) => attempt.headers['webhook-id'])).size, 1);
    for (const attempt of receiver.attempts) t.notThrows(() => new Webhook(secret).verify(attempt.body, attempt.headers));
    // The delivery is marked in the outbox right after the receiver answered.
    const metrics = await metricsMatching(server.url, /fraud_scorer_webhook_outbox_depth 0/);
    t.regex(metrics, /fraud_scorer_webhook_failures_total 3/);
    t.regex(metrics, /fraud_scorer_webhook_outbox_depth 0/);
  } finally {
    await server.stop();
    await receiver.close();
  }
});

test('an undelivered decision survives a restart and is delivered after it', async (t) => {
  const dataDir = makeDataDir();
  // Reserve a port for the receiver, then leave it closed while the first server runs.
  const probe = await startReceiver();
  const port = probe.port;
  await probe.close();
  const first = await startServer({ dataDir, env: { WEBHOOK_RETRY_BASE_MS: '200' } });
  const secret = await setWebhook(dataDir, `http://127.0.0.1:${port}/hook`);
  const event = minimalEvent({ async: true });
  await api(first, 'POST', '/v1/events', { key: first.bootstrap.keys.live_secret.key, body: event });
  const failing = await metricsMatching(first.url, /fraud_scorer_webhook_failures_total [1-9]/);
  t.regex(failing, /fraud_scorer_webhook_failures_total [1-9]/, 'the first server tried and failed');
  t.regex(failing, /fraud_scorer_webhook_outbox_depth 1/);
  await first.stop();

  const receiver = await startReceiver(0, port);
  const second = await startServer({ dataDir });
  try {
    await until(() => receiver.received.length === 1, 'the delivery after the restart');
    const payload = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers) as { data: { event_id: string } };
    t.is(payload.data.event_id, event.event_id as string);
  } finally {
    await second.stop();
    await receiver.close();
  }
});

test('finished messages older than a week are pruned at a start, not only hourly (a server restarted more often never pruned)', async (t) => {
  const dataDir = makeDataDir();
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const first = await startServer({ dataDir });
  await setWebhook(dataDir, receiver.url);
  const key = first.bootstrap.keys.live_secret.key;
  const old = minimalEvent({ async: true });
  const recent = minimalEvent({ async: true });
  for (const event of [old, recent]) t.is((await api(first, 'POST', '/v1/events', { key, body: event })).status, 202);
  await until(() => receiver.received.length === 2, 'both deliveries');
  await first.stop();
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  const eightDaysAgo = Date.now() - 8 * 86_400_000;
  db.prepare('UPDATE webhook_outbox SET delivered_at = ?, created_at = ? WHERE event_id = ?').run(eightDaysAgo, eightDaysAgo, old.event_id);
  db.close();
  const second = await startServer({ dataDir });
  t.teardown(() => second.stop());
  const delivered = async (): Promise<string[]> => {
    const listed = await api(second, 'GET', '/v1/webhooks/deliveries?status=delivered', { key });
    return listed.body.data.deliveries.map((delivery: { event_id: string }) => delivery.event_id);
  };
  await waitFor(async () => !(await delivered()).includes(old.event_id as string), 'the week-old message to be pruned');
  t.deepEqual(await delivered(), [recent.event_id], 'the recent one stays');
});

// ---- Secret rotation, deliveries and redelivery ---------------------------------------------------
// One server for these tests (quick retries), each test with a project and webhook of its own.

let shared: Promise<TestServer> | null = null;
function sharedServer(): Promise<TestServer> {
  shared ??= startServer({ env: { WEBHOOK_RETRY_BASE_MS: '50' } });
  return shared;
}
test.after.always(async () => {
  await (await shared)?.stop();
});

function createKey(server: TestServer, args: readonly string[]): Promise<{ key: string; key_id: string }> {
  return cliJson(['keys', 'create', '--data-dir', server.dataDir, '--json', ...args]);
}

/** A live project of the shared server with a key of every scope. */
async function ownProject(): Promise<{ server: TestServer; projectId: string; key: string }> {
  const server = await sharedServer();
  const project = await cliJson<{ project_id: string }>(['projects', 'create', '--data-dir', server.dataDir, '--name', 'webhook test', '--json']);
  const key = await createKey(server, ['--project', project.project_id, '--kind', 'secret']);
  return { server, projectId: project.project_id, key: key.key };
}

test('webhook set refuses bad URLs and secrets; show and remove', async (t) => {
  const { server, projectId } = await ownProject();
  const dataDir = server.dataDir;
  t.is((await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', projectId, '--url', 'ftp://x'])).code, 2);
  // Credentials in the URL: fetch refuses such a URL, so nothing would ever be delivered.
  const withPassword = await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', projectId, '--url', 'https://hook:s3cret@hooks.example/x']);
  t.is(withPassword.code, 2);
  t.regex(withPassword.stderr, /user name or password/);
  t.false(withPassword.stderr.includes('s3cret'));
  // A port fetch never sends to (the Fetch standard's bad ports): nothing would ever be delivered either.
  for (const url of ['http://127.0.0.1:10080/hook', 'https://hooks.example:6667/x', 'http://hooks.example:25/']) {
    const badPort = await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', projectId, '--url', url]);
    t.is(badPort.code, 2, url);
    t.regex(badPort.stderr, /bad ports/);
  }
  const portZero = await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', projectId, '--url', 'http://hooks.example:0/x']);
  t.is(portZero.code, 2);
  t.regex(portZero.stderr, /port 0 is no port/);
  t.is((await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', projectId, '--url', 'https://hooks.example/x', '--secret', 'plain'])).code, 2);
  t.is((await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', 'prj_nope', '--url', 'https://hooks.example/x'])).code, 2);
  t.is((await runCli(['webhook', 'show', '--data-dir', dataDir, '--project', projectId])).code, 1);
  const set = (await runCli(['webhook', 'set', '--data-dir', dataDir, '--project', projectId, '--url', 'https://hooks.example/x', '--json']));
  t.is(set.code, 0, set.stderr);
  t.is(JSON.parse((await runCli(['webhook', 'show', '--data-dir', dataDir, '--project', projectId, '--json'])).stdout).url, 'https://hooks.example/x');
  t.is((await runCli(['webhook', 'remove', '--data-dir', dataDir, '--project', projectId])).code, 0);
  t.is((await runCli(['webhook', 'show', '--data-dir', dataDir, '--project', projectId])).code, 1);
  t.is((await runCli(['webhook', '--help'])).code, 0);
});

async function cliJson<T = any>(args: readonly string[]): Promise<T> {
  const result = await runCli(args);
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

test('rotate-secret --overlap: every message carries one signature per secret, and either secret verifies it', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const { server, projectId, key } = await ownProject();
  const oldSecret = await setWebhook(server.dataDir, receiver.url, projectId);
  const rotated = await cliJson<{ secret: string; previous_secret_until: string }>(['webhook', 'rotate-secret', '--data-dir', server.dataDir, '--project', projectId, '--overlap', '24h', '--json']);
  t.not(rotated.secret, oldSecret);
  t.true(Date.parse(rotated.previous_secret_until) > Date.now() + 23 * 3_600_000);
  await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) });
  await until(() => receiver.received.length === 1, 'the delivery');
  const delivery = receiver.received[0]!;
  t.is(delivery.headers['webhook-signature']!.split(' ').length, 2);
  t.regex(delivery.headers['webhook-signature']!, /^v1,\S+ v1,\S+$/);
  t.notThrows(() => new Webhook(oldSecret).verify(delivery.body, delivery.headers), 'receivers still on the old secret');
  t.notThrows(() => new Webhook(rotated.secret).verify(delivery.body, delivery.headers), 'receivers on the new secret');
  t.throws(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(delivery.body, delivery.headers));
  t.regex((await runCli(['webhook', 'show', '--data-dir', server.dataDir, '--project', projectId])).stdout, /previous secret also signs until/);
});

test('rotate-secret --overlap 0: only the new secret signs from the next message on', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const { server, projectId, key } = await ownProject();
  const oldSecret = await setWebhook(server.dataDir, receiver.url, projectId);
  const rotated = await cliJson<{ secret: string; previous_secret_until: string | null }>(['webhook', 'rotate-secret', '--data-dir', server.dataDir, '--project', projectId, '--overlap', '0', '--json']);
  t.is(rotated.previous_secret_until, null);
  await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) });
  await until(() => receiver.received.length === 1, 'the delivery');
  const delivery = receiver.received[0]!;
  t.is(delivery.headers['webhook-signature']!.split(' ').length, 1);
  t.notThrows(() => new Webhook(rotated.secret).verify(delivery.body, delivery.headers));
  t.throws(() => new Webhook(oldSecret).verify(delivery.body, delivery.headers));
});

test('rotate-secret refuses a bad overlap or secret (exit 2) and a project without a webhook (exit 1)', async (t) => {
  const { server, projectId } = await ownProject();
  const rotate = async (...args: string[]): Promise<number> => (await runCli(['webhook', 'rotate-secret', '--data-dir', server.dataDir, '--project', projectId, ...args])).code;
  t.is(await rotate(), 1, 'no webhook yet');
  await setWebhook(server.dataDir, 'https://hooks.example/x', projectId);
  for (const overlap of ['5y', '31d', '-1h', '1.5h', 'h', '24']) t.is(await rotate('--overlap', overlap), 2, overlap);
  t.is(await rotate('--secret', 'plain'), 2);
  t.is(await rotate('--overlap', '30d'), 0);
});

// ---- Deliveries: listing and redelivery ----------------------------------------------------------

interface DeliveryView {
  message_id: string;
  event_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
}

async function deliveries(server: TestServer, key: string, query = ''): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
  const response = await api(server, 'GET', `/v1/webhooks/deliveries${query}`, { key });
  if (response.status !== 200) throw new Error(response.text);
  return response.body.data;
}

function deliveryStatus(server: TestServer, key: string, messageId: string, status: string): Promise<DeliveryView> {
  return waitFor(async () => (await deliveries(server, key)).deliveries.find((d) => d.message_id === messageId && d.status === status), `${messageId} to be ${status}`);
}

test('failed and abandoned deliveries are listed and can be redelivered over HTTP; the same webhook-id arrives', async (t) => {
  const failing = await startReceiver(Number.MAX_SAFE_INTEGER);
  const working = await startReceiver();
  t.teardown(async () => {
    await failing.close();
    await working.close();
  });
  const { server, projectId, key } = await ownProject();
  await setWebhook(server.dataDir, failing.url, projectId);
  const event = minimalEvent({ async: true });
  t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 202);
  await until(() => failing.attempts.length >= 1, 'a failed attempt');

  const failed = await waitFor(async () => (await deliveries(server, key, '?status=failed')).deliveries[0], 'a failed delivery');
  t.is(failed.event_id, event.event_id as string);
  t.is(failed.status, 'retrying');
  t.is(failed.last_error, 'HTTP 500');
  t.regex(failed.message_id, /^msg_/);

  // The receiver is given up on: without a webhook, the next attempt abandons the message.
  t.is((await runCli(['webhook', 'remove', '--data-dir', server.dataDir, '--project', projectId])).code, 0);
  await deliveryStatus(server, key, failed.message_id, 'abandoned');
  t.deepEqual((await deliveries(server, key, '?status=abandoned')).deliveries.map((d) => d.message_id), [failed.message_id]);
  t.deepEqual((await deliveries(server, key, '?status=retrying')).deliveries, []);
  const noWebhook = await api(server, 'POST', `/v1/webhooks/deliveries/${failed.message_id}/redeliver`, { key });
  t.is(noWebhook.status, 404);
  t.is(noWebhook.body.errors[0]?.code, 'NOT_FOUND');

  const secret = await setWebhook(server.dataDir, working.url, projectId);
  const redelivered = await api(server, 'POST', `/v1/webhooks/deliveries/${failed.message_id}/redeliver`, { key });
  t.is(redelivered.status, 202, redelivered.text);
  t.is(redelivered.body.data.delivery.message_id, failed.message_id);
  t.is(redelivered.body.data.delivery.status, 'retrying', 'due again, with its attempts so far');
  await until(() => working.received.length === 1, 'the redelivery');
  t.is(working.received[0]!.headers['webhook-id'], failed.message_id);
  t.notThrows(() => new Webhook(secret).verify(working.received[0]!.body, working.received[0]!.headers));
  const delivered = await deliveryStatus(server, key, failed.message_id, 'delivered');
  // Its failed attempts are kept, and the delivery counted (how many failed before the removal
  // depends on the 1-s poll: at least the one listed above).
  t.true(delivered.attempts >= failed.attempts + 1, `${delivered.attempts} attempts after ${failed.attempts} failed`);

  // A delivered message can be sent once more too (receivers de-duplicate by webhook-id).
  t.is((await api(server, 'POST', `/v1/webhooks/deliveries/${failed.message_id}/redeliver`, {  key })).status, 202);
  await until(() => working.received.length === 2, 'the second redelivery');
  // Each request is in the audit trail, with the key that asked.
  const audit = await api(server, 'GET', `/v1/audit?action=webhook.redeliver&target=message:${failed.message_id}`, { key });
  t.is(audit.body.data.records.length, 2, audit.text);
  t.regex(audit.body.data.records[0].actor, /^key_/);
  t.is(audit.body.data.records[0].summary.event_id, failed.event_id);
});

/** A server of its own whose live project's webhook is `receiver` (listening from here on), with the given retry base. */
async function serverWithReceiver(t: ExecutionContext, receiver: Server, retryBaseMs: number): Promise<{ server: TestServer; key: string }> {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const server = await startServer({ env: { WEBHOOK_RETRY_BASE_MS: String(retryBaseMs) } });
  t.teardown(async () => {
    await server.stop();
    await new Promise((resolve) => receiver.close(resolve));
  });
  await setWebhook(server.dataDir, `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`);
  return { server, key: server.bootstrap.keys.live_secret.key };
}

test('a redelivery asked for while an attempt is under way is sent once that attempt fails, not after its backoff', async (t) => {
  // The first request is held until released, then answered 500; the next ones 204.
  const attempts: string[] = [];
  let release: (() => void) | null = null;
  const receiver: Server = createServer((request, response) => {
    request.resume().on('end', () => {
      attempts.push(request.headers['webhook-id'] as string);
      if (attempts.length === 1) release = () => response.writeHead(500).end('not now');
      else response.writeHead(204).end();
    });
  });
  // A failure waits ten minutes before its retry.
  const { server, key } = await serverWithReceiver(t, receiver, 600_000);
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })).status, 202);
  await until(() => release !== null, 'the first attempt, held');
  const messageId = (await deliveries(server, key)).deliveries[0]!.message_id;
  const redelivered = await api(server, 'POST', `/v1/webhooks/deliveries/${messageId}/redeliver`, { key });
  t.is(redelivered.status, 202, redelivered.text);
  release!();
  await until(() => attempts.length === 2, 'the redelivery, once the held attempt failed');
  t.deepEqual(attempts, [messageId, messageId]);
  const delivered = await deliveryStatus(server, key, messageId, 'delivered');
  t.is(delivered.attempts, 2, 'both attempts counted');
});

test('a redelivery starts the backoff over: the retry after its failed attempt is one base delay away, however many attempts came before', async (t) => {
  // Every request fails; the server records when each was received.
  const receivedAt: number[] = [];
  const receiver: Server = createServer((request, response) => {
    request.resume().on('end', () => {
      receivedAt.push(Date.now());
      response.writeHead(500).end('down');
    });
  });
  // A failure's retry comes 5–10 min later at the soonest: however slow the machine, no retry of
  // the schedule comes during the test, only the redeliveries it asks for.
  const baseMs = 600_000;
  const { server, key } = await serverWithReceiver(t, receiver, baseMs);
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })).status, 202);
  const failedOnce = await waitFor(async () => (await deliveries(server, key, '?status=retrying')).deliveries.find((d) => d.attempts === 1), 'the first attempt, failed');
  for (let attempts = 2; attempts <= 4; attempts++) {
    const redelivered = await api(server, 'POST', `/v1/webhooks/deliveries/${failedOnce.message_id}/redeliver`, { key });
    t.is(redelivered.status, 202, redelivered.text);
    const failed = await waitFor(async () => (await deliveries(server, key, '?status=retrying')).deliveries.find((d) => d.attempts === attempts), `attempt ${attempts}, failed`);
    t.is(receivedAt.length, attempts);
    // The retry is due at most one base delay after the attempt was made (which was no later than
    // the receiver saw it). Counting every attempt, the third would be 20–40 min away.
    const nextAt = Date.parse(failed.next_attempt_at!);
    t.true(nextAt - receivedAt[attempts - 1]! <= baseMs, `attempt ${attempts}: next attempt ${nextAt - receivedAt[attempts - 1]!} ms after it`);
    t.is(failed.last_error, 'HTTP 500');
  }
});

test('deliveries: refusals name their parameter and change nothing; scopes; paging; other projects stay apart', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const { server, projectId, key } = await ownProject();
  await setWebhook(server.dataDir, receiver.url, projectId);
  for (let i = 0; i < 3; i++) await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) });
  await until(() => receiver.received.length === 3, 'three deliveries');
  const all = await waitFor(async () => {
    const page = await deliveries(server, key, '?status=delivered');
    return page.deliveries.length === 3 ? page.deliveries : null;
  }, 'three delivered');

  const refusals: Array<[string, string]> = [
    ['?status=bogus', 'status'], ['?status=delivered&status=pending', 'status'], ['?limit=0', 'limit'], ['?limit=101', 'limit'],
    ['?limit=ten', 'limit'], ['?cursor=nope', 'cursor'], [`?cursor=${Buffer.from('["x"]').toString('base64url')}`, 'cursor'], ['?project_id=x', 'project_id'],
  ];
  for (const [query, parameter] of refusals) {
    const response = await api(server, 'GET', `/v1/webhooks/deliveries${query}`, { key });
    t.is(response.status, 400, query);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR', query);
    t.is(response.body.errors[0]?.parameter, parameter, query);
  }
  const unknown = await api(server, 'POST', '/v1/webhooks/deliveries/msg_nope/redeliver', { key });
  t.is(unknown.status, 404);
  t.is(unknown.body.errors[0]?.parameter, 'message_id');
  const withBody = await api(server, 'POST', `/v1/webhooks/deliveries/${all[0]!.message_id}/redeliver`, { key, body: { force: true } });
  t.is(withBody.status, 400);
  t.is(withBody.body.errors[0]?.parameter, 'force');
  const reader = await createKey(server, ['--project', projectId, '--kind', 'secret', '--scopes', 'scores:read']);
  const writer = await createKey(server, ['--project', projectId, '--kind', 'secret', '--scopes', 'events:write']);
  t.is((await api(server, 'POST', `/v1/webhooks/deliveries/${all[0]!.message_id}/redeliver`, { key: reader.key })).body.errors[0]?.code, 'SCOPE_ERROR');
  t.is((await api(server, 'GET', '/v1/webhooks/deliveries', { key: writer.key })).body.errors[0]?.code, 'SCOPE_ERROR');
  t.is((await deliveries(server, reader.key)).deliveries.length, 3, 'scores:read lists');
  t.deepEqual((await deliveries(server, key, '?status=delivered')).deliveries, all, 'the refusals changed nothing');
  t.is(receiver.received.length, 3, 'and sent nothing');

  const first = await deliveries(server, key, '?limit=2');
  t.is(first.deliveries.length, 2);
  const second = await deliveries(server, key, `?limit=2&cursor=${first.next_cursor}`);
  t.is(second.next_cursor, null);
  t.deepEqual([...first.deliveries, ...second.deliveries].map((d) => d.message_id), all.map((d) => d.message_id), 'newest first, each once');

  const other = server.bootstrap.keys.live_secret.key;
  t.false((await deliveries(server, other)).deliveries.some((d) => all.some((mine) => mine.message_id === d.message_id)), 'another project sees none of these messages');
  const foreignCursor = await api(server, 'GET', `/v1/webhooks/deliveries?cursor=${first.next_cursor}`, { key: other });
  t.is(foreignCursor.status, 400, 'a cursor of another project\'s deliveries');
  t.is(foreignCursor.body.errors[0]?.parameter, 'cursor');
  t.is((await api(server, 'POST', `/v1/webhooks/deliveries/${all[0]!.message_id}/redeliver`, { key: other })).status, 404);
});

test('webhook deliveries and redeliver on the command line', async (t) => {
  const receiver = await startReceiver(Number.MAX_SAFE_INTEGER);
  t.teardown(() => receiver.close());
  const { server, projectId, key } = await ownProject();
  await setWebhook(server.dataDir, receiver.url, projectId);
  await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) });
  await until(() => receiver.attempts.length >= 1, 'a failed attempt');
  t.is((await runCli(['webhook', 'remove', '--data-dir', server.dataDir, '--project', projectId])).code, 0);
  // Abandoned by the removal itself: nowhere to send it.
  t.is((await cliJson<DeliveryView[]>(['webhook', 'deliveries', '--data-dir', server.dataDir, '--project', projectId, '--status', 'abandoned', '--json'])).length, 1);
  // Waited for over HTTP: a command run in the wait loop would block this process, receiver included.
  const abandonedOverHttp = await waitFor(async () => (await deliveries(server, key, '?status=abandoned')).deliveries[0], 'the abandoned message');
  const abandoned = (await cliJson<DeliveryView[]>(['webhook', 'deliveries', '--data-dir', server.dataDir, '--project', projectId, '--status', 'abandoned', '--json']))[0]!;
  t.is(abandoned.message_id, abandonedOverHttp.message_id);
  const text = (await runCli(['webhook', 'deliveries', '--data-dir', server.dataDir, '--project', projectId, '--status', 'failed'])).stdout;
  t.regex(text, new RegExp(`^${abandoned.message_id} +event .* abandoned .*last error: `, 'm'));
  t.is((await runCli(['webhook', 'redeliver', '--data-dir', server.dataDir, '--project', projectId, '--all-abandoned'])).code, 1, 'no webhook to deliver to');
  await setWebhook(server.dataDir, receiver.url, projectId);
  t.deepEqual(await cliJson(['webhook', 'redeliver', '--data-dir', server.dataDir, '--project', projectId, '--all-abandoned', '--json']), { redelivered: 1 });
  const attemptsBefore = receiver.attempts.length;
  await until(() => receiver.attempts.length > attemptsBefore, 'the server to pick up the redelivery');
  t.is((await runCli(['webhook', 'redeliver', '--data-dir', server.dataDir, '--project', projectId, '--message-id', 'msg_nope'])).code, 1);
  t.is((await runCli(['webhook', 'redeliver', '--data-dir', server.dataDir, '--project', projectId])).code, 2, 'neither --message-id nor --all-abandoned');
  t.is((await runCli(['webhook', 'deliveries', '--data-dir', server.dataDir, '--project', projectId, '--status', 'lost'])).code, 2);
});

test('erasure: the outbox\'s messages of the account\'s events no longer name it; one still queued is delivered without it', async (t) => {
  let accept = true;
  const received: Received[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
      if (!accept) {
        response.writeHead(503).end('later');
        return;
      }
      received.push({ headers: request.headers as Record<string, string>, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const { server, projectId, key } = await ownProject();
  await setWebhook(server.dataDir, `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`, projectId);
  const account = `erased-${Date.now()}`;
  const first = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account }) });
  const accountId = first.body.data.account_public_id as string;
  const delivered = minimalEvent({ external_account_id: account, async: true });
  t.is((await api(server, 'POST', '/v1/events', { key, body: delivered })).status, 202);
  await until(() => received.some((entry) => entry.body.includes(delivered.event_id as string)), 'the first message delivered');
  t.true(received[0]!.body.includes(accountId), 'before the erasure, a message names the account');
  accept = false;
  const queued = minimalEvent({ external_account_id: account, async: true });
  t.is((await api(server, 'POST', '/v1/events', { key, body: queued })).status, 202);
  const outbox = (): Array<{ event_id: string; payload: string; delivered_at: number | null }> =>
    readStore(server, (db) => db.prepare('SELECT event_id, payload, delivered_at FROM webhook_outbox WHERE project_id = ? ORDER BY seq').all(projectId) as Array<{ event_id: string; payload: string; delivered_at: number | null }>);
  await waitFor(() => outbox().some((row) => row.event_id === queued.event_id), 'the second message queued');

  const erased = await api(server, 'DELETE', `/v1/accounts/${account}`, { key });
  t.is(erased.status, 200, erased.text);
  const rows = outbox();
  t.is(rows.length, 2);
  for (const row of rows) {
    t.false(row.payload.includes(accountId), `${row.event_id}: no acc_ id left`);
    t.is(JSON.parse(row.payload).data.event_id, row.event_id, 'still the event\'s decision');
  }
  // A retry that read the message before the erasure was answered (503) before DELETE answered:
  // the erasure waits for such deliveries. Every attempt from here on reads the scrubbed message.
  accept = true;
  await until(() => received.some((entry) => entry.body.includes(queued.event_id as string)), 'the queued message delivered after the erasure');
  const late = received.find((entry) => entry.body.includes(queued.event_id as string))!;
  t.false(late.body.includes(accountId));
  t.false('account_public_id' in JSON.parse(late.body).data);
});

test('erasure: a delivery naming the account that is under way when the outbox is scrubbed has ended before DELETE answers', async (t) => {
  // The receiver holds each request until the test lets it answer.
  const order: string[] = [];
  const heldRequests: Array<{ body: string; answer: () => void }> = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
      heldRequests.push({ body, answer: () => {
        order.push('receiver answered');
        response.writeHead(204).end();
      } });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  }));
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points' } });
  t.teardown(() => server.stop());
  await heldAt(server, 'async-scorer');
  release(server, 'async-scorer');
  const key = server.bootstrap.keys.live_secret.key;
  await setWebhook(server.dataDir, `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`);
  const account = `in-flight-${Date.now()}`;
  const first = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account }) });
  const accountId = first.body.data.account_public_id as string;
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: account, async: true }) })).status, 202);
  await until(() => heldRequests.length === 1, 'the delivery under way');
  t.true(heldRequests[0]!.body.includes(accountId), 'it names the account');

  const erasure = api(server, 'DELETE', `/v1/accounts/${account}`, { key }).then((answer) => {
    order.push('DELETE answered');
    return answer;
  });
  await reached(server, 'erasure-waits-for-webhooks');
  t.deepEqual(order, [], 'the erasure waits for the delivery');
  // A retry by the acc_ id (a client that gave up on the first) waits for it too.
  const retried = api(server, 'DELETE', `/v1/accounts/${accountId}`, { key }).then((answer) => {
    order.push('retried DELETE answered');
    return answer;
  });
  await reached(server, 'erasure-waits-for-webhooks');
  t.deepEqual(order, [], 'the retry waits for the delivery too');
  heldRequests[0]!.answer();
  const erased = await erasure;
  t.is(erased.status, 200, erased.text);
  const retry = await retried;
  t.is(retry.status, 200, retry.text);
  t.true(retry.body.data.already_erased);
  t.is(order[0], 'receiver answered');
  t.deepEqual([...order.slice(1)].sort(), ['DELETE answered', 'retried DELETE answered']);
  const outbox = readStore(server, (db) => db.prepare('SELECT payload, delivered_at FROM webhook_outbox').all() as Array<{ payload: string; delivered_at: number | null }>);
  t.is(outbox.length, 1);
  t.false(outbox[0]!.payload.includes(accountId), 'the stored message no longer names it');
  t.not(outbox[0]!.delivered_at, null, 'and it counts as delivered');
});

test('webhook remove while a delivery is under way: answered 2xx it is delivered (not listed abandoned); failed it stays abandoned for the removal', async (t) => {
  const held: Array<(status: number) => void> = [];
  const receiver = createServer((request, response) => {
    request.resume().on('end', () => held.push((status) => response.writeHead(status).end()));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  }));
  const { server, projectId, key } = await ownProject();
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  for (const [status, expected] of [[204, 'delivered'], [503, 'abandoned']] as const) {
    await setWebhook(server.dataDir, url, projectId);
    const event = minimalEvent({ async: true });
    t.is((await api(server, 'POST', '/v1/events', { key, body: event })).status, 202);
    await until(() => held.length === 1, 'the delivery under way');
    const removed = await runCli(['webhook', 'remove', '--data-dir', server.dataDir, '--project', projectId]);
    t.is(removed.code, 0, removed.stderr);
    held.shift()!(status);
    const message = await waitFor(async () => (await deliveries(server, key)).deliveries.find((d) => d.event_id === event.event_id && d.attempts === 1), 'the attempt recorded');
    t.is(message.status, expected, `answered ${status}`);
    const abandoned = (await deliveries(server, key, '?status=abandoned')).deliveries.filter((d) => d.event_id === event.event_id);
    if (expected === 'delivered') {
      t.is(message.last_error, null);
      t.deepEqual(abandoned, [], 'a delivered message is not listed as abandoned');
    } else {
      t.is(message.last_error, 'the project has no webhook any more', 'why it was abandoned, not the attempt\'s error');
      t.is(abandoned.length, 1);
    }
  }
});

test('a retry after a timeout is due a backoff after the attempt ended, not after it began', async (t) => {
  let closedAt = 0;
  const receiver = createServer((request) => {
    // Never answers: the attempt ends at the server's timeout, when it closes the connection.
    request.resume();
    request.socket.on('close', () => {
      closedAt = Date.now();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  }));
  // A timeout of 1 s and a first pause of 2–4 s: from the start, the retry could be due 1 s after the end.
  const server = await startServer({ env: { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_BASE_MS: '4000' } });
  t.teardown(() => server.stop());
  const key = server.bootstrap.keys.live_secret.key;
  await setWebhook(server.dataDir, `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`);
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })).status, 202);
  const failed = await waitFor(async () => (await deliveries(server, key)).deliveries.find((d) => d.attempts === 1) ?? null, 'the attempt timed out');
  t.regex(failed.last_error ?? '', /no answer within 1000 ms/);
  await waitFor(() => closedAt > 0, 'the receiver to see the connection closed');
  // The server's clock and this process's are the same machine's; 50 ms for the close to reach the receiver.
  t.true(Date.parse(failed.next_attempt_at!) >= closedAt - 50 + 2000, `due ${failed.next_attempt_at}, attempt ended ${new Date(closedAt).toISOString()}`);
});

test('a delivery error never shows the webhook URL\'s path, query or credentials (a URL set before credentials were refused)', async (t) => {
  const { server, projectId, key } = await ownProject();
  await setWebhook(server.dataDir, 'http://127.0.0.1:39/placeholder', projectId);
  // As an older build let it be set: credentials in the URL, which fetch refuses to send to.
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  db.prepare('UPDATE webhooks SET url = ? WHERE project_id = ?').run('http://hook:s3cret@127.0.0.1:9/hooks/token-abc?key=q1', projectId);
  db.close();
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ async: true }) })).status, 202);
  const failed = await waitFor(async () => {
    const page = await deliveries(server, key);
    return page.deliveries.find((d) => d.last_error !== null) ?? null;
  }, 'a failed attempt');
  for (const secret of ['s3cret', 'token-abc', 'key=q1', 'hook:']) t.false(failed.last_error!.includes(secret), `${secret} in ${failed.last_error}`);
  // Nothing listens there: the error says why (fetch's cause), still without the path or query.
  const db2 = new Database(join(server.dataDir, 'fraud-scorer.db'));
  db2.prepare('UPDATE webhooks SET url = ? WHERE project_id = ?').run('http://127.0.0.1:39/hooks/token-def?key=q2', projectId);
  db2.close();
  const refused = await waitFor(async () => (await deliveries(server, key)).deliveries.find((d) => d.last_error?.includes('ECONNREFUSED')) ?? null, 'an attempt refused by the closed port');
  t.regex(refused.last_error!, /^fetch failed: connect ECONNREFUSED 127\.0\.0\.1:39$/);
});

test('a project\'s receiver that never answers holds at most 4 of the 16 delivery slots: another project\'s messages go on meanwhile', async (t) => {
  const held: Array<import('node:http').ServerResponse> = [];
  const hanging = createServer((request, response) => {
    request.resume();
    held.push(response);
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const working = await startReceiver();
  t.teardown(async () => {
    for (const response of held) response.destroy();
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
    await working.close();
  });
  const server = await startServer({ env: { WEBHOOK_TIMEOUT_MS: '120000' } });
  t.teardown(async () => {
    // The hanging attempts end first: a stop waits for the deliveries under way.
    for (const response of held) response.destroy();
    await server.stop();
  });
  // The sandbox's receiver hangs; the live project's answers.
  await setWebhook(server.dataDir, `http://127.0.0.1:${(hanging.address() as { port: number }).port}/hook`, 'sandbox');
  await setWebhook(server.dataDir, working.url, 'live');
  const sandboxKey = server.bootstrap.keys.sandbox_secret.key;
  for (let i = 0; i < 20; i++) t.is((await api(server, 'POST', '/v1/events', { key: sandboxKey, body: minimalEvent({ async: true }) })).status, 202);
  await until(() => held.length === 4, 'the sandbox receiver holding its project\'s 4 slots');
  const liveKey = server.bootstrap.keys.live_secret.key;
  for (let i = 0; i < 10; i++) t.is((await api(server, 'POST', '/v1/events', { key: liveKey, body: minimalEvent({ async: true }) })).status, 202);
  await until(() => working.received.length === 10, 'every live message delivered while the sandbox receiver hangs');
  t.is(held.length, 4, 'the sandbox project never took more than its share');
  const sandboxQueued = (await deliveries(server, sandboxKey)).deliveries.filter((d) => d.status === 'pending');
  t.is(sandboxQueued.length, 20, 'its messages wait (4 of them under way), none lost');
});
