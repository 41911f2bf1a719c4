// account_signals keyed by when the account first held the value (whole seconds) before the
// account. Keyed by account (migration 15), a returning account's new value went into that
// account's page, so every bulk write wrote about one page per account with a new value; keyed by
// first seen, new rows are appended at the table's end whoever holds them (bench/README.md,
// step 55). Nothing reads rows by account while serving: a start loads them whole, a refresh
// (hourly) updates the row it finds by the holder's first seen, which memory keeps in seconds
// (state/signal-index.ts), and an erasure deletes by (first_seen_s, account_id) for each second
// memory knows of the account. (account, type, hash) stays unique: a holder has one first seen.
export const kSignalsByFirstSeenMigration = `
CREATE TABLE account_signals_by_first_seen (
  first_seen_s INTEGER NOT NULL,
  account_id   TEXT NOT NULL,
  signal_type  TEXT NOT NULL CHECK (signal_type IN ('email', 'phone', 'fp', 'ip', 'card')),
  signal_hash  TEXT NOT NULL,
  tenant_id    TEXT NOT NULL,
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
  masked       TEXT NOT NULL,
  last_seen    INTEGER NOT NULL,
  PRIMARY KEY (first_seen_s, account_id, signal_type, signal_hash)
) WITHOUT ROWID;
INSERT INTO account_signals_by_first_seen (first_seen_s, account_id, signal_type, signal_hash, tenant_id, environment, masked, last_seen)
  SELECT first_seen / 1000, account_id, signal_type, signal_hash, tenant_id, environment, masked, last_seen FROM account_signals
  ORDER BY first_seen / 1000, account_id, signal_type, signal_hash;
DROP TABLE account_signals;
ALTER TABLE account_signals_by_first_seen RENAME TO account_signals;
`;
