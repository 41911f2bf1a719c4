// The stamp's from_seq stayed at or below the lowest pending async event (migration 22), so that a
// start found every pending one in the log from there. But an event that stays pending (its
// project has no ruleset, it is over the evaluation budget) then held from_seq for as long as it
// waited, and each erasure scanned the log from there, in the writer's transaction, as did the
// start's replay. pending_from_seq takes that part over: the start reads pending events from it,
// and from_seq bounds only the events scored after the stamp and those not yet folded into their
// case. An event pending below from_seq that is scored later moves from_seq down to its seq in its
// own transaction (event-store.ts, persistScoredEvent), so that every event scored after the stamp
// still has seq ≥ from_seq. Until now from_seq was at or below every pending event: the same value.
export const kPendingFromSeqMigration = `
ALTER TABLE derived_stamp ADD COLUMN pending_from_seq INTEGER NOT NULL DEFAULT 1;
UPDATE derived_stamp SET pending_from_seq = from_seq WHERE id = 1;
`;
