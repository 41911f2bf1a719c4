// Event ids kept beside the log in runs (scoring/event-id-runs.ts): a start reads 8 bytes per
// event instead of every page of the log. The runs of the events stored before are written here.
export const kEventIdRunsMigration = `
CREATE TABLE event_id_runs (
  last_seq    INTEGER PRIMARY KEY,
  first_seq   INTEGER NOT NULL,
  keys        BLOB NOT NULL,       -- two little-endian uint32 words per event: EventIndex.keyOf
  seqs        BLOB NOT NULL        -- one little-endian uint32 per event: its seq - first_seq; empty when the seqs are first_seq..last_seq
);
`;
