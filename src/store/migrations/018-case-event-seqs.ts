// A case lists its events as seqs on its own row instead of rows of case_events: a review event
// that extends its account's case rewrote the case's row and added a case_events row at the
// case's random key, a second page per review (bench/README.md, step 29). cases.event_seqs holds
// the latest seqs (varints, src/accounts/event-seqs.ts); past kOpenSeqsBytes they move to a row of
// case_event_seqs numbered by cases.seq_chunks, so that a long-open case's row stays small.
// Existing cases get their events from events.case_id (migration 14 filled it from case_events,
// and every case event since has both), in one row each, before case_events goes.
import type { Db } from '../database.js';
import { registerEncodeSeqs } from './seq-lists.js';

export const kCaseEventSeqsMigration = `
ALTER TABLE cases ADD COLUMN event_seqs BLOB NOT NULL DEFAULT x'';
ALTER TABLE cases ADD COLUMN seq_chunks INTEGER NOT NULL DEFAULT 0;
CREATE TABLE case_event_seqs (
  case_id  TEXT NOT NULL,
  chunk    INTEGER NOT NULL,
  seqs     BLOB NOT NULL,
  PRIMARY KEY (case_id, chunk)
) WITHOUT ROWID;
`;

/** Each case's events, from the event log's case column. */
export function moveCaseEventSeqs(db: Db): void {
  registerEncodeSeqs(db);
  db.exec(`
    INSERT INTO case_event_seqs (case_id, chunk, seqs)
      SELECT c.case_id, 0, fs_encode_seqs(e.seq) FROM events e JOIN cases c ON c.case_id = e.case_id GROUP BY c.case_id;
    UPDATE cases SET seq_chunks = 1 WHERE case_id IN (SELECT case_id FROM case_event_seqs);
  `);
}

export const kCaseEventSeqsMigrationAfter = `
DROP TABLE case_events;
`;
