// Bodies that JSON parsers read differently (validation/json-body.ts, docs/events.md): a member
// name twice in one object, and a \uD800-\uDFFF escape without its pair. Over real HTTP: each is
// refused with 400 VALIDATION_ERROR naming the member, stores nothing, and the same event_id with
// a clean body is then scored as new.
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { api, startServer, storedEventCount, type TestServer } from '../_helpers/server.js';

let server: TestServer;
let key: string;

test.before(async () => {
  server = await startServer();
  key = server.bootstrap.keys.live_secret.key;
});

test.after.always(async () => {
  await server?.stop();
});

/** `members` is the JSON text of the body after `event_id` and `event_type`. */
function bodyText(eventId: string, members: string): string {
  return `{"event_id":"${eventId}","event_type":"payment"${members === '' ? '' : `,${members}`}}`;
}

const refused = test.macro(async (t: ExecutionContext, members: string, parameter: string) => {
  const eventId = randomUUID();
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: bodyText(eventId, members) });
  t.is(response.status, 400, response.text);
  t.is(response.body.status, 0);
  t.is(response.body.data, null);
  t.is(response.body.errors[0]?.code, 'VALIDATION_ERROR');
  t.is(response.body.errors[0]?.parameter, parameter);
  t.false(/(?<!\\)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(response.text), 'no surrogate escape in the answer: I-JSON');
  t.false(response.text.includes('4111111111111111'), 'no card number in the answer');
  t.is(storedEventCount(server.dataDir, eventId), 0, 'a refused event stores nothing');
  const clean = await api(server, 'POST', '/v1/events', { key, rawBody: bodyText(eventId, '') });
  t.is(clean.status, 200, 'the event_id is still free: ' + clean.text);
});

test('a declared mark sent twice is refused, whichever comes last', refused, '"user":{"trusted":false,"trusted":true}', 'user.trusted');
test('a hard-block mark sent twice is refused', refused, '"user":{"is_known_fraud":true,"is_known_fraud":false}', 'user.is_known_fraud');
test('a top-level member sent twice is refused', refused, '"brand_id":"a","brand_id":"b"', 'brand_id');
test('a member name sent twice, once escaped, is refused', refused, '"user":{"vip":false,"v\\u0069p":true}', 'user.vip');
test('a member sent twice inside an array item is refused', refused, '"extras":{"list":[{"a":1},{"a":1,"b":2,"a":3}]}', 'extras.list[1].a');
test('a lone high surrogate in external_account_id is refused', refused, '"external_account_id":"user\\ud800"', 'external_account_id');
// The answer names it with the escape's text: a lone surrogate in the answer would make it JSON that strict parsers (jq) refuse.
test('a lone low surrogate in a member name is refused, and named as its escape', refused, '"extras":{"k\\uDC00":1}', 'extras.k\\udc00');
test('a lone high surrogate in a top-level member name is refused, and named as its escape', refused, '"\\ud800":1', '\\ud800');
// A card number beside it is masked as anywhere else, and the escape's hex digits are not taken for a card's.
test('a lone surrogate before a card number in a member name: the card is masked', refused, '"\\ud8004111111111111111":1', '\\ud800****************');

test('one name in different objects, member-like text inside strings and escaped surrogate pairs are accepted', async (t) => {
  const members = [
    '"user":{"country":"GB","name":"say \\"a\\": 1, \\"a\\": 2"}',
    '"context":{"country":"GB"}',
    '"extras":{"a":{"a":1},"list":[{"a":1},{"a":2}],"emoji":"\\ud83d\\ude00","q\\\\":"\\\\ud800"}',
  ].join(',');
  const eventId = randomUUID();
  const response = await api(server, 'POST', '/v1/events', { key, rawBody: bodyText(eventId, members) });
  t.is(response.status, 200, response.text);
  t.is(storedEventCount(server.dataDir, eventId), 1);
});
