// Accounts, the signals they used, and the links between accounts that share a signal.
//
// Signals are stored as keyed hashes (HMAC-SHA256 with the install secret) next to a masked form
// for display; the raw email, phone, IP or card digits never leave the event payload. Links are
// stored in both directions so that GET /v1/accounts/{id}/links is one primary-key range scan.
export const kAccountsMigration = `
CREATE TABLE accounts (
  account_id           TEXT PRIMARY KEY,   -- acc_..., random
  tenant_id            TEXT NOT NULL,
  external_account_id  TEXT NOT NULL,      -- the caller's id (numbers as decimal strings)
  created_at           INTEGER NOT NULL,
  last_seen_at         INTEGER NOT NULL,
  events               INTEGER NOT NULL DEFAULT 0,
  blocks               INTEGER NOT NULL DEFAULT 0,
  reviews              INTEGER NOT NULL DEFAULT 0,
  fraud_confirmed      INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE UNIQUE INDEX accounts_by_external_id ON accounts (tenant_id, external_account_id);

-- Which projects of the tenant used the account: more than one means "shared across projects".
CREATE TABLE account_projects (
  account_id     TEXT NOT NULL,
  project_id     TEXT NOT NULL,
  first_seen_at  INTEGER NOT NULL,
  PRIMARY KEY (account_id, project_id)
) WITHOUT ROWID;

CREATE TABLE account_signals (
  tenant_id    TEXT NOT NULL,
  signal_type  TEXT NOT NULL CHECK (signal_type IN ('email', 'phone', 'fp', 'ip', 'card')),
  signal_hash  TEXT NOT NULL,
  account_id   TEXT NOT NULL,
  masked       TEXT NOT NULL,
  first_seen   INTEGER NOT NULL,
  last_seen    INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, signal_type, signal_hash, account_id)
) WITHOUT ROWID;
-- No index by account: erasure finds an account's rows from its events' values (one less random
-- write per new signal while scoring).

-- other_external_id and other_projects repeat what the links route needs to know of the other
-- account (its external id, which never changes; the projects that used it, ",prj_a,prj_b,",
-- updated when it is first used in another project), so that listing a thousand links is one
-- range scan with no lookup per link.
CREATE TABLE account_links (
  account_id         TEXT NOT NULL,
  signal_type        TEXT NOT NULL CHECK (signal_type IN ('email', 'phone', 'fp', 'ip_24h', 'card')),
  other_account_id   TEXT NOT NULL,
  other_external_id  TEXT NOT NULL,
  other_projects     TEXT NOT NULL,
  masked             TEXT NOT NULL,
  first_seen         INTEGER NOT NULL,
  last_seen          INTEGER NOT NULL,
  -- The link as GET /v1/accounts/{id}/links shows it, kept by SQLite whenever the row changes:
  -- the route joins stored JSON instead of building a thousand objects per answer.
  entry              TEXT GENERATED ALWAYS AS (json_object(
    'signal_type', signal_type, 'account_public_id', other_account_id, 'external_account_id', other_external_id,
    'masked_signal', masked,
    'first_seen', strftime('%Y-%m-%dT%H:%M:%fZ', first_seen / 1000.0, 'unixepoch'),
    'last_seen', strftime('%Y-%m-%dT%H:%M:%fZ', last_seen / 1000.0, 'unixepoch'))) STORED,
  PRIMARY KEY (account_id, signal_type, other_account_id)
) WITHOUT ROWID;

-- What was erased, so that a retried DELETE is answered with the same summary. The external id
-- may itself be personal (an email used as id): only its keyed hash is kept.
CREATE TABLE erasures (
  tenant_id         TEXT NOT NULL,
  account_id        TEXT NOT NULL,
  external_id_hash  TEXT NOT NULL,
  project_id        TEXT NOT NULL,
  erased_at         INTEGER NOT NULL,
  summary           TEXT NOT NULL,
  PRIMARY KEY (tenant_id, account_id)
) WITHOUT ROWID;
CREATE INDEX erasures_by_external_id ON erasures (tenant_id, external_id_hash);
`;
