// The seal of the start snapshot (scoring/start-snapshot.ts): a clean stop writes the in-memory
// state to a file and a random token both there and here; the next start uses the file only if
// the token here is the same, and deletes it first. While the server is stopped, triggers on the
// tables the state comes from delete the token at any change (store/snapshot-seal.ts), so a file
// is never loaded over a database that moved on without it.
export const kStartSnapshotMigration = `
CREATE TABLE start_snapshot (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  token       TEXT NOT NULL,
  sealed_at   INTEGER NOT NULL
);
`;
