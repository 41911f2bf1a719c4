// The event log's payload column (scoring/stored-payload.ts): the body comes back exactly as sent,
// whatever it holds, and the SQL view of migration 21 reads the same text as the code does.
import test from 'ava';
import Database from 'better-sqlite3';
import { kCodedNames, kMarker, payloadText, payloadViewSql, storedPayload } from '../../src/scoring/stored-payload.js';

const kPayment = JSON.stringify({
  event_id: '2face1cd-541d-42ac-9799-cac22adc9a29',
  event_type: 'payment',
  context: { ip: '10.0.84.23', user_agent: 'Mozilla/5.0', session_id: 's403511889', fp_id: 'fp_a7175' },
  external_account_id: 'user-7175',
  user: { email: 'user7175@example0.com', phone: '+4915010265475', country: 'PL', registered_at: '2024-03-12T00:00:00Z' },
  payment: { amount_cents: 141857, currency: 'EUR', method: 'card', bin: '411111', last4: '9175', billing_country: 'GB', card_token: 'tok_107175' },
});

/** Bodies a client may send, each with something the coding must not change. */
const kBodies = [
  kPayment,
  JSON.stringify(JSON.parse(kPayment), null, 2), // pretty: "name": with a space stays
  '{"event_id":"a","event_type":"login","extras":{"email":"x","event_id":{"event_id":1}}}', // names inside extras are coded too
  '{"event_id":"a\\"email\\":b","event_type":"payment"}', // a name and colon inside a string, quotes escaped
  '{"event_id":"\\"email\\":","extras":{"\\"email\\"":"\\"phone\\":"}}',
  '{"event_id":"x","extras":{"unknown_name":1,"emails":2,"mail":3,"":4}}', // not in the table: as is
  '{"event_id":"\\u0001\\u0002\\n","event_type":"payment","extras":{"ü":"😀","\\u0003":"\\t"}}', // escapes stay escapes
  '{ "event_id" : "spaced" ,\n\t"event_type":\r\n"payout" }',
  '{}',
  '',
];

test('every body comes back exactly as sent, coded with the marker first', (t) => {
  for (const body of kBodies) {
    const stored = storedPayload(body);
    t.is(stored[0], kMarker, body);
    t.is(payloadText(stored), body);
  }
});

test('a payment loses the names of the schema: a third of its bytes', (t) => {
  const stored = storedPayload(kPayment);
  for (const name of kCodedNames) t.false(stored.includes(`"${name}":`), name);
  t.true(Buffer.byteLength(stored) < Buffer.byteLength(kPayment) * 0.7, `${Buffer.byteLength(stored)} of ${Buffer.byteLength(kPayment)} bytes`);
  // The values stay as they were sent (an erasure finds and scrubs them; nothing is hashed here).
  for (const value of ['user7175@example0.com', '+4915010265475', 'tok_107175', '10.0.84.23']) t.true(stored.includes(value), value);
});

test('payloads stored before the coding (and scrubbed ones) are read as they are', (t) => {
  for (const body of kBodies) t.is(payloadText(body), body);
});

test('text that holds a control character already is stored as it is', (t) => {
  for (const text of ['{"event_id":"a\u0002"}', '{"event_id":"a"}\u001f', '\u0000']) {
    t.is(storedPayload(text), text);
  }
});

test('random texts made of names, quotes, colons and other characters come back as they were', (t) => {
  const pieces = [...kCodedNames.map((name) => `"${name}":`), ...kCodedNames, '"', ':', '\\"', '\\', '{', '}', ',', ' ', 'a', 'é', '😀', '"ip"', '"ip" :', '"iP":'];
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 0; i < 2000; i++) {
    let text = '';
    for (let j = next(40); j > 0; j--) text += pieces[next(pieces.length)];
    t.is(payloadText(storedPayload(text)), text);
  }
});

test('the view event_payloads reads what payloadText reads, coded rows and plain ones', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY, project_id TEXT, event_id TEXT, payload TEXT)');
  db.exec(payloadViewSql());
  const insert = db.prepare('INSERT INTO events (project_id, event_id, payload) VALUES (?, ?, ?)');
  kBodies.forEach((body, i) => {
    insert.run('prj', `coded-${i}`, storedPayload(body));
    insert.run('prj', `plain-${i}`, body);
  });
  const read = db.prepare('SELECT payload FROM event_payloads WHERE event_id = ?').pluck();
  kBodies.forEach((body, i) => {
    t.is(read.get(`coded-${i}`), body);
    t.is(read.get(`plain-${i}`), body);
  });
});

test('the view nests no expression deeper than an older sqlite3 shell can parse (Debian 12\'s 3.40 fails at about 28 nested calls)', (t) => {
  let depth = 0;
  let deepest = 0;
  for (const character of payloadViewSql()) {
    if (character === '(') deepest = Math.max(deepest, ++depth);
    else if (character === ')') depth--;
  }
  t.is(depth, 0);
  t.true(deepest <= 14, `${deepest} levels of parentheses`);
});
