// The review queue (DESIGN §4): a review decision opens a case for the account (or for the event,
// without an account), or adds the event to the account's open case.
export const kCasesMigration = `
CREATE TABLE cases (
  case_id     TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('open', 'closed')),
  resolution  TEXT CHECK (resolution IS NULL OR resolution IN ('fraud', 'legitimate')),
  account_id  TEXT,
  decision    TEXT NOT NULL,
  risk_score  INTEGER NOT NULL,
  assignee    TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX cases_by_project ON cases (project_id, created_at, case_id);
CREATE UNIQUE INDEX cases_one_open_per_account ON cases (project_id, account_id) WHERE status = 'open' AND account_id IS NOT NULL;

CREATE TABLE case_events (
  case_id   TEXT NOT NULL,
  event_id  TEXT NOT NULL,
  added_at  INTEGER NOT NULL,
  PRIMARY KEY (case_id, event_id)
) WITHOUT ROWID;

-- Analysts' notes and a record of every change to a case (status, resolution, assignee): nothing
-- about a case is overwritten without a trace. seq keeps them in order.
CREATE TABLE case_notes (
  seq            INTEGER PRIMARY KEY,
  case_id        TEXT NOT NULL,
  note_id        TEXT NOT NULL UNIQUE,
  kind           TEXT NOT NULL CHECK (kind IN ('note', 'change')),
  author_key_id  TEXT NOT NULL,
  body           TEXT NOT NULL,
  created_at     INTEGER NOT NULL
);
CREATE INDEX case_notes_by_case ON case_notes (case_id, seq);
`;
