// POST /v1/fp/collect and GET /v1/fp/agent.js over real HTTP against the real server: what is
// accepted and answered, every refusal with its status, code and parameter, and that a refused
// request leaves the stored sightings exactly as they were.
import test from 'ava';
import Database from 'better-sqlite3';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { kAgentSourcePath } from '../../src/fingerprint/agent-asset.js';
import { kFpIdPattern } from '../../src/fingerprint/fp-id.js';
import { buildRouteTable, kFingerprintBodyLimit, type RouteHandlers } from '../../src/http/routes.js';
import { data } from '../../src/http/types.js';
import { components, createKeyWithCli, kRejectedBodies, type SampleComponents } from '../_helpers/fingerprint.js';
import { api, runCli, startServer, type ApiResponse, type TestServer } from '../_helpers/server.js';
import { exchangeRaw, parseResponses } from '../_helpers/raw-http.js';

let server: TestServer;
let publishable: string;

test.before(async () => {
  // This file sends far more than the default 60 collects per key and address from 127.0.0.1;
  // the limit itself is tested on a server of its own below.
  server = await startServer({ env: { RATE_LIMIT_FP_PER_KEY_AND_ADDRESS: '100000' } });
  publishable = server.bootstrap.keys.live_publishable.key;
});

test.after.always(async () => {
  await server?.stop();
});

interface Sighting {
  fp_id: string;
  first_seen: string;
  last_seen: string;
  seen_count: number;
}

/** Components unique to one test, so concurrent tests never count each other's sightings. */
function own(canvas: string, change: (c: SampleComponents) => void = () => {}): SampleComponents {
  return components((c) => {
    c.canvas = canvas;
    change(c);
  });
}

function collect(body: unknown, key: string | null = publishable, headers: Record<string, string> = {}, target: { url: string } = server): Promise<ApiResponse<Sighting>> {
  return api<Sighting>(target, 'POST', '/v1/fp/collect', { key, body, headers });
}

function assertError(t: import('ava').ExecutionContext, response: ApiResponse, status: number, code: string, parameter: string): void {
  t.is(response.status, status, response.text);
  t.is(response.body.status, 0);
  t.is(response.body.data, null);
  t.is(response.body.errors.length, 1);
  t.is(response.body.errors[0]!.code, code);
  t.is(response.body.errors[0]!.parameter, parameter);
}

/** Every stored sighting, read from the server's database file (read-only, beside the server). */
function storedSightings(target: TestServer = server): unknown[] {
  const db = new Database(join(target.dataDir, 'fraud-scorer.db'), { readonly: true });
  try {
    return db.prepare('SELECT tenant_id, fp_id, first_seen, last_seen, seen_count FROM fingerprints ORDER BY tenant_id, fp_id').all();
  } finally {
    db.close();
  }
}

/** A body of exactly `size` bytes: the JSON of `value` padded with trailing spaces (still valid JSON). */
function paddedBody(value: unknown, size: number): string {
  const json = JSON.stringify(value);
  if (json.length > size) throw new Error('value too large to pad');
  return json + ' '.repeat(size - json.length);
}

// ---- accepted -------------------------------------------------------------------------------

test('collect answers fp_id, first_seen, last_seen and seen_count in the success envelope', async (t) => {
  const response = await collect({ components: own('shape1') });
  t.is(response.status, 200, response.text);
  t.is(response.body.status, 1);
  t.deepEqual(response.body.errors, []);
  t.deepEqual(Object.keys(response.body.data).sort(), ['first_seen', 'fp_id', 'last_seen', 'seen_count']);
  const sighting = response.body.data;
  t.regex(sighting.fp_id, kFpIdPattern);
  t.is(new Date(sighting.first_seen).toISOString(), sighting.first_seen);
  t.is(sighting.last_seen, sighting.first_seen);
  t.is(sighting.seen_count, 1);
  t.truthy(response.headers.get('x-request-id'));
});

test('the same stable components give the same fp_id and count each visit', async (t) => {
  const first = await collect({ components: own('repeat1') });
  const second = await collect({ components: own('repeat1') });
  const third = await collect({ components: own('repeat1') });
  t.is(second.body.data.fp_id, first.body.data.fp_id);
  t.is(third.body.data.fp_id, first.body.data.fp_id);
  t.deepEqual([first, second, third].map((r) => r.body.data.seen_count), [1, 2, 3]);
  t.is(third.body.data.first_seen, first.body.data.first_seen);
  t.true(third.body.data.last_seen >= first.body.data.first_seen);
});

