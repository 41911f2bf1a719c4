import test from 'ava';
import fc from 'fast-check';
import { isoTime } from '../../src/shared/iso-time.js';

test('isoTime matches Date#toISOString across the years 0000-9999 and at the edges', (t) => {
  for (const ms of [0, -1, 1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, -62_167_219_200_000, 253_402_300_799_999, Date.UTC(2024, 1, 29, 23, 59, 59, 999)]) {
    t.is(isoTime(ms), new Date(ms).toISOString(), String(ms));
  }
  fc.assert(fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => isoTime(ms) === new Date(ms).toISOString()), { numRuns: 20_000, seed: 7 });
  t.pass();
});

test('isoTime falls back to Date outside its range and for fractions', (t) => {
  t.is(isoTime(253_402_300_800_000), new Date(253_402_300_800_000).toISOString());
  t.is(isoTime(1.5), new Date(1.5).toISOString());
});
