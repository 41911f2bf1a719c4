// src/shared/ids.ts: random ids, and ids that sort by creation time (accounts, cases).
import test from 'ava';
import { newId, newSortableId } from '../../src/shared/ids.js';
import { packPublicId } from '../../src/state/public-id.js';

test('a sortable id has the form of every public id: the prefix and 20 characters of [A-Za-z0-9]', (t) => {
  for (const prefix of ['acc', 'case'] as const) {
    const id = newSortableId(prefix);
    t.regex(id, new RegExp(`^${prefix}_[A-Za-z0-9]{20}$`));
    t.regex(newId(prefix), new RegExp(`^${prefix}_[A-Za-z0-9]{20}$`));
  }
  // acc_ ids are packed into 119 bits in memory (state/public-id.ts): a sortable one packs too.
  t.true(packPublicId(newSortableId('acc'), new Uint32Array(4), 0));
});

test('sortable ids sort as their times do (byte order, as SQLite compares text); ids of one millisecond still differ', (t) => {
  const times = [0, 1, 61, 62, 3843, 1_700_000_000_000, 1_795_000_000_000, 1_795_000_000_001, 218_340_105_584_895];
  const ids = times.map((time) => newSortableId('case', time));
  const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  t.deepEqual(sorted, ids);
  const same = new Set(Array.from({ length: 1000 }, () => newSortableId('acc', 1_795_000_000_000)));
  t.is(same.size, 1000);
  // The first 8 characters after the prefix are the time: the rest is random.
  t.is(newSortableId('acc', 1_795_000_000_000).slice(0, 12), newSortableId('acc', 1_795_000_000_000).slice(0, 12));
});

test('ids drawn across many refills of the random pool are all different, and every character is about equally likely', (t) => {
  // 10,000 ids of 20 characters take ~52 KB of random bytes: the 4-KiB pool is refilled a dozen times.
  const ids = Array.from({ length: 10_000 }, () => newId('evt'));
  t.is(new Set(ids).size, ids.length);
  const counts = new Map<string, number>();
  for (const id of ids) for (const char of id.slice(4)) counts.set(char, (counts.get(char) ?? 0) + 1);
  t.is(counts.size, 62);
  const expected = (ids.length * 20) / 62;
  // ~3,226 per character; a standard deviation is ~56: the bounds are ten of them away.
  for (const [char, count] of counts) t.true(count > expected - 560 && count < expected + 560, `${char}: ${count}`);
});