test('volatile components do not change the fp_id', async (t) => {
  const base = await collect({ components: own('volatile1') });
  const moved = await collect({
    components: own('volatile1', (c) => {
      c.timezone_offset = -120;
      c.window = { inner_width: 500, inner_height: 400, outer_width: 520, outer_height: 480, device_pixel_ratio: 2 };
      c.battery = null;
      c.network = { effective_type: '2g', downlink: 0.2, rtt: 900, save_data: true };
      c.user_agent = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/200.0.0.0';
      c.collected_at = '2030-01-01T00:00:00Z';
    }),
  });
  const bare = await collect({
    components: own('volatile1', (c) => {
      for (const name of ['timezone_offset', 'window', 'battery', 'network', 'user_agent', 'collected_at']) delete c[name];
    }),
  });
  t.is(moved.body.data.fp_id, base.body.data.fp_id);
  t.is(bare.body.data.fp_id, base.body.data.fp_id);
  t.is(bare.body.data.seen_count, 3);
});

test('different stable components give a different fp_id', async (t) => {
  const base = await collect({ components: own('stable1') });
  const otherFonts = await collect({ components: own('stable1', (c) => (c.fonts = ['Arial'])) });
  const otherScreen = await collect({ components: own('stable1', (c) => (c.screen = { width: 1366, height: 768, color_depth: 24 })) });
  t.is(base.status, 200);
  t.not(otherFonts.body.data.fp_id, base.body.data.fp_id);
  t.not(otherScreen.body.data.fp_id, base.body.data.fp_id);
  t.is(otherFonts.body.data.seen_count, 1);
});

test('the same components in another tenant give another fp_id; the sandbox gets the same fp_id and counts its own sightings', async (t) => {
  const created = await runCli(['tenants', 'create', '--name', 'other shop', '--data-dir', server.dataDir, '--json']);
  t.is(created.code, 0, created.stderr);
  const otherTenant = JSON.parse(created.stdout) as { live: { project_id: string } };
  const otherKey = (await createKeyWithCli(server.dataDir, ['--project', otherTenant.live.project_id, '--kind', 'publishable'])).key;

  const here = await collect({ components: own('tenant1') });
  const there = await collect({ components: own('tenant1') }, otherKey);
  const sandbox = await collect({ components: own('tenant1') }, server.bootstrap.keys.sandbox_secret.key);
  t.is(there.status, 200, there.text);
  t.not(there.body.data.fp_id, here.body.data.fp_id);
  t.is(there.body.data.seen_count, 1);
  t.is(sandbox.body.data.fp_id, here.body.data.fp_id);
  t.is(sandbox.body.data.seen_count, 1, 'sightings are per environment (DESIGN §8)');
  const again = await collect({ components: own('tenant1') });
  t.is(again.body.data.seen_count, 2, 'the live sightings went on counting on their own');
});

test('a body of exactly 64 KiB is accepted', async (t) => {
  const body = paddedBody({ components: own('size1') }, kFingerprintBodyLimit);
  t.is(Buffer.byteLength(body), 64 * 1024);
  const accepted = await api<Sighting>(server, 'POST', '/v1/fp/collect', { key: publishable, rawBody: body });
  t.is(accepted.status, 200, accepted.text);
  t.is(accepted.body.data.seen_count, 1);
});

// ---- refused, and nothing stored ------------------------------------------------------------

/** Sends a request the server must refuse with this status, code and parameter. */
interface Refusal {
  readonly title: string;
  readonly status: number;
  readonly code: string;
  readonly parameter: string;
  send(): Promise<ApiResponse>;
}

function chunkedPost(path: string, key: string, body: string): Promise<{ status: number; json: ApiResponse['body'] }> {
  // fetch always declares Content-Length for a string; this sends the body chunked, without one,
  // so the cap is enforced on the bytes received.
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as ApiResponse['body'] }));
    });
    req.on('error', reject);
    for (let at = 0; at < body.length; at += 8192) req.write(body.slice(at, at + 8192));
    req.end();
  });
}

