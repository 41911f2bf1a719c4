// Operator features: when each API key was last used, webhook secret rotation with an overlap, and
// redelivery of webhook messages.
export const kOperationsMigration = `
-- Last use of each key, written by the server now and then from what it counted in memory (never
-- one write per request). A table of its own: an update of api_keys would bump keys_generation and
-- make every server drop its key cache.
CREATE TABLE api_key_usage (
  key_id       TEXT PRIMARY KEY REFERENCES api_keys (key_id),
  last_used_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Rotation: the secret replaced last keeps signing beside the new one until previous_secret_until.
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;

-- Retries of a message run for WEBHOOK_RETRY_HOURS from retry_from: the decision's time, or the
-- time someone asked for a redelivery.
ALTER TABLE webhook_outbox ADD COLUMN retry_from INTEGER;
`;
