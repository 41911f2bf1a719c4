// mayAskForAsync (src/validation/event-input.ts) may say "perhaps" wrongly, never "no" wrongly: a
// body whose parsed object has a top-level async member always gets true.
import test from 'ava';
import { asksForAsync, mayAskForAsync } from '../../src/validation/event-input.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

test('false only where no async member can be', (t) => {
  t.false(mayAskForAsync(bytes('{"event_id":"e","event_type":"login"}')));
  t.false(mayAskForAsync(bytes('')));
  t.false(mayAskForAsync(bytes('{"note":"asynchronous"}')), 'the word inside a value, without quotes around it');
  t.true(mayAskForAsync(bytes('{"async":true}')));
  t.true(mayAskForAsync(bytes('{ "async" : false }')), 'false is for the parsed body to tell');
  t.true(mayAskForAsync(bytes('{"extras":{"async":true}}')), 'nested: the parsed body tells');
  t.true(mayAskForAsync(bytes('{"\\u0061sync":true}')), 'the name written with an escape');
  t.true(mayAskForAsync(bytes('{"a\\u0073ync":true}')));
});

test('every body whose parsed object has a top-level async member is a "perhaps"', (t) => {
  const spellings = ['async', '\\u0061sync', 'as\\u0079nc', '\\u0061\\u0073\\u0079\\u006e\\u0063', 'asyn\\u0063'];
  for (const name of spellings) {
    const text = `{"event_id":"e","${name}":true}`;
    t.is((JSON.parse(text) as { async?: unknown }).async, true, `${name} parses as async`);
    t.true(mayAskForAsync(bytes(text)), name);
  }
});

test('asksForAsync: a top-level async true only, whatever else the body holds; not JSON is not async', (t) => {
  t.true(asksForAsync(bytes('{"async":true,"event_type":"teleport"}')));
  t.true(asksForAsync(bytes('{"\\u0061sync":true}')));
  t.false(asksForAsync(bytes('{"async":false}')));
  t.false(asksForAsync(bytes('{"async":"yes"}')));
  t.false(asksForAsync(bytes('{"extras":{"async":true}}')));
  t.false(asksForAsync(bytes('{"async": true, "event_id": broken')));
  t.false(asksForAsync(bytes('[{"async":true}]')));
  t.false(asksForAsync(bytes('{"event_id":"e"}')));
  t.true(asksForAsync(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{"async":true}')])), 'after a byte order mark');
});