function refusals(keys: { noScope: string; originBound: string }): Refusal[] {
  const sample = (): SampleComponents => own('kept1');
  const list: Refusal[] = kRejectedBodies.map((rejected) => ({
    title: `schema: ${rejected.title}`,
    status: 400,
    code: 'VALIDATION_ERROR',
    parameter: rejected.parameter,
    send: () => collect(rejected.body),
  }));
  list.push(
    { title: 'body is not JSON', status: 400, code: 'VALIDATION_ERROR', parameter: 'body', send: () => api(server, 'POST', '/v1/fp/collect', { key: publishable, rawBody: '{"components":' }) },
    { title: 'body is a JSON array', status: 400, code: 'VALIDATION_ERROR', parameter: 'body', send: () => collect([sample()]) },
    { title: 'body is empty', status: 400, code: 'VALIDATION_ERROR', parameter: 'body', send: () => api(server, 'POST', '/v1/fp/collect', { key: publishable, rawBody: '' }) },
    { title: 'NUL escaped in a component', status: 400, code: 'NUL_CHARACTER_DETECTED', parameter: 'components.platform', send: () => collect({ components: own('kept1', (c) => (c.platform = 'Linux\u0000x86_64')) }) },
    {
      title: 'raw NUL byte in the body',
      status: 400,
      code: 'NUL_CHARACTER_DETECTED',
      parameter: 'body',
      send: () => api(server, 'POST', '/v1/fp/collect', { key: publishable, rawBody: JSON.stringify({ components: sample() }).replace('Linux x86_64', 'Linux\u0000x86_64') }),
    },
    { title: 'card number in a component', status: 400, code: 'CARD_NUMBER_DETECTED', parameter: 'components.platform', send: () => collect({ components: own('kept1', (c) => (c.platform = '4111 1111 1111 1111')) }) },
    { title: 'card number in a font name', status: 400, code: 'CARD_NUMBER_DETECTED', parameter: 'components.fonts[1]', send: () => collect({ components: own('kept1', (c) => (c.fonts = ['Arial', '5500-0000-0000-0004'])) }) },
    {
      title: 'body one byte above 64 KiB',
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      parameter: 'body',
      send: () => api(server, 'POST', '/v1/fp/collect', { key: publishable, rawBody: paddedBody({ components: sample() }, kFingerprintBodyLimit + 1) }),
    },
    {
      title: 'chunked body above 64 KiB (no Content-Length)',
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      parameter: 'body',
      send: async () => {
        const answer = await chunkedPost('/v1/fp/collect', publishable, paddedBody({ components: sample() }, kFingerprintBodyLimit + 1));
        return { status: answer.status, headers: new Headers(), body: answer.json, text: JSON.stringify(answer.json) };
      },
    },
    { title: 'no key', status: 401, code: 'AUTH_ERROR', parameter: 'authorization', send: () => collect({ components: sample() }, null) },
    { title: 'secret key without fp:write', status: 403, code: 'SCOPE_ERROR', parameter: '', send: () => collect({ components: sample() }, keys.noScope) },
    { title: 'origin the key does not allow', status: 403, code: 'SCOPE_ERROR', parameter: 'origin', send: () => collect({ components: sample() }, keys.originBound, { origin: 'https://evil.example' }) },
    { title: 'no origin for a key bound to origins', status: 403, code: 'SCOPE_ERROR', parameter: 'origin', send: () => collect({ components: sample() }, keys.originBound) },
    {
      title: 'a secret key sent from a page (with Origin)',
      status: 403,
      code: 'SCOPE_ERROR',
      parameter: 'origin',
      send: () => collect({ components: sample() }, server.bootstrap.keys.live_secret.key, { origin: 'https://shop.example' }),
    },
    // The origin is checked before the scopes: the page learns why, and cannot read the answer.
    { title: 'a secret key without fp:write sent from a page', status: 403, code: 'SCOPE_ERROR', parameter: 'origin', send: () => collect({ components: sample() }, keys.noScope, { origin: 'https://shop.example' }) },
  );
  return list;
}

