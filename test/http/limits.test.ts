// Rate limits over real HTTP (interface, "Limits"): fixed window, per key and per method and route
// pattern; the failed-lookup limit per caller address; TRUST_PROXY.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { api, runCli, startServer, waitFor, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { exchangeRaw, parseResponses } from '../_helpers/raw-http.js';

async function createKey(server: TestServer): Promise<string> {
  const result = await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', 'live', '--kind', 'secret', '--json']);
  return JSON.parse(result.stdout).key;
}

function expectLimited(t: any, response: Awaited<ReturnType<typeof api>>, limit: number): void {
  t.is(response.status, 429);
  t.is(response.body.errors[0]?.code, 'RATE_LIMIT_EXCEEDED');
  const retryAfter = Number(response.headers.get('retry-after'));
  t.true(retryAfter >= 1);
  t.is(response.headers.get('ratelimit-limit'), String(limit));
  t.is(response.headers.get('ratelimit-remaining'), '0');
  t.is(Number(response.headers.get('ratelimit-reset')), retryAfter);
}

const kWindowSeconds = 4;
const windowIndex = (seconds: number): number => Math.floor(Date.now() / (seconds * 1000));

/**
 * Runs `attempt` until one run of it starts and ends in the same window of `windowSeconds` of the
 * server's fixed windows (epoch-aligned; the server shares this machine's clock), then runs the
 * checks that run returned. A slow machine only makes it take more attempts: nothing is asserted
 * about how long anything takes. After a run that crossed into the next window, `afterCrossing`
 * gets that window's index (to leave no count behind for the next attempt).
 */
async function inOneWindowOf(
  windowSeconds: number,
  maxAttempts: number,
  attempt: () => Promise<() => void>,
  afterCrossing: (endedIn: number) => Promise<unknown>,
): Promise<void> {
  for (let attempts = 1; ; attempts++) {
    const before = windowIndex(windowSeconds);
    const check = await attempt();
    const after = windowIndex(windowSeconds);
    if (after === before) {
      check();
      return;
    }
    if (attempts >= maxAttempts) throw new Error(`no attempt ran within one rate-limit window of ${windowSeconds} s`);
    await afterCrossing(after);
  }
}

/** inOneWindowOf kWindowSeconds, each attempt with two new keys, so that per-key counters never carry over. */
function inOneWindow(server: TestServer, sequence: (key: string, otherKey: string) => Promise<() => void>): Promise<void> {
  return inOneWindowOf(kWindowSeconds, 50, async () => sequence(await createKey(server), await createKey(server)), async () => undefined);
}

/** The failed-lookup tests' window: long, so that a run rarely crosses into the next one. */
const kLookupWindowSeconds = 60;

/**
 * inOneWindowOf kLookupWindowSeconds. The failed-lookup counter is per address, which the attempts
 * share, so a run that crossed into the next window left hits in that window's counter: the next
 * attempt waits for the window after it, which starts empty (at most a window's wait, and only when
 * a run of a few requests crossed a minute's boundary).
 */
function inOneLookupWindow(sequence: () => Promise<() => void>): Promise<void> {
  return inOneWindowOf(kLookupWindowSeconds, 3, sequence, (endedIn) =>
    waitFor(() => windowIndex(kLookupWindowSeconds) !== endedIn, 'a window with no failed lookups counted', (kLookupWindowSeconds + 30) * 1000));
}

test.serial('requests per key and route pattern are limited in a fixed window, and the window resets', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT_PER_ROUTE: '3', RATE_LIMIT_WINDOW_SECONDS: String(kWindowSeconds) } });
  try {
    let dropped = minimalEvent();
    let limitedKey = '';
    await inOneWindow(server, async (key, anotherKey) => {
      limitedKey = key;
      dropped = minimalEvent();
      // Three different concrete paths of one pattern share one counter.
      const first: Array<Awaited<ReturnType<typeof api>>> = [];
      for (let i = 0; i < 3; i++) first.push(await api(server, 'GET', `/v1/scores/${randomUUID()}`, { key }));
      const fourth = await api(server, 'GET', `/v1/scores/${randomUUID()}`, { key });
      // HEAD is the GET without its body: it counts as GET (README, RATE_LIMIT_PER_ROUTE).
      const head = await api(server, 'HEAD', `/v1/scores/${randomUUID()}`, { key });
      // Another route of the same key has its own counter; so has another key on the same route.
      const otherRoute = await api(server, 'POST', '/v1/events', { key, body: minimalEvent() });
      const otherKey = await api(server, 'GET', `/v1/scores/${randomUUID()}`, { key: anotherKey });
      // A limited request is not processed: the event is not stored.
      await api(server, 'POST', '/v1/events', { key, body: minimalEvent() });
      await api(server, 'POST', '/v1/events', { key, body: minimalEvent() });
      const refused = await api(server, 'POST', '/v1/events', { key, body: dropped });
      return () => {
        for (const response of first) t.is(response.status, 404);
        expectLimited(t, fourth, 3);
        t.is(head.status, 429);
        t.is(head.headers.get('ratelimit-limit'), '3');
        t.is(otherRoute.status, 200);
        t.is(otherKey.status, 404);
        expectLimited(t, refused, 3);
      };
    });
    // The window turns: allowed again, and the refused event was never stored.
    const limitedIn = windowIndex(kWindowSeconds);
    const allowed = await waitFor(async () => {
      if (windowIndex(kWindowSeconds) === limitedIn) return null;
      const response = await api(server, 'GET', `/v1/scores/${dropped.event_id}`, { key: limitedKey });
      return response.status === 429 ? null : response;
    }, 'the next window');
    t.is(allowed.status, 404);
  } finally {
    await server.stop();
  }
});

