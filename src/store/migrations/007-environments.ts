// Environments never mix (DESIGN §8): accounts, their signals and links, fingerprint sightings and
// erasure records belong to a tenant AND an environment (live or sandbox). Before this migration
// they were tenant-wide, so a sandbox event could change a live score or block a live erasure.
//
// The SQL below adds the environment to each table; the JS step (accounts/split-environments.ts)
// gives every account the environment of the projects that used it, splits an account that both
// environments used into two (the live one keeps its acc_ id), and rebuilds the signals and links
// of split accounts from their events. It also widens events.state with 'erased': a pending event
// of an erased account is never scored (accounts-service.ts).
export const kEnvironmentsMigrationBefore = `
DROP INDEX accounts_by_external_id;
ALTER TABLE accounts ADD COLUMN environment TEXT NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'sandbox'));

CREATE TABLE account_signals_env (
  tenant_id    TEXT NOT NULL,
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
  signal_type  TEXT NOT NULL CHECK (signal_type IN ('email', 'phone', 'fp', 'ip', 'card')),
  signal_hash  TEXT NOT NULL,
  account_id   TEXT NOT NULL,
  masked       TEXT NOT NULL,
  first_seen   INTEGER NOT NULL,
  last_seen    INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, environment, signal_type, signal_hash, account_id)
) WITHOUT ROWID;

ALTER TABLE erasures ADD COLUMN environment TEXT NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'sandbox'));
DROP INDEX erasures_by_external_id;
CREATE INDEX erasures_by_external_id ON erasures (tenant_id, environment, external_id_hash);

-- Sightings of a device are per environment too (the fp_id itself is an identifier, the same in
-- both). Sightings made before the split were tenant-wide: each environment keeps them.
CREATE TABLE fingerprints_env (
  tenant_id    TEXT NOT NULL REFERENCES tenants (tenant_id),
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
  fp_id        TEXT NOT NULL,
  first_seen   INTEGER NOT NULL,
  last_seen    INTEGER NOT NULL,
  seen_count   INTEGER NOT NULL CHECK (seen_count >= 1),
  PRIMARY KEY (tenant_id, environment, fp_id)
) WITHOUT ROWID;
INSERT INTO fingerprints_env SELECT tenant_id, 'live', fp_id, first_seen, last_seen, seen_count FROM fingerprints;
INSERT INTO fingerprints_env SELECT tenant_id, 'sandbox', fp_id, first_seen, last_seen, seen_count FROM fingerprints;
DROP TABLE fingerprints;
ALTER TABLE fingerprints_env RENAME TO fingerprints;

CREATE TABLE events_env (
  seq              INTEGER PRIMARY KEY,
  project_id       TEXT NOT NULL,
  event_id         TEXT NOT NULL,
  event_type       TEXT NOT NULL,
  account_id       TEXT,
  received_at      INTEGER NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'scored', 'erased')),
  payload          TEXT NOT NULL,
  body_hash        TEXT,
  ruleset_version  INTEGER,
  decision         TEXT,
  risk_score       INTEGER,
  result           TEXT,
  shadow           TEXT,
  scored_at        INTEGER
);
INSERT INTO events_env SELECT seq, project_id, event_id, event_type, account_id, received_at, state, payload, body_hash,
  ruleset_version, decision, risk_score, result, shadow, scored_at FROM events;
DROP TABLE events;
ALTER TABLE events_env RENAME TO events;
CREATE UNIQUE INDEX events_by_event_id ON events (project_id, event_id);
CREATE INDEX events_pending ON events (seq) WHERE state = 'pending';
CREATE INDEX events_by_account ON events (account_id) WHERE account_id IS NOT NULL;
`;

/** After the JS step has set every account's environment and split the mixed ones. */
export const kEnvironmentsMigrationAfter = `
DROP TABLE account_signals;
ALTER TABLE account_signals_env RENAME TO account_signals;

-- Links between accounts of different environments go; links of split accounts were rebuilt.
DELETE FROM account_links WHERE (SELECT environment FROM accounts WHERE account_id = account_links.account_id)
  IS NOT (SELECT environment FROM accounts WHERE account_id = account_links.other_account_id);

CREATE UNIQUE INDEX accounts_by_external_id ON accounts (tenant_id, environment, external_account_id);
`;
