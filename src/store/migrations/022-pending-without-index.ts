// The async events still pending are kept by the writer in memory (scoring/seq-set.ts) and
// found at start at the end of the log, from the stamp's from_seq on, instead of through the index
// events_pending: an insert and a delete in it per async event, a fifth of the async WAL
// (bench/README.md, step 52). The stamp's from_seq stays at or below the lowest pending event
// from here on (until migration 27 gives them a bound of their own); events left pending before
// migration 13 could be below it, so it moves down to them.
export const kPendingWithoutIndexMigration = `
UPDATE derived_stamp SET from_seq = min(from_seq, coalesce((SELECT min(seq) FROM events WHERE state = 'pending'), from_seq)) WHERE id = 1;
DROP INDEX events_pending;
`;
