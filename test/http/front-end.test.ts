// The uWebSockets.js front end over real HTTP: envelope, request ids, routing, body caps, JSON,
// NUL and card-number refusals, aborted and slow bodies.
import test from 'ava';
import { api, startServer, sleep, storedEventCount, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { openSocket, readResponse, requestHead } from '../_helpers/raw-http.js';

let server: TestServer;
let key: string;

test.before(async () => {
  server = await startServer();
  key = server.bootstrap.keys.live_secret.key;
});

test.after.always(async () => {
  await server?.stop();
});

const kMiB = 1024 * 1024;

/** A JSON object body of exactly `size` bytes: {"pad":"xxx..."} */
function paddedBody(size: number): string {
  const prefix = '{"pad":"';
  const suffix = '"}';
  return prefix + 'x'.repeat(size - prefix.length - suffix.length) + suffix;
}

test('every response is a JSON envelope with a fresh x-request-id', async (t) => {
  const response = await api(server, 'GET', '/healthz');
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/json');
  t.regex(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  t.is(response.body.status, 1);
  t.deepEqual(response.body.errors, []);
  t.is(response.body.data.status, 'ok');
});

test('a well-formed x-request-id is echoed; a malformed one is replaced', async (t) => {
  const echoed = await api(server, 'GET', '/healthz', { headers: { 'x-request-id': 'req-42_a.b:c' } });
  t.is(echoed.headers.get('x-request-id'), 'req-42_a.b:c');
  // A UUID and digits of an order are ids; a card number is not echoed nor logged.
  for (const id of [crypto.randomUUID(), 'order-20261129-123456789']) t.is((await api(server, 'GET', '/healthz', { headers: { 'x-request-id': id } })).headers.get('x-request-id'), id);
  for (const bad of ['x'.repeat(129), 'has space', 'semi;colon', 'um-ümlaut', '4111111111111111', 'req-4111-1111-1111-1111']) {
    const replaced = await api(server, 'GET', '/healthz', { headers: { 'x-request-id': bad } }).catch(() => null);
    if (replaced === null) continue; // fetch itself refuses some header values
    t.not(replaced.headers.get('x-request-id'), bad);
    t.regex(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  }
  const longest = 'a'.repeat(128);
  t.is((await api(server, 'GET', '/healthz', { headers: { 'x-request-id': longest } })).headers.get('x-request-id'), longest);
});

test('errors carry x-request-id too', async (t) => {
  const response = await api(server, 'POST', '/v1/events', { headers: { 'x-request-id': 'abc' }, body: {} });
  t.is(response.status, 401);
  t.is(response.headers.get('x-request-id'), 'abc');
});

test('unknown routes answer 404 NOT_FOUND in the envelope', async (t) => {
  for (const path of ['/', '/nope', '/v1/event', '/v1/events/extra', '/v2/events']) {
    const response = await api(server, 'GET', path, { key });
    t.is(response.status, 404, path);
    t.is(response.headers.get('content-type'), 'application/json');
    t.deepEqual(response.body.data, null);
    t.is(response.body.status, 0);
    t.is(response.body.errors[0]?.code, 'NOT_FOUND');
  }
});

test('a known path with the wrong method answers 405 with Allow, in the envelope', async (t) => {
  const response = await api(server, 'DELETE', '/v1/events', { key });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'POST');
  t.is(response.body.errors[0]?.code, 'NOT_FOUND');
  const put = await api(server, 'PUT', '/healthz');
  t.is(put.status, 405);
  t.is(put.headers.get('allow'), 'GET, HEAD', 'HEAD is served wherever GET is');
  const head = await api(server, 'HEAD', '/v1/events', { key });
  t.is(head.status, 405);
  t.is(head.headers.get('allow'), 'POST');
});

test('the fixed paths below /v1/rules take only their own methods: 405, not a rule of that reserved id', async (t) => {
  const rule = { rule_id: 'backtests', kind: 'scoring', status: 'active', expression: 'true', score_delta: 1 };
  for (const [method, path, allow] of [['PUT', '/v1/rules/backtests', 'POST'], ['GET', '/v1/rules/backtests', 'POST'], ['GET', '/v1/rules/publish', 'POST'], ['PUT', '/v1/rules/publish', 'POST']] as const) {
    const response = await api(server, method, path, { key, body: method === 'PUT' ? rule : undefined });
    t.is(response.status, 405, `${method} ${path}: ${response.text}`);
    t.is(response.headers.get('allow'), allow);
    t.is(response.body.errors[0]?.code, 'NOT_FOUND');
  }
});

test('HEAD answers as GET would, without the body', async (t) => {
  for (const [path, withKey] of [['/healthz', false], ['/metrics', false], ['/v1/fp/agent.js', false], [`/v1/scores/${minimalEvent().event_id}`, true], ['/v1/rules', true]] as const) {
    const get = await fetch(`${server.url}${path}`, { headers: withKey ? { authorization: `Bearer ${key}` } : {} });
    const getBody = await get.arrayBuffer();
    const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: withKey ? { authorization: `Bearer ${key}`, 'x-request-id': 'head-1' } : { 'x-request-id': 'head-1' } });
    t.is(head.status, get.status, path);
    t.is(head.headers.get('content-type'), get.headers.get('content-type'), path);
    t.is(head.headers.get('x-request-id'), 'head-1', path);
    t.is((await head.arrayBuffer()).byteLength, 0, path);
    // /metrics changes between two scrapes; the others answer the same bytes.
    if (path !== '/metrics') t.is(Number(head.headers.get('content-length')), getBody.byteLength, path);
  }
  const unauthorised = await fetch(`${server.url}/v1/rules`, { method: 'HEAD' });
  t.is(unauthorised.status, 401);
  t.regex(unauthorised.headers.get('www-authenticate') ?? '', /^Bearer /);
});

