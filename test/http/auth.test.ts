// Keys over real HTTP (interface, "Authentication"): missing, malformed, unknown and revoked keys,
// scopes, publishable keys, failed-lookup limiting, keys created and revoked while running.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, runCli, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { buildRouteTable } from '../../src/http/routes.js';

let server: TestServer;

test.before(async () => {
  server = await startServer({ env: { RATE_LIMIT_FAILED_KEY_LOOKUPS: '1000' } });
});

test.after.always(async () => {
  await server?.stop();
});

async function createKey(args: string[]): Promise<{ key: string; key_id: string; scopes: string[]; environment: string }> {
  const result = await runCli(['keys', 'create', '--data-dir', server.dataDir, '--json', ...args]);
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout);
}

const refused = test.macro(async (t, headers: Record<string, string>, status: number, code: string, parameter: string) => {
  const response = await api(server, 'POST', '/v1/events', { headers, body: minimalEvent() });
  t.is(response.status, status, response.text);
  t.is(response.body.status, 0);
  t.is(response.body.errors[0]?.code, code);
  t.is(response.body.errors[0]?.parameter, parameter);
  // RFC 6750 §3: a 401 names the scheme it wants; error="invalid_token" when a key was refused.
  const challenge = response.headers.get('www-authenticate') ?? '';
  t.regex(challenge, /^Bearer realm="fraud-scorer"/);
  t.is(challenge.includes('error="invalid_token"'), headers.authorization !== undefined);
});

test('no Authorization header: 401 AUTH_ERROR', refused, {}, 401, 'AUTH_ERROR', 'authorization');
test('a scheme other than Bearer: 401 AUTH_ERROR', refused, { authorization: 'Basic dXNlcjpwYXNz' }, 401, 'AUTH_ERROR', 'authorization');
test('Bearer without a key: 401 AUTH_ERROR', refused, { authorization: 'Bearer' }, 401, 'AUTH_ERROR', 'authorization');
test('a key of the wrong length: 401 AUTH_ERROR', refused, { authorization: 'Bearer ak_live_abc' }, 401, 'AUTH_ERROR', 'authorization');
test('an unknown kind prefix: 401 AUTH_ERROR', refused, { authorization: 'Bearer sk_live_AAAAAAAAAAAAAAAAAAAAAA' }, 401, 'AUTH_ERROR', 'authorization');
test('an unknown environment: 401 AUTH_ERROR', refused, { authorization: 'Bearer ak_test_AAAAAAAAAAAAAAAAAAAAAA' }, 401, 'AUTH_ERROR', 'authorization');
test('a well-formed unknown key: 401 AUTH_ERROR', refused, { authorization: 'Bearer ak_live_AAAAAAAAAAAAAAAAAAAAAA' }, 401, 'AUTH_ERROR', 'authorization');

test('the bootstrap keys work, and the scheme is case-insensitive', async (t) => {
  const live = await api(server, 'POST', '/v1/events', { headers: { authorization: `bearer ${server.bootstrap.keys.live_secret.key}` }, body: minimalEvent() });
  t.is(live.status, 200, live.text);
  const sandbox = await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.sandbox_secret.key, body: minimalEvent() });
  t.is(sandbox.status, 200, sandbox.text);
});

test('a publishable key can call nothing but POST /v1/fp/collect: 403 SCOPE_ERROR', async (t) => {
  const response = await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_publishable.key, body: minimalEvent() });
  t.is(response.status, 403);
  t.is(response.body.errors[0]?.code, 'SCOPE_ERROR');
  const scores = await api(server, 'GET', `/v1/scores/${minimalEvent().event_id}`, { key: server.bootstrap.keys.live_publishable.key });
  t.is(scores.status, 403);
  t.is(scores.body.errors[0]?.code, 'SCOPE_ERROR');
});

test('a route outside the key scopes: 403 SCOPE_ERROR, and nothing stored', async (t) => {
  const reader = await createKey(['--project', 'live', '--kind', 'secret', '--scopes', 'scores:read']);
  const event = minimalEvent();
  const response = await api(server, 'POST', '/v1/events', { key: reader.key, body: event });
  t.is(response.status, 403);
  t.is(response.body.errors[0]?.code, 'SCOPE_ERROR');
  const lookup = await api(server, 'GET', `/v1/scores/${event.event_id}`, { key: reader.key });
  t.is(lookup.status, 404);
});

test('a key created while the server runs works at once', async (t) => {
  const created = await createKey(['--project', 'live', '--kind', 'secret']);
  t.is(created.environment, 'live');
  const response = await api(server, 'POST', '/v1/events', { key: created.key, body: minimalEvent() });
  t.is(response.status, 200, response.text);
});

test('a revoked key stops working within a second', async (t) => {
  const created = await createKey(['--project', 'sandbox', '--kind', 'secret']);
  t.is((await api(server, 'POST', '/v1/events', { key: created.key, body: minimalEvent() })).status, 200);
  const revoke = await runCli(['keys', 'revoke', '--data-dir', server.dataDir, '--key-id', created.key_id]);
  t.is(revoke.code, 0, revoke.stderr);
  // The server polls for key changes (every 250 ms); wait for the refusal, without timing it.
  const refused = await waitFor(async () => {
    const status = (await api(server, 'POST', '/v1/events', { key: created.key, body: minimalEvent() })).status;
    return status === 200 ? null : status;
  }, 'the revoked key to be refused');
  t.is(refused, 401);
});

test('keys are stored only as hashes: no key appears in the database files or the output', async (t) => {
  const created = await createKey(['--project', 'live', '--kind', 'secret']);
  await api(server, 'POST', '/v1/events', { key: created.key, body: minimalEvent() });
  for (const file of ['fraud-scorer.db', 'fraud-scorer.db-wal']) {
    let content = '';
    try {
      content = readFileSync(join(server.dataDir, file), 'latin1');
    } catch {
      continue;
    }
    t.false(content.includes(created.key), file);
    t.false(content.includes(server.bootstrap.keys.live_secret.key), file);
  }
  t.false(server.output().includes(created.key));
  const list = await runCli(['keys', 'list', '--data-dir', server.dataDir, '--json']);
  t.false(list.stdout.includes(created.key));
  t.true(list.stdout.includes(created.key_id));
});

test('accounts:link grants nothing: a key holding only it is refused on every route that needs a key', async (t) => {
  // The interface names the scope without a route; this build gives it none (README, "Keys and projects").
  const linkOnly = await createKey(['--project', 'live', '--kind', 'secret', '--scopes', 'accounts:link']);
  const routes = buildRouteTable(new Proxy({}, { get: () => () => null }) as never).filter((route) => route.auth === 'key');
  t.true(routes.length > 10);
  for (const route of routes) {
    t.not(route.scope, 'accounts:link');
    const path = route.pattern.replace(/:[a-z_]+/g, 'x');
    const response = await api(server, route.method, path, { key: linkOnly.key, ...(route.body === 'none' ? {} : { body: {} }) });
    t.is(response.status, 403, `${route.method} ${route.pattern}: ${response.text}`);
    t.is(response.body.errors[0]?.code, 'SCOPE_ERROR');
  }
});