// Serial: AVA runs serial tests before the concurrent ones, so no other test writes sightings
// while this one compares the table before and after.
test.serial('every refusal answers its status, code and parameter, and changes nothing stored', async (t) => {
  const noScope = (await createKeyWithCli(server.dataDir, ['--project', 'live', '--kind', 'secret', '--scopes', 'events:write,scores:read'])).key;
  const originBound = (await createKeyWithCli(server.dataDir, ['--project', 'live', '--kind', 'publishable', '--origins', 'https://shop.example'])).key;
  // A stored sighting with the very components most refusals carry: a refused request that slipped
  // through would bump its seen_count or last_seen.
  const kept = await collect({ components: own('kept1') });
  t.is(kept.status, 200, kept.text);
  const before = storedSightings();

  for (const refusal of refusals({ noScope, originBound })) {
    const response = await refusal.send();
    t.is(response.status, refusal.status, `${refusal.title}: ${response.text}`);
    t.is(response.body.errors[0]?.code, refusal.code, refusal.title);
    t.is(response.body.errors[0]?.parameter, refusal.parameter, refusal.title);
  }

  t.deepEqual(storedSightings(), before);
  const again = await collect({ components: own('kept1') });
  t.is(again.body.data.seen_count, 2);
  // The same key from its allowed origin works, and the answer is readable by that page.
  const allowed = await collect({ components: own('kept1') }, originBound, { origin: 'https://shop.example' });
  t.is(allowed.status, 200, allowed.text);
  t.is(allowed.headers.get('access-control-allow-origin'), 'https://shop.example');
});

test('a secret key from a page is refused without Access-Control-Allow-Origin; from a backend (no Origin) it collects', async (t) => {
  const secret = server.bootstrap.keys.live_secret.key;
  const fromPage = await collect({ components: own('secret1') }, secret, { origin: 'https://shop.example' });
  assertError(t, fromPage, 403, 'SCOPE_ERROR', 'origin');
  t.regex(fromPage.body.errors[0]!.message, /publishable key/);
  t.is(fromPage.headers.get('access-control-allow-origin'), null);
  // Also one that lacks the route's scope: refused for the page first, not for the scope.
  const withoutScope = (await createKeyWithCli(server.dataDir, ['--project', 'live', '--kind', 'secret', '--scopes', 'events:write'])).key;
  const scopeless = await collect({ components: own('secret1') }, withoutScope, { origin: 'https://shop.example' });
  assertError(t, scopeless, 403, 'SCOPE_ERROR', 'origin');
  t.is(scopeless.headers.get('access-control-allow-origin'), null);
  const fromBackend = await collect({ components: own('secret1') }, secret);
  t.is(fromBackend.status, 200, fromBackend.text);
  t.is(fromBackend.body.data.seen_count, 1, 'the refused one was not counted');
});

test('answers of the CORS routes say they vary by Origin, with or without one, allowed or not', async (t) => {
  const checks: Array<[string, Promise<ApiResponse>]> = [
    ['agent without Origin', api(server, 'GET', '/v1/fp/agent.js')],
    ['agent with Origin', api(server, 'GET', '/v1/fp/agent.js', { headers: { origin: 'https://shop.example' } })],
    ['preflight without Origin', api(server, 'OPTIONS', '/v1/fp/collect', { headers: { 'access-control-request-method': 'POST' } })],
    ['collect without Origin', collect({ components: own('vary1') })],
    ['collect refused for its origin', collect({ components: own('vary1') }, server.bootstrap.keys.live_secret.key, { origin: 'https://shop.example' })],
    ['collect with a method it does not take (405)', api(server, 'GET', '/v1/fp/collect', { headers: { origin: 'https://shop.example' } })],
  ];
  for (const [what, answer] of checks) t.is((await answer).headers.get('vary'), 'Origin', what);
  // Refused framing (two Content-Length headers) is answered before the key is read: still the route's answer.
  const framing = await exchangeRaw(server.port, 'POST /v1/fp/collect HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://shop.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}');
  const refused = parseResponses(framing.bytes);
  t.is(refused[0]?.status, 400);
  t.is(refused[0]?.headers.vary, 'Origin', 'refused framing');
  // Routes without CORS do not.
  t.is((await api(server, 'GET', '/healthz')).headers.get('vary'), null);
});

test('a refused origin gets no Access-Control-Allow-Origin, so the page cannot read the answer', async (t) => {
  const originBound = (await createKeyWithCli(server.dataDir, ['--project', 'live', '--kind', 'publishable', '--origins', 'https://shop.example'])).key;
  const refused = await collect({ components: own('origin2') }, originBound, { origin: 'https://evil.example' });
  assertError(t, refused, 403, 'SCOPE_ERROR', 'origin');
  t.is(refused.headers.get('access-control-allow-origin'), null);
});

