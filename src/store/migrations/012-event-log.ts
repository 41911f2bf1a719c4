// The events table becomes an append-only log as far as its indexes go (DESIGN §8): a lookup by
// event id goes through the server's memory (scoring/event-ids.ts, loaded at start) and reads the
// row by its rowid, so the unique index on (project_id, event_id) — a random B-tree write and
// ~4 KB of WAL per event — goes. Uniqueness is kept by the one server that holds the data dir
// (store/data-dir-lock.ts), which checks the in-memory ids before every insert.
export const kEventLogMigration = `
DROP INDEX events_by_event_id;
`;