test.serial('failed lookups of well-formed keys are limited per caller address; then 429 with only Retry-After', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT_FAILED_KEY_LOOKUPS: '3', RATE_LIMIT_WINDOW_SECONDS: String(kLookupWindowSeconds) } });
  try {
    const unknown = (): string => `ak_live_${randomUUID().replaceAll('-', '').slice(0, 22)}`;
    await inOneLookupWindow(async () => {
      const first: Array<Awaited<ReturnType<typeof api>>> = [];
      for (let i = 0; i < 3; i++) first.push(await api(server, 'POST', '/v1/events', { key: unknown(), body: minimalEvent() }));
      const limited = await api(server, 'POST', '/v1/events', { key: unknown(), body: minimalEvent() });
      // Malformed keys are not lookups: still 401. A valid key from the same address still works.
      const malformed = await api(server, 'POST', '/v1/events', { key: 'ak_live_x', body: minimalEvent() });
      const valid = await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body: minimalEvent() });
      // Without TRUST_PROXY, X-Forwarded-For does not make another caller.
      const spoofed = await api(server, 'POST', '/v1/events', { key: unknown(), headers: { 'x-forwarded-for': '198.51.100.9' }, body: minimalEvent() });
      return () => {
        for (const response of first) t.is(response.status, 401);
        t.is(limited.status, 429);
        t.is(limited.body.errors[0]?.code, 'RATE_LIMIT_EXCEEDED');
        t.true(Number(limited.headers.get('retry-after')) >= 1);
        t.is(limited.headers.get('ratelimit-limit'), null);
        t.is(limited.headers.get('ratelimit-remaining'), null);
        t.is(limited.headers.get('ratelimit-reset'), null);
        t.is(malformed.status, 401);
        t.is(valid.status, 200);
        t.is(spoofed.status, 429);
      };
    });
  } finally {
    await server.stop();
  }
});

test.serial('with TRUST_PROXY on, the caller is the last X-Forwarded-For hop', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT_FAILED_KEY_LOOKUPS: '2', RATE_LIMIT_WINDOW_SECONDS: String(kLookupWindowSeconds), TRUST_PROXY: 'on' } });
  try {
    const unknown = 'ak_live_AAAAAAAAAAAAAAAAAAAAAA';
    const from = (chain: string) => api(server, 'POST', '/v1/events', { key: unknown, headers: { 'x-forwarded-for': chain }, body: minimalEvent() });
    await inOneLookupWindow(async () => {
      const statuses = [
        (await from('198.51.100.1')).status,
        (await from('203.0.113.50, 198.51.100.1')).status,
        (await from('198.51.100.1')).status,
        // Another last hop is another caller, whatever the client put in front of it.
        (await from('198.51.100.1, 198.51.100.2')).status,
      ];
      return () => t.deepEqual(statuses, [401, 401, 429, 401], 'the third failure from 198.51.100.1 is refused; 198.51.100.2 is another caller');
    });
  } finally {
    await server.stop();
  }
});

test.serial('with TRUST_PROXY on, a proxy that adds its own X-Forwarded-For line names the caller: the last hop of the last line', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT_FAILED_KEY_LOOKUPS: '2', RATE_LIMIT_WINDOW_SECONDS: String(kLookupWindowSeconds), TRUST_PROXY: 'on' } });
  try {
    // HAProxy's `option forwardfor` adds a line rather than joining the client's; fetch would join them.
    const from = async (lines: readonly string[]): Promise<number> => {
      const head = ['GET /v1/rules HTTP/1.1', 'Host: 127.0.0.1', 'Authorization: Bearer ak_live_BBBBBBBBBBBBBBBBBBBBBB', ...lines.map((line) => `X-Forwarded-For: ${line}`)];
      const { bytes } = await exchangeRaw(server.port, `${head.join('\r\n')}\r\n\r\n`, 1);
      return parseResponses(bytes)[0]!.status;
    };
    await inOneLookupWindow(async () => {
      const statuses: number[] = [];
      // The client invents a new first line each time; the proxy's line names it as 198.51.100.3.
      for (let i = 1; i <= 3; i++) statuses.push(await from([`203.0.113.${i}`, '198.51.100.3']));
      statuses.push(await from(['198.51.100.3', '198.51.100.4']));
      // An empty first line is the client's too: the proxy's line still names the caller, whose
      // third failure (in a line of its own) is refused.
      for (let i = 0; i < 2; i++) statuses.push(await from(['', '198.51.100.5']));
      statuses.push(await from(['198.51.100.5']));
      return () => t.deepEqual(statuses, [401, 401, 429, 401, 401, 401, 429], 'the third failure from 198.51.100.3 is refused, whatever line came first; 198.51.100.4 is another caller; 198.51.100.5 is counted after an empty line');
    });
  } finally {
    await server.stop();
  }
});
