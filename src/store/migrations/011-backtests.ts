// Backtests (docs/backtests.md): one row per backtest a project asked for, with what it tested,
// its state and, once done, its report. Rows are pruned when a project starts a new backtest:
// finished ones older than 30 days go, and a project keeps at most its 100 most recent
// (backtests/backtest-store.ts, kBacktestRetention*). 009 is issue 13's (lists, labels, audit).
export const kBacktestsMigration = `
CREATE TABLE backtests (
  backtest_id   TEXT PRIMARY KEY,                 -- bt_...
  project_id    TEXT NOT NULL REFERENCES projects (project_id),
  state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  candidate     TEXT NOT NULL,                    -- JSON: the version, or the drafts' rule and policy versions
  policy        TEXT NOT NULL,                    -- JSON: the candidate's thresholds
  range_from    INTEGER NOT NULL,                 -- epoch ms, inclusive
  range_to      INTEGER NOT NULL,                 -- epoch ms, exclusive
  event_limit   INTEGER NOT NULL,
  requested_by  TEXT NOT NULL,                    -- key_id
  created_at    INTEGER NOT NULL,
  started_at    INTEGER,
  finished_at   INTEGER,
  report        TEXT,                             -- JSON, when done
  error         TEXT                              -- when failed
) WITHOUT ROWID;
CREATE INDEX backtests_by_project ON backtests (project_id, created_at);
`;
