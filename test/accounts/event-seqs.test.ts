// An account's event seqs as the store keeps them for erasure (src/accounts/event-seqs.ts,
// migration 17): varints appended to the account's row by the bulk writes, moved to a row of
// account_event_seqs past kOpenSeqsBytes.
import test from 'ava';
import Database from 'better-sqlite3';
import { decodeSeqs, encodeSeqs, kOpenSeqsBytes } from '../../src/accounts/event-seqs.js';
import { applyDerivedRows } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';

test('seqs of any size round-trip, in the order given, and lists decode as one when joined', (t) => {
  const seqs = [1, 127, 128, 300, 16_383, 16_384, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, 2];
  const bytes = encodeSeqs(seqs);
  t.deepEqual(decodeSeqs(bytes), seqs);
  t.is(encodeSeqs([127]).length, 1);
  t.is(encodeSeqs([128]).length, 2);
  t.is(encodeSeqs([]).length, 0);
  t.deepEqual(decodeSeqs(Buffer.concat([encodeSeqs([5, 600]), encodeSeqs([70_000])])), [5, 600, 70_000]);
  t.throws(() => encodeSeqs([-1]), { instanceOf: RangeError });
  t.throws(() => encodeSeqs([1.5]), { instanceOf: RangeError });
});

test('the bulk writes append an account\'s seqs to its row and move a full list to a row of its own', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  db.prepare(
    `INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews)
     VALUES ('acc_a', 'ten', 'live', 'a', 1, 1, 0, 0, 0)`,
  ).run();
  const stored = (): { open: number[]; chunks: number[][]; row: unknown } => ({
    open: decodeSeqs(db.prepare("SELECT event_seqs FROM accounts WHERE account_id = 'acc_a'").pluck().get() as Buffer),
    chunks: (db.prepare("SELECT seqs FROM account_event_seqs WHERE account_id = 'acc_a' ORDER BY chunk").pluck().all() as Buffer[]).map((bytes) => decodeSeqs(bytes)),
    row: db.prepare("SELECT events, counted_order, seq_chunks FROM accounts WHERE account_id = 'acc_a'").get(),
  });
  const write = (order: number, countedOrder: number, seqs: number[]): void => {
    db.transaction(() => applyDerivedRows(db, { order, accounts: [['acc_a', 5, order, 0, 0, countedOrder, seqs]], signals: [], links: [], linkProjects: [] }))();
  };

  write(1, 1, [1_000_000, 1_000_002]);
  t.deepEqual(stored(), { open: [1_000_000, 1_000_002], chunks: [], row: { events: 1, counted_order: 1, seq_chunks: 0 } });
  // A row of seqs only (its counts could not be recorded): the counts stay as they were.
  write(2, -1, [1_000_004]);
  t.deepEqual(stored(), { open: [1_000_000, 1_000_002, 1_000_004], chunks: [], row: { events: 1, counted_order: 1, seq_chunks: 0 } });

  // 3-byte varints: the list passes kOpenSeqsBytes and moves, whole, to chunk 0.
  const many = Array.from({ length: Math.ceil(kOpenSeqsBytes / 3) }, (_, i) => 1_000_010 + i);
  write(3, 3, many);
  t.deepEqual(stored(), { open: [], chunks: [[1_000_000, 1_000_002, 1_000_004, ...many]], row: { events: 3, counted_order: 3, seq_chunks: 1 } });
  write(4, 4, [1_000_100]);
  write(5, 5, many.map((seq) => seq + 1_000));
  write(6, 6, [1_000_200]);
  const after = stored();
  t.deepEqual(after.chunks.length, 2);
  t.deepEqual(after.open, [1_000_200]);
  t.is(after.chunks.flat().length + after.open.length, 3 + 2 * many.length + 2, 'every seq kept once');
});
