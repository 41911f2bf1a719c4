// The string arena, packed public ids and the ISO formatter: against the plain JavaScript they
// replace (fast-check).
import test from 'ava';
import fc from 'fast-check';
import { isoMs } from '../../src/state/iso-time.js';
import { jsonString } from '../../src/state/json-string.js';
import { comparePacked, packPublicId, unpackPublicId } from '../../src/state/public-id.js';
import { StringArena } from '../../src/state/string-arena.js';

test('arena: strings of every length class come back as they went in; released ones are zeroed', (t) => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ minLength: 100, maxLength: 20_000 })), { maxLength: 60 }), (values) => {
      const arena = new StringArena(16);
      const offsets = values.map((value) => arena.add(value));
      for (let i = 0; i < values.length; i += 2) arena.release(offsets[i]!);
      const fresh = new StringArena();
      for (let i = 1; i < values.length; i += 2) {
        if (arena.get(offsets[i]!) !== values[i]) return false;
        if (fresh.get(fresh.copyFrom(arena, offsets[i]!)) !== values[i]) return false;
      }
      return arena.garbage <= arena.used;
    }),
    { seed: 7, numRuns: 200 },
  );
  t.pass();
});

test('arena: equals says what get() === says (ASCII, other text, prefixes, released strings)', (t) => {
  const text = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('', 'a', 'ab', 'é', 'aé', '\ud800'));
  fc.assert(
    fc.property(fc.array(text, { minLength: 1, maxLength: 20 }), fc.array(text, { maxLength: 20 }), (stored, probes) => {
      const arena = new StringArena();
      const offsets = stored.map((value) => arena.add(value));
      arena.release(offsets[0]!);
      for (const offset of offsets) {
        for (const probe of [...probes, ...stored, ...stored.map((value) => value.slice(0, -1)), ...stored.map((value) => `${value}a`)]) {
          if (arena.equals(offset, probe) !== (arena.get(offset) === probe)) return false;
        }
      }
      return true;
    }),
    { seed: 13, numRuns: 500 },
  );
  t.pass();
});

test('arena: a released string leaves no byte of it behind', (t) => {
  const arena = new StringArena();
  const offset = arena.add('alice@example.com');
  arena.add('bob');
  arena.release(offset);
  t.is(arena.garbage, 18);
  t.is(arena.get(offset), '');
});

const kBase62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const publicId = fc.array(fc.constantFrom(...kBase62), { minLength: 20, maxLength: 20 }).map((chars) => `acc_${chars.join('')}`);

test('public ids: pack, unpack, and order as the strings do', (t) => {
  fc.assert(
    fc.property(publicId, publicId, (a, b) => {
      const words = new Uint32Array(8);
      if (!packPublicId(a, words, 0) || !packPublicId(b, words, 4)) return false;
      if (unpackPublicId(words, 0) !== a || unpackPublicId(words, 4) !== b) return false;
      return Math.sign(comparePacked(words, 0, words, 4)) === Math.sign(a < b ? -1 : a > b ? 1 : 0);
    }),
    { seed: 11, numRuns: 2000 },
  );
  t.pass();
});

test('public ids: anything else is refused and leaves the output alone', (t) => {
  const words = Uint32Array.of(1, 2, 3, 4);
  for (const bad of ['acc_123', 'acx_aaaaaaaaaaaaaaaaaaaa', 'acc_aaaaaaaaaaaaaaaaaaa-', 'acc_aaaaaaaaaaaaaaaaaaaé', `acc_${'a'.repeat(21)}`]) {
    t.false(packPublicId(bad, words, 0), bad);
  }
  t.deepEqual([...words], [1, 2, 3, 4]);
});

test('isoMs writes what Date#toISOString writes (times far apart and days in a row)', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), fc.integer({ min: 1.6e12, max: 2.0e12 }), fc.integer({ min: 1.7e12, max: 1.7e12 + 4 * 86_400_000 }), fc.double()), (ms) => {
      const expected = Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
      return expected === null || isoMs(ms) === expected;
    }),
    { seed: 3, numRuns: 20_000 },
  );
  for (const ms of [0, -1, 951_782_400_000 /* 2000-02-29 */, 4_107_542_400_000 /* 2100-03-01 */, 253_402_300_799_999]) t.is(isoMs(ms), new Date(ms).toISOString());
});

test('jsonString writes what JSON.stringify writes', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constantFrom('a"b', 'a\\b', '\u2028', '\ud800x', 'é\u0001')), (value) => jsonString(value) === JSON.stringify(value)),
    { seed: 5, numRuns: 5000 },
  );
  t.pass();
});
