// The accounts, signals and links tables become derived state written in bulk (DESIGN §8,
// docs/pipeline.md "Derived rows"): an event's transaction appends the event (and a new account's
// row), and the rows that follow from it are written later, together with many others, by
// applyDerivedRows. The stamp says how far those rows go: every scored event whose scored_order
// is at most `scored_order` is in them, and every event scored later has seq ≥ `from_seq` (so a
// start after a crash finds them by reading the end of the log: no index on scored_order).
// An account's row also says through which scored_order its counts go (counted_order): rows of a
// batch may be written before the stamp moves (a backlog goes in several batches), so a start
// after a crash counts again only the events past the row's own mark.
// The tables were written per event until now, so they include every stored event.
export const kDerivedRowsMigration = `
ALTER TABLE events ADD COLUMN scored_order INTEGER;
ALTER TABLE accounts ADD COLUMN counted_order INTEGER NOT NULL DEFAULT 0;
CREATE TABLE derived_stamp (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  scored_order  INTEGER NOT NULL,
  from_seq      INTEGER NOT NULL
);
INSERT INTO derived_stamp (id, scored_order, from_seq) SELECT 1, 0, coalesce(max(seq), 0) + 1 FROM events;
`;
