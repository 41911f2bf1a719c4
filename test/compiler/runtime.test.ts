// Runtime helpers that carry their own logic: timestamp and duration parsing,
// code points, CEL equality.

import test from 'ava';
import fc from 'fast-check';
import { codePoints, eq, K_DYN, kTypeError, parseDuration, parseTimestamp } from '../../compiler/runtime/index.js';

test('parseTimestamp agrees with Date on every ISO string in CEL range', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -62135596800000, max: 253402300799999 }), (ms) => parseTimestamp(new Date(ms).toISOString()) === ms),
    { seed: 1, numRuns: 2000 },
  );
  t.pass();
});

test('parseTimestamp: offsets, fractions, case, and what it refuses', (t) => {
  t.is(parseTimestamp('2026-11-20T13:30:00+01:00'), Date.parse('2026-11-20T12:30:00Z'));
  t.is(parseTimestamp('2026-11-20T07:00:00-05:30'), Date.parse('2026-11-20T12:30:00Z'));
  t.is(parseTimestamp('2026-11-20t12:30:00.123456789z'), Date.parse('2026-11-20T12:30:00.123Z'));
  t.is(parseTimestamp('0050-06-01T12:00:00Z'), Date.parse('0050-06-01T12:00:00Z'));
  for (const bad of ['2026-02-29T00:00:00Z', '2026-11-20T24:00:00Z', '2026-11-20T12:30:60Z', '2026-11-20 12:30:00Z',
    '2026-11-20T12:30:00', '2026-11-20T12:30:00.Z', '2026-13-01T00:00:00Z', '0000-01-01T00:00:00Z', '2026-11-20T12:30:00+24:00',
    'tomorrow', '', '2026-11-20T12:30:00Zjunk']) {
    t.true(Number.isNaN(parseTimestamp(bad)), bad);
  }
});

test('parseDuration: Go syntax, exact like cel-js', (t) => {
  t.is(parseDuration('720h'), 720 * 3_600_000);
  t.is(parseDuration('1h30m'), 5_400_000);
  t.is(parseDuration('1.5h'), 5_400_000);
  t.is(parseDuration('-1.5s'), -1500);
  t.is(parseDuration('250ms'), 250);
  t.is(parseDuration('1us'), 0.001);
  t.is(parseDuration('1µs1ns'), 0.001001);
  t.is(parseDuration('+2m'), 120_000);
  // A bare 0, as Go's time.ParseDuration takes it (no other number goes without a unit).
  t.is(parseDuration('0'), 0);
  t.is(parseDuration('+0'), 0);
  for (const bad of ['', '-', 'h', '1', '00', '0.0', '1d', '1 h', '1h-1m', 'x'.repeat(70)]) t.true(Number.isNaN(parseDuration(bad)), bad);
});

test('codePoints counts surrogate pairs once', (t) => {
  t.is(codePoints(''), 0);
  t.is(codePoints('héllo'), 5);
  t.is(codePoints('a😀b'), 3);
  t.is(codePoints('\ud800'), 1);
});

test('eq: homogeneous equality, a type error between kinds that cannot be compared', (t) => {
  t.true(eq(1, 1, K_DYN, K_DYN));
  t.is(eq(1, '1', K_DYN, K_DYN), kTypeError);
  t.is(eq(true, 'true', K_DYN, K_DYN), kTypeError);
  t.is(eq([1], { 0: 1 }, K_DYN, K_DYN), kTypeError);
  t.is(eq([1, 'a'], [1, 2], K_DYN, K_DYN), kTypeError);
  t.false(eq([2, 'a'], [1, 2], K_DYN, K_DYN), 'the first unequal pair decides');
  t.false(eq(Number.NaN, Number.NaN, K_DYN, K_DYN));
  t.true(eq([1, 'a'], [1, 'a'], K_DYN, K_DYN));
  t.false(eq([1], [1, 2], K_DYN, K_DYN));
  t.true(eq({ a: [1] }, { a: [1] }, K_DYN, K_DYN));
  t.false(eq({ a: 1 }, { b: 1 }, K_DYN, K_DYN));
  t.true(eq(null, null, K_DYN, K_DYN));
  t.false(eq(null, 0, K_DYN, K_DYN));
});
