// Erasure finds an account's events from lists of their seqs kept with the account instead of the
// index events_by_account: the index took a page at a random key for every event with an account,
// a quarter of the WAL written per event (bench/README.md, step 27), while the account's row is
// written anyway with its counts (applyDerivedRows). accounts.event_seqs holds the latest seqs
// (varints, src/accounts/event-seqs.ts); past kOpenSeqsBytes they move to a row of
// account_event_seqs numbered by accounts.seq_chunks. Like the counts, the lists hold the events up
// to the row's counted_order; erasure reads the later ones from the end of the log
// (derived_stamp.from_seq). Every stored event of an account goes into one row per account here,
// before the index goes — also those past the row's counted_order, which a replay lists again:
// erasure reads each seq once, and an event a replay once skipped (an account id sent as a
// number, before this release) is listed all the same.
import type { Db } from '../database.js';
import { registerEncodeSeqs } from './seq-lists.js';

export const kAccountEventSeqsMigration = `
ALTER TABLE accounts ADD COLUMN event_seqs BLOB NOT NULL DEFAULT x'';
ALTER TABLE accounts ADD COLUMN seq_chunks INTEGER NOT NULL DEFAULT 0;
CREATE TABLE account_event_seqs (
  account_id  TEXT NOT NULL,
  chunk       INTEGER NOT NULL,
  seqs        BLOB NOT NULL,
  PRIMARY KEY (account_id, chunk)
) WITHOUT ROWID;
`;

/** The seqs of every event of each account, through the index that is about to go. */
export function moveAccountEventSeqs(db: Db): void {
  registerEncodeSeqs(db);
  db.exec(`
    INSERT INTO account_event_seqs (account_id, chunk, seqs)
      SELECT a.account_id, 0, fs_encode_seqs(e.seq) FROM accounts a JOIN events e ON e.account_id = a.account_id GROUP BY a.account_id;
    UPDATE accounts SET seq_chunks = 1 WHERE account_id IN (SELECT account_id FROM account_event_seqs);
  `);
}

export const kAccountEventSeqsMigrationAfter = `
DROP INDEX events_by_account;
`;
