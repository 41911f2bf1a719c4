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
