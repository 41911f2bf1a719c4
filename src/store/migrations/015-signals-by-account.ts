// account_signals keyed by account first. Nothing looks rows up by value any more (the hot state
// holds the value → accounts index; the rows are loaded whole at start, in any order), while an
// account's rows are written together: its first event brings up to five values, and the bulk
// writes of derived rows go in key order. Keyed by value, each row was a page at a random key;
// keyed by account, an account's new values share a page (bench/README.md, step 12). An account
// is of one tenant and environment, so (account, type, hash) is as unique as the old key.
export const kSignalsByAccountMigration = `
CREATE TABLE account_signals_by_account (
  account_id   TEXT NOT NULL,
  signal_type  TEXT NOT NULL CHECK (signal_type IN ('email', 'phone', 'fp', 'ip', 'card')),
  signal_hash  TEXT NOT NULL,
  tenant_id    TEXT NOT NULL,
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
  masked       TEXT NOT NULL,
  first_seen   INTEGER NOT NULL,
  last_seen    INTEGER NOT NULL,
  PRIMARY KEY (account_id, signal_type, signal_hash)
) WITHOUT ROWID;
INSERT INTO account_signals_by_account (account_id, signal_type, signal_hash, tenant_id, environment, masked, first_seen, last_seen)
  SELECT account_id, signal_type, signal_hash, tenant_id, environment, masked, first_seen, last_seen FROM account_signals ORDER BY account_id, signal_type, signal_hash;
DROP TABLE account_signals;
ALTER TABLE account_signals_by_account RENAME TO account_signals;
`;
