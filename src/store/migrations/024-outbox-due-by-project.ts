// The webhook deliverer fills its slots project by project (webhooks/deliverer.ts): one project's
// receiver that hangs or fails holds at most a few of them, and never delays another project's
// messages. Due messages are therefore found per project: the due index leads with project_id.
// Messages of a project whose webhook was removed are abandoned when it is removed from now on
// (webhook-store.ts, removeWebhook); those queued before this migration are abandoned here.
export const kOutboxDueByProjectMigration = `
DROP INDEX webhook_outbox_due;
CREATE INDEX webhook_outbox_due ON webhook_outbox (project_id, next_attempt_at) WHERE delivered_at IS NULL AND abandoned_at IS NULL;
UPDATE webhook_outbox SET abandoned_at = CAST(unixepoch('subsec') * 1000 AS INTEGER), last_error = 'the project has no webhook any more'
  WHERE delivered_at IS NULL AND abandoned_at IS NULL AND project_id NOT IN (SELECT project_id FROM webhooks);
`;