/** JSON routes with their minimal valid-looking body; each refuses other media types. */
const kJsonRoutes: ReadonlyArray<readonly [string, string, () => unknown]> = [
  ['POST', '/v1/events', () => minimalEvent()],
  ['PATCH', '/v1/cases/case_nope?project_id=x', () => ({ status: 'closed' })],
  ['POST', '/v1/rules', () => ({ rule_id: 'ct_test', kind: 'monitoring', status: 'active', expression: 'true' })],
  ['PUT', '/v1/policy', () => ({ review_threshold: 40, block_threshold: 80 })],
];

for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', 'application/json-patch+json', '']) {
  test(`Content-Type ${JSON.stringify(contentType)} on JSON routes: 400 VALIDATION_ERROR on Content-Type, nothing stored`, async (t) => {
    for (const [method, path, body] of kJsonRoutes) {
      const sent = body();
      // A Uint8Array body makes fetch send no Content-Type of its own.
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (contentType !== '') headers['content-type'] = contentType;
      const response = await fetch(`${server.url}${path}`, { method, headers, body: new TextEncoder().encode(JSON.stringify(sent)) });
      const answer = await response.json() as { errors: Array<{ code: string; parameter: string }> };
      t.is(response.status, 400, `${method} ${path}`);
      t.is(answer.errors[0]?.code, 'VALIDATION_ERROR');
      t.is(answer.errors[0]?.parameter, 'Content-Type');
      if (path === '/v1/events') t.is(storedEventCount(server.dataDir, (sent as { event_id: string }).event_id), 0);
    }
    const rules = await api(server, 'GET', '/v1/rules/ct_test', { key });
    t.is(rules.status, 404, 'the rule was not created');
  });
}

test('application/json with parameters, in any case, is JSON', async (t) => {
  for (const contentType of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8', ' application/json ']) {
    const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent(), headers: { 'content-type': contentType } });
    t.is(response.status, 200, `${contentType}: ${response.text}`);
  }
});