test('a publishable key is refused with 403 SCOPE_ERROR on every keyed route but POST /v1/fp/collect', async (t) => {
  // The real route table; the handlers are never reached, since the scope check comes first.
  const handlers = new Proxy({}, { get: () => () => data({}) }) as RouteHandlers;
  const routes = buildRouteTable(handlers);
  const fpWrite = routes.filter((route) => route.scope === 'fp:write').map((route) => `${route.method} ${route.pattern}`);
  t.deepEqual(fpWrite, ['POST /v1/fp/collect'], 'fp:write (the publishable scope) must open only the collect route');
  for (const route of routes.filter((r) => r.auth === 'key' && r.scope !== 'fp:write')) {
    const path = route.pattern.replace(/:[a-z_]+/g, 'x');
    const response = await api(server, route.method, path, { key: publishable, body: route.body === 'none' ? undefined : {} });
    assertError(t, response, 403, 'SCOPE_ERROR', '');
  }
});

test('GET is not a method of the collect route', async (t) => {
  const response = await api(server, 'GET', '/v1/fp/collect', { key: publishable });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'POST');
});

// ---- CORS -----------------------------------------------------------------------------------

test('an Origin that holds a card number is not reflected, in a preflight nor in an answer', async (t) => {
  const origin = 'https://4111111111111111.example';
  const preflight = await api(server, 'OPTIONS', '/v1/fp/collect', { headers: { origin, 'access-control-request-method': 'POST' } });
  t.is(preflight.headers.get('access-control-allow-origin'), null);
  const answer = await collect({ components: {} }, publishable, { origin });
  t.is(answer.headers.get('access-control-allow-origin'), null);
  t.false(JSON.stringify([...answer.headers]).includes('4111'));
  t.is((await collect({ components: {} }, publishable, { origin: 'https://shop.example' })).headers.get('access-control-allow-origin'), 'https://shop.example');
});

