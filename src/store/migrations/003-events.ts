// Events and their score results, and the decision webhook's configuration and outbox.
//
// events is a rowid table in arrival order (seq): a new event is an append, the background scorer
// reads pending events in arrival order through a small partial index, and a restart rebuilds the
// in-memory velocity windows by reading the last 24 hours as one seq range. Idempotency is the
// unique index on (project_id, event_id): event ids are per project.
export const kEventsMigration = `
CREATE TABLE events (
  seq              INTEGER PRIMARY KEY,
  project_id       TEXT NOT NULL,
  event_id         TEXT NOT NULL,
  event_type       TEXT NOT NULL,
  account_id       TEXT,               -- acc_..., once resolved
  received_at      INTEGER NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'scored')),
  payload          TEXT NOT NULL,      -- the body as received; personal data removed on erasure
  body_hash        TEXT,               -- canonical hash, kept when the payload is scrubbed
  ruleset_version  INTEGER,
  decision         TEXT,
  risk_score       INTEGER,
  result           TEXT,               -- the stored score result (JSON)
  shadow           TEXT,               -- shadow rule outcomes (JSON), for analysts
  scored_at        INTEGER
);
CREATE UNIQUE INDEX events_by_event_id ON events (project_id, event_id);
CREATE INDEX events_pending ON events (seq) WHERE state = 'pending';
CREATE INDEX events_by_account ON events (account_id) WHERE account_id IS NOT NULL;

CREATE TABLE webhooks (
  project_id  TEXT PRIMARY KEY REFERENCES projects (project_id),
  url         TEXT NOT NULL,
  secret      TEXT NOT NULL,           -- whsec_<base64>, Standard Webhooks
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- One row per decision to deliver, at least once. Finished rows (delivered or abandoned) stay a
-- week for audit, then go.
CREATE TABLE webhook_outbox (
  seq              INTEGER PRIMARY KEY,
  message_id       TEXT NOT NULL UNIQUE,   -- msg_..., the webhook-id header
  project_id       TEXT NOT NULL,
  event_id         TEXT NOT NULL,
  payload          TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  last_error       TEXT,
  delivered_at     INTEGER,
  abandoned_at     INTEGER                  -- retries ran out (WEBHOOK_RETRY_HOURS)
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND abandoned_at IS NULL;
`;