test('a publish with no body needs no Content-Type; one with a body needs JSON', async (t) => {
  const bare = await fetch(`${server.url}/v1/rules/publish`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  t.not(bare.status, 400, await bare.text());
  const text = await fetch(`${server.url}/v1/rules/publish`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, body: '{}' });
  t.is(text.status, 400);
  t.is(((await text.json()) as { errors: Array<{ parameter: string }> }).errors[0]?.parameter, 'Content-Type');
});

test('/metrics is Prometheus text with requests by route and status and a latency histogram', async (t) => {
  await api(server, 'GET', '/healthz');
  await api(server, 'GET', '/nope');
  const response = await fetch(`${server.url}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await response.text();
  t.regex(text, /fraud_scorer_http_requests_total\{route="GET \/healthz",status="200"\} \d+/);
  t.regex(text, /fraud_scorer_http_requests_total\{route="unmatched",status="404"\} \d+/);
  t.regex(text, /fraud_scorer_http_request_duration_seconds_bucket\{le="0.005",route="GET \/healthz"\} \d+/);
  t.regex(text, /fraud_scorer_async_queue_depth \d+/);
});

test('a body of exactly 1 MiB is read; one byte more is 413 PAYLOAD_TOO_LARGE', async (t) => {
  const atCap = await api(server, 'POST', '/v1/events', { key, rawBody: paddedBody(kMiB) });
  t.is(atCap.status, 400);
  t.is(atCap.body.errors[0]?.code, 'VALIDATION_ERROR');
  t.is(atCap.body.errors[0]?.parameter, 'event_id');

  // On a connection that stays open (server.ts, #refuseTooLarge: the rest of the body is skipped
  // as it arrives). Sent with Connection: close, the server closes after its answer, and a client
  // still uploading can meet EPIPE before it reads it (seen once under Node 22).
  const overCap = await api(server, 'POST', '/v1/events', { key, rawBody: paddedBody(kMiB + 1), keepAlive: true }).catch((error: Error) => error);
  if (overCap instanceof Error) t.fail(`request failed: ${overCap.message}`);
  else {
    t.is(overCap.status, 413);
    t.is(overCap.body.errors[0]?.code, 'PAYLOAD_TOO_LARGE');
    t.is(overCap.body.errors[0]?.parameter, 'body');
  }
});

test('a chunked body is refused with 413 as soon as it passes the cap, before it ends', async (t) => {
  const socket = await openSocket(server.port);
  socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
  const response = readResponse(socket);
  const chunk = 'x'.repeat(64 * 1024);
  let sent = 0;
  // Send a little more than the cap and then stop: the answer must come without the body ending.
  while (sent <= kMiB + chunk.length) {
    socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    sent += chunk.length;
  }
  const answered = await response;
  t.is(answered.status, 413);
  t.is(JSON.parse(answered.body).errors[0].code, 'PAYLOAD_TOO_LARGE');
  socket.destroy();
});

test('a declared Content-Length over the cap is refused before the body is sent', async (t) => {
  const socket = await openSocket(server.port);
  socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(kMiB + 1) }));
  const answered = await readResponse(socket);
  t.is(answered.status, 413);
  t.truthy(answered.headers['x-request-id']);
  socket.destroy();
});

test('a body sent slowly in pieces is read whole', async (t) => {
  const body = JSON.stringify(minimalEvent());
  const socket = await openSocket(server.port);
  socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }));
  const response = readResponse(socket);
  for (let i = 0; i < body.length; i += 7) {
    socket.write(body.slice(i, i + 7));
    await sleep(5);
  }
  const answered = await response;
  t.is(answered.status, 200, answered.body);
  t.is(JSON.parse(answered.body).data.decision, 'allow');
  socket.destroy();
});

test('a client that disconnects mid-body leaves the server healthy', async (t) => {
  for (let i = 0; i < 20; i++) {
    const socket = await openSocket(server.port);
    socket.write(requestHead('POST', '/v1/events', { Authorization: `Bearer ${key}`, 'Content-Length': '5000' }));
    socket.write('{"event_id": "');
    await sleep(2);
    socket.destroy();
  }
  const health = await api(server, 'GET', '/healthz');
  t.is(health.status, 200);
  const scored = await api(server, 'POST', '/v1/events', { key, body: minimalEvent() });
  t.is(scored.status, 200);
});

const kInvalidBodies: Array<[string, string | Uint8Array]> = [
  ['invalid JSON', '{"event_id": '],
  ['trailing garbage', '{} x'],
  ['an array', '[1, 2]'],
  ['a string', '"payment"'],
  ['a number', '42'],
  ['null', 'null'],
  ['an empty body', ''],
  ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
  ['nesting deeper than 32 levels', `{"extras":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`],
];

for (const [name, body] of kInvalidBodies) {
  test(`${name} is 400 VALIDATION_ERROR on parameter body`, async (t) => {
    const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
    t.is(response.status, 400);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(response.body.errors[0]?.parameter, 'body');
  });
}

test('a raw NUL byte anywhere is 400 NUL_CHARACTER_DETECTED', async (t) => {
  const body = JSON.stringify(minimalEvent()).replace('"payment"', '"pay\u0000ment"');
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
  t.is(response.status, 400);
  t.is(response.body.errors[0]?.code, 'NUL_CHARACTER_DETECTED');
});

test('an escaped NUL (\\u0000) in a value or key is 400 NUL_CHARACTER_DETECTED naming the field', async (t) => {
  const inValue = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ user: { name: 'Ja\u0000ne' } }) });
  t.is(inValue.status, 400);
  t.is(inValue.body.errors[0]?.code, 'NUL_CHARACTER_DETECTED');
  t.is(inValue.body.errors[0]?.parameter, 'user.name');
  const inKey = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { 'a\u0000b': 1 } }) });
  t.is(inKey.status, 400);
  t.is(inKey.body.errors[0]?.code, 'NUL_CHARACTER_DETECTED');
  t.is(inKey.body.errors[0]?.parameter, 'extras.a\u0000b');
  const escapedBackslash = await api(server, 'POST', '/v1/events', { key, rawBody: JSON.stringify(minimalEvent({ user: { name: 'x' } })).replace('"x"', '"\\\\u0000"') });
  t.is(escapedBackslash.status, 200, 'a literal backslash followed by u0000 is not a NUL');
});

const kCardBodies: Array<[string, Record<string, unknown>, string]> = [
  ['a card number in a string', { user: { name: '4111111111111111' } }, 'user.name'],
  ['with spaces between groups', { extras: { note: 'card 4111 1111 1111 1111 exp 12/29' } }, 'extras.note'],
  ['with dashes between groups', { extras: { note: '5555-5555-5555-4444' } }, 'extras.note'],
  ['an Amex number', { extras: { memo: '378282246310005' } }, 'extras.memo'],
  ['as a JSON number', { extras: { pan: 4111111111111111 } }, 'extras.pan'],
  ['deep inside extras', { extras: { a: { b: [{ c: 'x 6011111111111117 y' }] } } }, 'extras.a.b[0].c'],
  // The answer names the member without the card number it refuses to hold.
  ['in a key', { extras: { '4111111111111111': true } }, 'extras.****************'],
  ['in a key with spaces', { extras: { 'card 4111 1111 1111 1111': true } }, 'extras.card **** **** **** ****'],
  ['in a key below an array', { extras: { a: [{ '4111111111111111': true }] } }, 'extras.a[0].****************'],
  ['as a top-level key', { '4111111111111111': 1 }, '****************'],
  ['in a key below one that ends in digits', { extras: { '2024': { '4111111111111111': 1 }, v2: { '4111 1111 1111 1111': 1 } } }, 'extras.2024.****************'],
  ['in a key below one with digits', { extras: { v2: { b: { '4111111111111111': 1 } } } }, 'extras.v2.b.****************'],
  ['in a key in brackets', { extras: { '[4111111111111111]': 1 } }, 'extras.[****************]'],
  ['in a key of mathematical digits (astral: two UTF-16 units each)', { extras: { '\u{1D7D2}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}\u{1D7CF}': 1 } }, 'extras.****************'],
  ['19 digits', { extras: { pan: '6759649826438453128' } }, 'extras.pan'],
];

for (const [name, extra, parameter] of kCardBodies) {
  test(`${name} is 400 CARD_NUMBER_DETECTED`, async (t) => {
    const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent(extra) });
    t.is(response.status, 400, response.text);
    t.is(response.body.errors[0]?.code, 'CARD_NUMBER_DETECTED');
    if (parameter !== '') t.is(response.body.errors[0]?.parameter, parameter);
    t.false(/4111|1111 1111/.test(response.text), 'the answer does not carry the card number back');
  });
}

test('an error caused by something else still never carries a card number back: a key with a NUL, a query parameter named by one', async (t) => {
  const nul = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { '4111111111111111\u0000': 1 } }) });
  t.is(nul.status, 400);
  t.is(nul.body.errors[0]?.code, 'NUL_CHARACTER_DETECTED');
  t.is(nul.body.errors[0]?.parameter, 'extras.****************\u0000');
  const route = await api(server, 'GET', '/v1/4111111111111111', { key });
  t.is(route.status, 404);
  t.is(route.body.errors[0]?.message, 'No route for GET /v1/****************.', 'only the card is masked');
  // In Devanagari digits, URL-escaped: the escapes' hex letters would tell the digits apart.
  const devanagari = [...'5555555555554444'].map((digit) => encodeURIComponent(String.fromCodePoint(0x966 + Number(digit)))).join('');
  const escaped = await api(server, 'GET', `/v1/nope/${devanagari}`, { key });
  t.is(escaped.body.errors[0]?.message, `No route for GET /v1/nope/${'%**%**%**'.repeat(16)}.`);
  for (const query of ['4111111111111111=1', '4111%201111%201111%201111=1', '%34111111111111111=2']) {
    const response = await api(server, 'GET', `/v1/scores/${crypto.randomUUID()}?${query}`, { key });
    t.is(response.status, 400, query);
    t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR', query);
    t.false(/4111|1111 1111/.test(response.text), query);
    t.regex(response.body.errors[0]?.parameter ?? '', /^\*{4}/, query);
  }
});

// Written with JSON escapes (\u0034 is "4", \u0020 a space): what the event would hold is the card number.
const kEscapedCardBodies: Array<[string, string, string]> = [
  ['a digit escaped', '{"note":"\\u0034111111111111111"}', 'extras.note'],
  ['a digit escaped inside', '{"note":"4111 \\u0031111 1111 1111"}', 'extras.note'],
  ['a separator escaped', '{"note":"4111\\u00201111 1111 1111"}', 'extras.note'],
  ['a digit escaped, in a key', '{"\\u0034111111111111111":true}', 'extras.****************'],
  // A control character or a no-break space next to it is no letter: the number is not glued to
  // anything. (Between groups, only a no-break space separates them, as a space does.)
  ['a control character before it', '{"note":"\\u00015555555555554444"}', 'extras.note'],
  ['no-break spaces between its groups', '{"note":"4111\\u00a01111\\u00a01111\\u00a01111"}', 'extras.note'],
  ['zero-width spaces between its groups', '{"note":"4111\\u200b1111\\u200b1111\\u200b1111"}', 'extras.note'],
  ['a no-break space after it', '{"note":"4111 1111 1111 1111\\u00a0"}', 'extras.note'],
  ['an international prefix before it, with more digits than a phone number has', '{"note":"00 4111 1111 1111 1111"}', 'extras.note'],
  ['an escaped euro sign before it', '{"note":"\\u20ac4111111111111111"}', 'extras.note'],
  ['a word after it whose last digit is escaped', '{"note":"4111 1111 1111 1111 3DS\\u0032"}', 'extras.note'],
];

// Characters beyond ASCII as they are, not escaped: only letters glue to a number.
const kUnicodeCardBodies: Array<[string, string, string]> = [
  ['a no-break space before it', '{"note":"Card:\u00a04111 1111 1111 1111"}', 'extras.note'],
  ['a euro sign before it', '{"note":"€4111111111111111"}', 'extras.note'],
  ['an em dash before it', '{"note":"x —4111111111111111"}', 'extras.note'],
  ['narrow no-break spaces between its groups', '{"note":"4111\u202f1111\u202f1111\u202f1111"}', 'extras.note'],
  ['spaced dashes and thin spaces between its groups', '{"note":"4111 - 1111\u20091111 \u2013 1111"}', 'extras.note'],
  // As a copy from a web page or a word processor carries them.
  ['hair spaces, a zero-width space and a soft hyphen between its groups', '{"note":"4111\u200a1111\u200b1111\u00ad1111"}', 'extras.note'],
  // Digits of other scripts are digits (an IME in fullwidth mode, Arabic-Indic digits).
  ['fullwidth digits', '{"note":"カード番号 ４１１１ １１１１ １１１１ １１１１"}', 'extras.note'],
  ['Arabic-Indic digits', '{"note":"٤١١١١١١١١١١١١١١١"}', 'extras.note'],
  ['a phone-like member name that also names a card', '{"mobile_wallet_pan":"378282246310005"}', 'extras.mobile_wallet_pan'],
  // As clients keep query strings and reader output in fields.
  ['form encoding (+ for spaces)', '{"query":"card_number=4111+1111+1111+1111&cvc=123"}', 'extras.query'],
  ['URL encoding', '{"url":"https://shop.example/pay%3Fpan%3D4111111111111111%26cvc%3D1"}', 'extras.url'],
  ['a magnetic track 1', '{"swipe":"%B4111111111111111^DOE/JOHN^2512101"}', 'extras.swipe'],
  ['minus signs between its groups', '{"note":"４１１１−１１１１−１１１１−１１１１"}', 'extras.note'],
  // Named by the string that holds it, not by a phone member whose digits the scan passed over.
  ['a phone member before it that passes Luhn', '{"mobile":"378282246310005","note":"4111 1111 1111 1111"}', 'extras.note'],
  ['a + before it, in a form-encoded text', '{"form":"note=my+card+is+4111111111111111&x=1"}', 'extras.form'],
  ['fullwidth hyphens between fullwidth digits', '{"note":"４１１１－１１１１－１１１１－１１１１"}', 'extras.note'],
  ['a decimal amount before it', '{"note":"paid 19.99 4111 1111 1111 1111"}', 'extras.note'],
  ['a word that starts with digits after it', '{"note":"Paid 4111 1111 1111 1111 3DS ok"}', 'extras.note'],
  ['a word with digits after it', '{"note":"Paid 4111 1111 1111 1111 3DS2"}', 'extras.note'],
  ['Chinese text around it (no spaces between words)', '{"note":"卡号4111111111111111已绑定"}', 'extras.note'],
];

// Numbers as JSON can write them: in exponent form (the 'e' is no letter glued to the digits, the
// '.' no decimal's), and beyond 2^53 (the field is named from the number the digits parse to).
const kNumberCardBodies: Array<[string, string, string]> = [
  ['an exponent', '{"pan":4111111111111111e0}', 'extras.pan'],
  ['a fraction and an exponent', '{"pan":4.111111111111111E15}', 'extras.pan'],
  ['a minus, and an exponent with its sign', '{"pan":-4111111111111111e+0}', 'extras.pan'],
  ['a negative exponent that leaves an integer', '{"pan":41111111111111110e-1}', 'extras.pan'],
  ['an exponent, in an array', '{"list":[1,4111111111111111e0]}', 'extras.list[1]'],
  ['19 digits, beyond 2^53', '{"pan":6759649826438453128}', 'extras.pan'],
  ['19 digits in exponent form', '{"pan":675964982643845312.8e1}', 'extras.pan'],
  ['a fraction of zeros', '{"pan":4111111111111111.0}', 'extras.pan'],
  ['a minus and a fraction of zeros', '{"pan":-4111111111111111.000}', 'extras.pan'],
  // A double holds no such fraction: the number parsed is the card's.
  ['a fraction too small for a double to hold', '{"pan":4111111111111111.1}', 'extras.pan'],
  ['a fraction too small to hold, in exponent form', '{"pan":411111111111111.11e1}', 'extras.pan'],
  ['in exponent form, its digits split in runs of eight', '{"pan":41111111.11111111e8}', 'extras.pan'],
  ['in exponent form, its digits split in runs of ten and six', '{"pan":4111111111.111111e6}', 'extras.pan'],
];

const kRawCardBodies = [
  ...kEscapedCardBodies.map(([what, body, field]) => [`with ${what}`, body, field] as const),
  ...kNumberCardBodies.map(([what, body, field]) => [`as a JSON number with ${what}`, body, field] as const),
  ...kUnicodeCardBodies.map(([what, body, field]) => [`with ${what}`, body, field] as const),
];

for (const [name, extras, parameter] of kRawCardBodies) {
  test(`a card number ${name} is 400 CARD_NUMBER_DETECTED naming its field, and nothing is stored`, async (t) => {
    const event = minimalEvent();
    const body = JSON.stringify(event).replace(/}$/, `,"extras":${extras}}`);
    const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
    t.is(response.status, 400, response.text);
    t.is(response.body.errors[0]?.code, 'CARD_NUMBER_DETECTED');
    t.is(response.body.errors[0]?.parameter, parameter);
    t.is((await api(server, 'GET', `/v1/scores/${event.event_id}`, { key })).status, 404);
  });
}

test('numbers in exponent form that are no card number are accepted: a fraction, a short integer, digits glued to letters in a string', async (t) => {
  const body = JSON.stringify(minimalEvent()).replace(/}$/, ',"extras":{"fraction":4111111111111111e-1,"half":4111111111111111.5,"small":1.5e3,"big":2e10,"hash":"ab4111111111111111e0"}}');
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
  t.is(response.status, 200, response.text);
});

test('escapes that make no card number are accepted', async (t) => {
  const body = JSON.stringify(minimalEvent()).replace(/}$/, ',"extras":{"note":"caf\\u00e9 \\u0031\\u0032\\u0033","n":12345678901234567890.5,"ref":"4111111111111111\\u00e9","ph\\u006fne":"378282246310005","longer":"378282246310005\\u0031","ids":"p?ids=5178%2C3470%2C1884%2C2203","decimal":"4111111111111111\\u002e5"}}');
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
  t.is(response.status, 200, response.text);
});

test('a 19-digit integer that is no card number is refused as beyond 2^53, with the advice to send it as a string, even when its rounded value would read as a card', async (t) => {
  const body = JSON.stringify(minimalEvent()).replace(/}$/, ',"extras":{"order_id":4123456789012347138}}');
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
  t.is(response.status, 400, response.text);
  t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
  t.is(response.body.errors[0]?.parameter, 'extras.order_id');
  t.regex(response.body.errors[0]?.message, /send it as a string/);
});

test('a 19-digit card number as a JSON number is refused (digits beyond 2^53 count)', async (t) => {
  const body = JSON.stringify(minimalEvent()).replace(/}$/, ',"extras":{"pan":6011000990139424}}');
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: body });
  t.is(response.status, 400);
  t.is(response.body.errors[0]?.code, 'CARD_NUMBER_DETECTED');
});

test('UUIDs, timestamps, IP addresses and phone numbers are never taken for card numbers', async (t) => {
  const response = await api(server, 'POST', '/v1/events', {
    key,
    body: minimalEvent({
      context: { ip: '2001:db8::4111:1111', session_id: '41111111-1111-1111-1111-111111111111' },
      user: { phone: '+4915112345678', registered_at: '2024-01-15T10:30:00.123Z' },
      extras: {
        ts_ms: 1700000000000, ts_us: 1700000000000000, ts_ns: '1700000000000000000', compact: '20240115103000',
        ip4: '192.168.100.200', phone_national: '0151 1234 5678', phone_intl: '+1 (415) 555-2671', amount: 1234567890123.45,
        uuid_upper: 'F47AC10B-58CC-4372-A567-0E02B2C3D479', hash: 'a7f3b2c9e1d4411111111111111111118f9e2b7c3d4a1f6e0b5c8d2a9e7f4b1c3',
        // Glued to letters of any script; a decimal that is not whole.
        glued_unicode: 'ß4111111111111111', glued_cyrillic: 'код4111111111111111', not_whole: 4111111111111111.5, in_text_decimal: '4111111111111111.0',
        // The same letters URL-encoded (д is %D0%B4: its %B4 is no track's sentinel).
        glued_encoded: 'ref=%D0%BA%D0%BE%D0%B4111111111111111', glued_encoded_cjk: '%E4%BB%B6411111111111111',
        // Numbers on separate lines or in separate columns are not one number (joined, the
        // address's ZIP and phone, and the TSV's two numbers, would pass Luhn).
        address: '1 Market St\nSan Francisco, CA 94105\n415-555-0006', dates: '2026-11-22\n2026-11-23', tsv: 'order\tamount\n20102168\t98756',
        columns: '4111\t1111\t1111\t1111',
        // Phone numbers in members named like phones, and after an international 00 anywhere
        // (each of these passes Luhn without its prefix or name).
        mobile: '49 151 5924 6862', msisdn: '4915112345678', contact: 'call 00 49 151 0228 9738',
        // Identifiers with a Luhn check digit of their own, and numbers grouped as no card is
        // written (each passes Luhn): no card scheme issues them, or no card is laid out so.
        imei: '490154203237518', sim_iccid: '8944123456789012348', id_number: '9202204720083', gtin: '4006381333924',
        payment_reference: '2024112900012346', iban: 'GB83 NWBK 4022 3991 6242 97', two_dates: '2025-07-08 2024-09-27',
        one_line: '12 Main St, Springfield, IL 55693 818-394-2738', order: 'ORD-2024-4662933167',
        social_id: 100017262433033, ach_trace: '121000247173457', nrb: '17 1540 5136 2785 6882 0581 2378',
        usps: '9205 6252 8410 6220 0672 72', ticks: '637771268136592499', national_id: '440305196608063489',
        gtin14: '39383103493644', lloyds: 'GB77 LOYD 3021 6022 4284 58', wei: '4694527000000000000', sa_id: '6304218144087',
        iban_de: 'DE46 4805 0161 5349 8550 07', iban_it: 'IBAN: IT73 X062 3015 6829 6780 4552 518', iban_at: 'AT17 6000 0629 7320 8728',
        account_ru: '4081 7810 0480 7896 0679',
      },
    }),
  });
  t.is(response.status, 200, response.text);
});

test('hundreds of malformed requests leave the server healthy and serving', async (t) => {
  const bad: Array<Promise<unknown>> = [];
  for (let i = 0; i < 300; i++) {
    const kind = i % 6;
    const body = kind === 0 ? '{' : kind === 1 ? '[]' : kind === 2 ? '{"a":"\u0000"}' : kind === 3 ? '{"x":"4111111111111111"}' : kind === 4 ? '{"event_id":5}' : 'nul\u0000l';
    bad.push(api(server, 'POST', i % 2 === 0 ? '/v1/events' : '/v1/nope', { key: i % 3 === 0 ? 'ak_live_short' : key, rawBody: body }));
  }
  const responses = (await Promise.all(bad)) as Array<{ status: number }>;
  t.true(responses.every((response) => response.status >= 400 && response.status < 500));
  t.is((await api(server, 'GET', '/healthz')).status, 200);
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent() })).status, 200);
});