test('the collect route answers a CORS preflight', async (t) => {
  const response = await api(server, 'OPTIONS', '/v1/fp/collect', {
    headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
  t.is(response.status, 200);
  t.is(response.headers.get('access-control-allow-origin'), 'https://shop.example');
  t.is(response.headers.get('access-control-allow-methods'), 'POST');
  const allowHeaders = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
  t.true(allowHeaders.includes('authorization'));
  t.true(allowHeaders.includes('content-type'));
  t.truthy(response.headers.get('access-control-max-age'));
  t.is(response.headers.get('vary'), 'Origin');
});

test('a cross-origin collect answer lets the page read it and the rate-limit headers', async (t) => {
  const response = await collect({ components: own('cors1') }, publishable, { origin: 'http://127.0.0.1:9' });
  t.is(response.status, 200);
  t.is(response.headers.get('access-control-allow-origin'), 'http://127.0.0.1:9');
  t.regex(response.headers.get('access-control-expose-headers') ?? '', /Retry-After/);
});

// ---- the agent script -----------------------------------------------------------------------

test('GET /v1/fp/agent.js serves the agent without a key, outside the envelope, cacheable', async (t) => {
  const response = await api(server, 'GET', '/v1/fp/agent.js', { headers: { origin: 'https://shop.example' } });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/javascript; charset=utf-8');
  t.is(response.headers.get('cache-control'), 'public, max-age=3600');
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
  // Subresource integrity needs CORS on the script itself.
  t.is(response.headers.get('access-control-allow-origin'), 'https://shop.example');
  t.is(response.text, readFileSync(kAgentSourcePath, 'utf8'));
  t.notThrows(() => new Script(response.text, { filename: 'agent.js' }));
});

test('the agent script route takes only GET', async (t) => {
  const response = await api(server, 'POST', '/v1/fp/agent.js', { body: {} });
  t.is(response.status, 405);
  t.is(response.body.errors[0]?.code, 'NOT_FOUND');
});

// ---- rate limits ----------------------------------------------------------------------------

test('per key and address, and per key: 429 with Retry-After and RateLimit-* headers, nothing stored', async (t) => {
  // TRUST_PROXY lets the test speak from several addresses (the last X-Forwarded-For hop). A day
  // long window: the counts cannot be reset by a window turning during the test (short of UTC
  // midnight).
  const limited = await startServer({
    env: { RATE_LIMIT_FP_PER_KEY_AND_ADDRESS: '3', RATE_LIMIT_FP_PER_KEY: '5', RATE_LIMIT_WINDOW_SECONDS: '86400', TRUST_PROXY: 'on' },
  });
  t.teardown(() => limited.stop());
  const from = (key: string, address: string, canvas: string, origin?: string) =>
    collect({ components: own(canvas) }, key, { 'x-forwarded-for': `198.51.100.7, ${address}`, ...(origin ? { origin } : {}) }, limited);

  // Per key and address, with the first key.
  const first = limited.bootstrap.keys.live_publishable.key;
  for (let i = 1; i <= 3; i++) t.is((await from(first, '203.0.113.1', 'limited1')).body.data.seen_count, i);
  const before = storedSightings(limited);
  const overAddress = await from(first, '203.0.113.1', 'limited1', 'https://shop.example');
  assertError(t, overAddress, 429, 'RATE_LIMIT_EXCEEDED', '');
  const retryAfter = Number(overAddress.headers.get('retry-after'));
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1);
  t.is(overAddress.headers.get('ratelimit-limit'), '3');
  t.is(overAddress.headers.get('ratelimit-remaining'), '0');
  t.is(overAddress.headers.get('ratelimit-reset'), String(retryAfter));
  // A page can read the 429 and its Retry-After.
  t.is(overAddress.headers.get('access-control-allow-origin'), 'https://shop.example');
  t.deepEqual(storedSightings(limited), before);
  // Another address of the same key still passes: that limit was per key and address.
  const otherAddress = await from(first, '203.0.113.2', 'limited1');
  t.is(otherAddress.status, 200, otherAddress.text);
  t.is(otherAddress.body.data.seen_count, 4);

  // Per key, with a second key whose addresses each stay within their own limit.
  const second = (await createKeyWithCli(limited.dataDir, ['--project', 'live', '--kind', 'publishable'])).key;
  for (const address of ['203.0.113.1', '203.0.113.1', '203.0.113.1', '203.0.113.2', '203.0.113.2']) {
    t.is((await from(second, address, 'limited2')).status, 200);
  }
  const beforeKey = storedSightings(limited);
  const overKey = await from(second, '203.0.113.3', 'limited2');
  assertError(t, overKey, 429, 'RATE_LIMIT_EXCEEDED', '');
  t.is(overKey.headers.get('ratelimit-limit'), '5');
  t.is(overKey.headers.get('ratelimit-remaining'), '0');
  t.truthy(overKey.headers.get('retry-after'));
  t.deepEqual(storedSightings(limited), beforeKey);
});

// A publishable key is public: one address sending above its own limit must not exhaust
// RATE_LIMIT_FP_PER_KEY and lock every shopper of that key out.
test('requests refused per address do not use up the key-wide budget', async (t) => {
  const limited = await startServer({
    env: { RATE_LIMIT_FP_PER_KEY_AND_ADDRESS: '2', RATE_LIMIT_FP_PER_KEY: '4', RATE_LIMIT_WINDOW_SECONDS: '86400', TRUST_PROXY: 'on' },
  });
  t.teardown(() => limited.stop());
  const key = limited.bootstrap.keys.live_publishable.key;
  const from = (address: string) => collect({ components: own('budget1') }, key, { 'x-forwarded-for': address }, limited);
  const flood: number[] = [];
  for (let i = 0; i < 5; i++) flood.push((await from('203.0.113.66')).status);
  t.deepEqual(flood, [200, 200, 429, 429, 429]);
  // Two requests of the key were admitted, two below its limit of four: a shopper elsewhere passes.
  t.is((await from('203.0.113.67')).status, 200);
});

// A host or a line is given a whole IPv6 /64: its addresses are one caller, not one each.
test('per key and address counts an IPv6 caller by its /64', async (t) => {
  const limited = await startServer({
    env: { RATE_LIMIT_FP_PER_KEY_AND_ADDRESS: '2', RATE_LIMIT_FP_PER_KEY: '100', RATE_LIMIT_WINDOW_SECONDS: '86400', TRUST_PROXY: 'on' },
  });
  t.teardown(() => limited.stop());
  const key = limited.bootstrap.keys.live_publishable.key;
  const from = (address: string) => collect({ components: own('slash64') }, key, { 'x-forwarded-for': address }, limited);
  const statuses: number[] = [];
  for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3']) statuses.push((await from(address)).status);
  t.deepEqual(statuses, [200, 200, 429]);
  t.is((await from('2001:db8:1:3::1')).status, 200, 'another /64 is another caller');
});
