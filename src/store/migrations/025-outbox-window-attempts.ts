// A webhook message's backoff counts the attempts of its current retry window, not all of its
// attempts: a message redelivered after 14 failures retries after 2.5–5 s again, not after an
// hour (webhooks/deliverer.ts). `attempts` stays the total the API shows. Messages still retrying
// keep the schedule they had: their window's count starts at their attempts so far.
export const kOutboxWindowAttemptsMigration = `
ALTER TABLE webhook_outbox ADD COLUMN window_attempts INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_outbox SET window_attempts = attempts WHERE delivered_at IS NULL AND abandoned_at IS NULL;
`;
