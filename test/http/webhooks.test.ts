// The decision webhook (DESIGN §4) with a real receiver on loopback: Standard Webhooks signature,
// retries after failures with the same message id, delivery after a restart, sync events not sent.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { api, makeDataDir, runCli, sleep, startServer, waitFor } from '../_helpers/server.js';
import { minimalEvent, richEvent } from '../_helpers/events.js';

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

function setWebhook(dataDir: string, url: string): string {
  const result = runCli(['webhook', 'set', '--data-dir', dataDir, '--project', 'live', '--url', url, '--json']);
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout).secret;
}

test('an async decision is delivered signed; the signature verifies; sync decisions are not sent', async (t) => {
  const receiver = await startReceiver();
  const server = await startServer();
  try {
    const secret = setWebhook(server.dataDir, receiver.url);
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
    const payload = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; data: { event_id: string; decision: string; account_public_id: string } };
    t.is(payload.type, 'event.scored');
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
    const secret = setWebhook(server.dataDir, receiver.url);
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
  const secret = setWebhook(dataDir, `http://127.0.0.1:${port}/hook`);
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

test('webhook set refuses bad URLs and secrets; show and remove', (t) => {
  const dataDir = makeDataDir();
  t.is(runCli(['tenants', 'create', '--data-dir', dataDir, '--name', 'acme']).code, 0);
  t.is(runCli(['webhook', 'set', '--data-dir', dataDir, '--project', 'live', '--url', 'ftp://x']).code, 2);
  t.is(runCli(['webhook', 'set', '--data-dir', dataDir, '--project', 'live', '--url', 'https://hooks.example/x', '--secret', 'plain']).code, 2);
  t.is(runCli(['webhook', 'set', '--data-dir', dataDir, '--project', 'prj_nope', '--url', 'https://hooks.example/x']).code, 2);
  t.is(runCli(['webhook', 'show', '--data-dir', dataDir, '--project', 'live']).code, 1);
  const set = runCli(['webhook', 'set', '--data-dir', dataDir, '--project', 'live', '--url', 'https://hooks.example/x', '--json']);
  t.is(set.code, 0, set.stderr);
  t.is(JSON.parse(runCli(['webhook', 'show', '--data-dir', dataDir, '--project', 'live', '--json']).stdout).url, 'https://hooks.example/x');
  t.is(runCli(['webhook', 'remove', '--data-dir', dataDir, '--project', 'live']).code, 0);
  t.is(runCli(['webhook', 'show', '--data-dir', dataDir, '--project', 'live']).code, 1);
  t.is(runCli(['webhook', '--help']).code, 0);
});
