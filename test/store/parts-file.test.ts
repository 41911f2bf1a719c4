// store/parts-file.ts: a tree of parts written and read back as it was, its columns still able to
// grow in place; a file that is not whole is refused with PartsFileError.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PartsFileError, readPartsFile, readPartsMeta, writePartsFile } from '../../src/store/parts-file.js';
import { column, grown } from '../../src/state/slots.js';
import { SlotIndex } from '../../src/state/slot-index.js';

function tempFile(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-parts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'parts');
}

test('a tree of objects, arrays, numbers, strings and typed arrays comes back equal', (t) => {
  const path = tempFile(t);
  const counts = column(Uint32Array, 1000, 1 << 20);
  for (let i = 0; i < counts.length; i++) counts[i] = i * 7;
  const shared = new Float64Array([1.5, -2.25, 1e300]);
  const tree = {
    counts,
    times: shared,
    again: shared, // the same array twice: one buffer in the file
    heads: new Int32Array([-1, 0, 5]),
    flags: new Uint8Array([1, 0, 255]),
    wide: new Uint16Array([65535, 3]),
    text: Buffer.from('héllo'),
    list: [1, 'two', null, true, [new Uint32Array([9])]],
    nested: { size: 3, projects: [['prj_a', 1], ['prj_b', 2]] },
  };
  const bytes = writePartsFile(path, { token: 'abc', schema: 19 }, tree);
  t.is(statSync(path).size, bytes);
  t.false(existsSync(`${path}.tmp`));
  t.deepEqual(readPartsMeta(path), { token: 'abc', schema: 19 });
  const read = readPartsFile(path);
  t.deepEqual(read.meta, { token: 'abc', schema: 19 });
  const back = read.tree as typeof tree;
  t.deepEqual([...back.counts], [...counts]);
  t.true(back.counts instanceof Uint32Array);
  t.deepEqual([...back.times], [1.5, -2.25, 1e300]);
  t.is(back.again.buffer, back.times.buffer);
  t.deepEqual([...back.heads], [-1, 0, 5]);
  t.deepEqual([...back.flags], [1, 0, 255]);
  t.deepEqual([...back.wide], [65535, 3]);
  t.true(Buffer.isBuffer(back.text));
  t.is(back.text.toString(), 'héllo');
  t.deepEqual(back.list.slice(0, 4), [1, 'two', null, true]);
  t.deepEqual([...(back.list[4] as Uint32Array[])[0]!], [9]);
  t.deepEqual(back.nested, tree.nested);
});

test('a column read back still grows in place and follows its buffer', (t) => {
  const path = tempFile(t);
  const before = column(Uint32Array, 16, 1 << 16);
  before[15] = 42;
  writePartsFile(path, null, { before });
  const after = (readPartsFile(path).tree as { before: Uint32Array }).before;
  t.is(after.length, 16);
  const longer = grown(after, 64);
  t.is(longer, after, 'grown in place, not copied');
  t.is(after.length, 64, 'the view follows its buffer');
  t.is(after[15], 42);
  t.is(after[63], 0);
});

test('a slot index written from its parts finds what it held', (t) => {
  const path = tempFile(t);
  const index = new SlotIndex(2, 64);
  const key = new Uint32Array(2);
  for (let slot = 0; slot < 500; slot++) {
    key[0] = slot * 2654435761;
    key[1] = slot;
    index.reserve(slot + 1);
    index.keys.set(key, slot * 2);
    index.insert(slot);
  }
  writePartsFile(path, null, index.parts());
  const back = SlotIndex.fromParts(readPartsFile(path).tree as ReturnType<SlotIndex['parts']>);
  for (const slot of [0, 1, 250, 499]) {
    key[0] = slot * 2654435761;
    key[1] = slot;
    t.is(back.find(key, 0), slot);
  }
  key[0] = 1;
  key[1] = 1000;
  t.is(back.find(key, 0), -1);
});

test('a file cut short, or not a parts file at all, is refused with PartsFileError', (t) => {
  const path = tempFile(t);
  writePartsFile(path, { token: 'x' }, { counts: new Uint32Array(4096).fill(7) });
  truncateSync(path, statSync(path).size - 100);
  t.deepEqual(readPartsMeta(path), { token: 'x' }, 'the header is whole');
  t.throws(() => readPartsFile(path), { instanceOf: PartsFileError, message: 'the file is cut short' });
  truncateSync(path, 30);
  t.throws(() => readPartsMeta(path), { instanceOf: PartsFileError, message: 'the header is cut short' });
  writeFileSync(path, 'SQLite format 3\u0000 and more bytes than the magic');
  t.throws(() => readPartsMeta(path), { instanceOf: PartsFileError, message: 'not a parts file' });
});

test("a column's room to grow is not written: the file holds its written part, and the rest reads back as zeroes", (t) => {
  const path = tempFile(t);
  const wide = column(Float64Array, 1 << 16, 1 << 20); // 512 KiB, one value written near the start
  wide[10] = 3.25;
  const empty = column(Uint32Array, 1 << 16, 1 << 20);
  const bytes = writePartsFile(path, null, { wide, empty, odd: new Uint8Array([0, 7, 0, 0, 0]) });
  t.true(bytes < 4096, `${bytes} bytes`);
  const back = readPartsFile(path).tree as { wide: Float64Array; empty: Uint32Array; odd: Uint8Array };
  t.is(back.wide.length, 1 << 16);
  t.is(back.wide[10], 3.25);
  t.is(back.wide.reduce((sum, value) => sum + value, 0), 3.25);
  t.is(back.empty.length, 1 << 16);
  t.true(back.empty.every((value) => value === 0));
  t.deepEqual([...back.odd], [0, 7, 0, 0, 0]);
});

test('a byte changed anywhere, in the header or in a buffer, is refused by its checksum', (t) => {
  const path = tempFile(t);
  const counts = new Uint32Array(4096).map((_, i) => i + 1);
  writePartsFile(path, { token: 'y' }, { counts });
  const whole = readFileSync(path);
  const flip = (at: number): void => {
    const copy = Buffer.from(whole);
    copy[at] = copy[at]! ^ 0x01;
    writeFileSync(path, copy);
  };
  flip(whole.length - 1000); // inside the buffer
  t.throws(() => readPartsFile(path), { instanceOf: PartsFileError, message: 'a buffer does not match its checksum' });
  flip(40); // inside the header (JSON that may still parse)
  t.throws(() => readPartsMeta(path), { instanceOf: PartsFileError, message: 'the header does not match its checksum' });
  writeFileSync(path, whole);
  t.deepEqual([...(readPartsFile(path).tree as { counts: Uint32Array }).counts].slice(0, 3), [1, 2, 3]);
});
