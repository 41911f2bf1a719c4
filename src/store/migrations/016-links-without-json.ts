// account_links without its `entry` column, the JSON of the link as GET /v1/accounts/{id}/links
// showed it, which SQLite made (json_object and two strftime) on every write of a row. The route
// answers from memory since the hot state (HotState.linksJson) and nothing else read it; it was
// more than half of each row: pages the writer wrote and the start read for nothing
// (bench/README.md, step 16). Rows copied in key order, every other column kept.
export const kLinksWithoutJsonMigration = `
CREATE TABLE account_links_without_json (
  account_id         TEXT NOT NULL,
  signal_type        TEXT NOT NULL CHECK (signal_type IN ('email', 'phone', 'fp', 'ip_24h', 'card')),
  other_account_id   TEXT NOT NULL,
  other_external_id  TEXT NOT NULL,
  other_projects     TEXT NOT NULL,
  masked             TEXT NOT NULL,
  first_seen         INTEGER NOT NULL,
  last_seen          INTEGER NOT NULL,
  PRIMARY KEY (account_id, signal_type, other_account_id)
) WITHOUT ROWID;
INSERT INTO account_links_without_json (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
  SELECT account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen FROM account_links ORDER BY account_id, signal_type, other_account_id;
DROP TABLE account_links;
ALTER TABLE account_links_without_json RENAME TO account_links;
`;
