// Phone analysis (src/signals/phone.ts): E.164 and national numbers, and the cache of recent
// analyses answering exactly what a fresh parse answers.
import test from 'ava';
import { analyzePhone } from '../../src/signals/phone.js';

test('a national number is read with the country; the same digits in another country are another number', (t) => {
  const gb = analyzePhone('07400 123456', 'GB');
  t.is(gb.e164, '+447400123456');
  t.is(gb.masked, '+44********56');
  t.true(gb.signals.valid);
  t.is(gb.signals.country, 'GB');
  t.is(gb.signals.type, 'mobile');
  const de = analyzePhone('07400 123456', 'DE');
  t.not(de.e164, gb.e164);
  t.is(analyzePhone('07400 123456', 'GB'), gb, 'answered from the cache');
  t.is(analyzePhone('+44 7400 123456', null).e164, '+447400123456');
});

test('the mask shows the country code and the last two digits; of a short number, no digit after the country code', (t) => {
  t.is(analyzePhone('+4915112345678', null).masked, '+49*********78');
  t.is(analyzePhone('+33612345678', null).masked, '+33*******78');
  for (const [number, masked] of [['+4412', '+44**'], ['+441234', '+44****'], ['+4412345', '+44*****'], ['+12345678', '+1*******']]) {
    t.is(analyzePhone(number, null).masked, masked, number);
  }
});

test('unparseable numbers and no number', (t) => {
  const bad = analyzePhone('12', null);
  t.is(bad.status, 'unparseable');
  t.false(bad.signals.parseable);
  t.is(analyzePhone('12', null), bad);
  t.false(analyzePhone(null, null).signals.present);
});

test('cached analyses cannot be changed by a caller', (t) => {
  const analysis = analyzePhone('+4915112345678', null);
  t.true(Object.isFrozen(analysis));
  t.true(Object.isFrozen(analysis.signals));
});
