// Block and allow lists (docs/lists.md), labels of events (docs/events.md, "Labels") and the audit
// trail (docs/audit.md).
export const kListsLabelsAuditMigration = `
-- A project's lists. lid is internal and never reused (AUTOINCREMENT): items and the rule
-- workers' in-memory copies are keyed by it, so a list deleted and created again under the same
-- list_id is another list. A deleted list keeps its row (deleted_at) until its items are purged
-- in the background: deleting a million items must not hold the single writer for seconds.
CREATE TABLE lists (
  lid          INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id   TEXT NOT NULL REFERENCES projects (project_id),
  list_id      TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('email', 'email_domain', 'phone', 'ip', 'bin', 'card', 'country', 'account', 'fp', 'string')),
  description  TEXT NOT NULL,
  item_count   INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  created_by   TEXT NOT NULL,
  updated_at   INTEGER NOT NULL,
  deleted_at   INTEGER
);
CREATE UNIQUE INDEX lists_by_id ON lists (project_id, list_id) WHERE deleted_at IS NULL;

-- Items, in value order (the order GET /v1/lists/{list_id} pages in). value is normalised by the
-- list's kind (docs/lists.md, "Kinds").
CREATE TABLE list_items (
  lid         INTEGER NOT NULL,
  value       TEXT NOT NULL,
  note        TEXT,
  expires_at  INTEGER,
  added_at    INTEGER NOT NULL,
  added_by    TEXT NOT NULL,
  PRIMARY KEY (lid, value)
) WITHOUT ROWID;
CREATE INDEX list_items_expiring ON list_items (expires_at) WHERE expires_at IS NOT NULL;

-- Every change of membership, in order: the rule workers keep each list in memory and apply
-- these (src/lists/worker-lists.ts) instead of reading a whole list again. Kept for a few
-- minutes; list_clock says up to where they were pruned (a worker further behind reloads).
-- 'reload' carries no value: erasure removes items without writing their values again.
CREATE TABLE list_changes (
  seq         INTEGER PRIMARY KEY,
  lid         INTEGER NOT NULL,
  op          TEXT NOT NULL CHECK (op IN ('create', 'drop', 'add', 'remove', 'reload')),
  value       TEXT,
  expires_at  INTEGER,
  at          INTEGER NOT NULL
);
CREATE TABLE list_clock (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  seq             INTEGER NOT NULL,
  pruned_through  INTEGER NOT NULL
);
INSERT INTO list_clock (id, seq, pruned_through) VALUES (1, 0, 0);

-- Which draft rules read which lists (in_list), kept when a rule is saved: a list in use cannot
-- be deleted. The published ruleset's uses are in rulesets.lists ({list_id: [rule_id, ...]}).
CREATE TABLE rule_lists (
  project_id  TEXT NOT NULL,
  list_id     TEXT NOT NULL,
  rule_id     TEXT NOT NULL,
  PRIMARY KEY (project_id, list_id, rule_id)
) WITHOUT ROWID;
CREATE INDEX rule_lists_by_rule ON rule_lists (project_id, rule_id);
ALTER TABLE rulesets ADD COLUMN lists TEXT NOT NULL DEFAULT '{}';

-- What an event turned out to be. A label never changes the stored result. account_id is the
-- event's account when it was labelled (account.labelled_fraud counts by it); erasure clears it.
-- source: 'api' (PUT /v1/events/{event_id}/label) or 'case:<case_id>' (a resolved case).
CREATE TABLE event_labels (
  project_id   TEXT NOT NULL,
  event_id     TEXT NOT NULL,
  account_id   TEXT,
  label        TEXT NOT NULL CHECK (label IN ('fraud', 'legitimate')),
  reason       TEXT NOT NULL CHECK (reason IN ('chargeback', 'manual_review', 'customer_report', 'other')),
  note         TEXT,
  source       TEXT NOT NULL,
  labelled_at  INTEGER NOT NULL,
  labelled_by  TEXT NOT NULL,
  PRIMARY KEY (project_id, event_id)
) WITHOUT ROWID;
CREATE INDEX event_labels_by_account ON event_labels (account_id, label) WHERE account_id IS NOT NULL;
-- The cases an event is in (GET /v1/events/{event_id}); written only for review decisions.
CREATE INDEX case_events_by_event ON case_events (event_id);

-- The audit trail: every change made through the API or the command line. Append-only: no
-- statement may change a record; the background purge deletes those past AUDIT_RETENTION_DAYS.
-- Summaries never hold a key, a secret or an erasable value (docs/audit.md).
CREATE TABLE audit_log (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  audit_id    TEXT NOT NULL UNIQUE,
  tenant_id   TEXT,
  project_id  TEXT,
  actor       TEXT NOT NULL,
  action      TEXT NOT NULL,
  target      TEXT NOT NULL,
  summary     TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX audit_by_project ON audit_log (project_id, seq);
CREATE INDEX audit_by_time ON audit_log (created_at);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit records cannot be changed');
END;
`;
