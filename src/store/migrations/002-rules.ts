// Rules (DESIGN §3): each project's draft rules and draft policy, every version of every rule, and
// the published rulesets. A published ruleset is immutable: its compiled source, its rules and its
// policy as they were at publish time. The live ruleset of a project is its highest version.
export const kRulesMigration = `
-- Draft state: what GET /v1/rules shows and POST /v1/rules/publish compiles.
CREATE TABLE rules (
  project_id  TEXT NOT NULL REFERENCES projects (project_id),
  rule_id     TEXT NOT NULL,
  version     INTEGER NOT NULL,
  definition  TEXT NOT NULL,            -- JSON RuleDefinition (compiler/index.ts)
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (project_id, rule_id)
) WITHOUT ROWID;

-- Every version of every rule, for audit and for the rule_version a score result names.
CREATE TABLE rule_history (
  project_id  TEXT NOT NULL,
  rule_id     TEXT NOT NULL,
  version     INTEGER NOT NULL,
  definition  TEXT NOT NULL,
  changed_at  INTEGER NOT NULL,
  changed_by  TEXT NOT NULL,            -- key_id, or 'preset:<name>'
  PRIMARY KEY (project_id, rule_id, version)
) WITHOUT ROWID;

-- Draft thresholds (defaults 40 and 80), published together with the rules.
CREATE TABLE policies (
  project_id        TEXT PRIMARY KEY REFERENCES projects (project_id),
  review_threshold  INTEGER NOT NULL,
  block_threshold   INTEGER NOT NULL,
  version           INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE rulesets (
  project_id    TEXT NOT NULL REFERENCES projects (project_id),
  version       INTEGER NOT NULL,
  source        TEXT NOT NULL,          -- compiled JavaScript (compiler loadRuleset)
  max_possible  INTEGER NOT NULL,
  signals       TEXT NOT NULL,          -- JSON array of signal paths the ruleset reads
  rules         TEXT NOT NULL,          -- JSON array of the RuleDefinitions as published
  policy        TEXT NOT NULL,          -- JSON { review_threshold, block_threshold, version }
  published_at  INTEGER NOT NULL,
  published_by  TEXT NOT NULL,
  PRIMARY KEY (project_id, version)
) WITHOUT ROWID;

-- Lets a running server notice rulesets published by another process (a project created from
-- the command line), as keys_generation does for keys.
INSERT INTO meta (name, value) VALUES ('rulesets_generation', '0');
CREATE TRIGGER rulesets_insert AFTER INSERT ON rulesets BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'rulesets_generation';
END;
CREATE TRIGGER rulesets_update AFTER UPDATE ON rulesets BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'rulesets_generation';
END;
`;
