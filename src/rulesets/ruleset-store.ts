// Draft rules, draft policy and published rulesets in SQLite (schema: migrations/002-rules.ts).
// Publishing compiles the drafts with compiler/ and stores ruleset version N+1 in one transaction:
// the new version is live the moment that transaction commits, and never half-written.
import { compileRuleset, getPreset, type RuleDefinition, type RuleDiagnostic } from '../../compiler/index.js';
import type { Db } from '../store/database.js';

export interface Policy {
  readonly review_threshold: number;
  readonly block_threshold: number;
  readonly version: number;
}

export const kDefaultPolicy = { review_threshold: 40, block_threshold: 80 } as const;

export interface PublishedRuleset {
  readonly project_id: string;
  readonly version: number;
  readonly max_possible: number;
  readonly signals: string[];
  readonly rules: RuleDefinition[];
  readonly policy: Policy;
  readonly published_at: number;
  readonly published_by: string;
}

interface RulesetRow {
  project_id: string;
  version: number;
  max_possible: number;
  signals: string;
  rules: string;
  policy: string;
  published_at: number;
  published_by: string;
}

const kRulesetColumns = 'project_id, version, max_possible, signals, rules, policy, published_at, published_by';

export function readDraftRules(db: Db, projectId: string): RuleDefinition[] {
  const rows = db.prepare('SELECT definition FROM rules WHERE project_id = ? ORDER BY rule_id').all(projectId) as Array<{ definition: string }>;
  return rows.map((row) => JSON.parse(row.definition) as RuleDefinition);
}

export function readDraftRule(db: Db, projectId: string, ruleId: string): RuleDefinition | null {
  const row = db.prepare('SELECT definition FROM rules WHERE project_id = ? AND rule_id = ?').get(projectId, ruleId) as { definition: string } | undefined;
  return row === undefined ? null : (JSON.parse(row.definition) as RuleDefinition);
}

/**
 * Saves a draft rule as its next version (1 for a new rule) and records it in the history.
 * `rule.version` is ignored: versions are assigned here. Returns the stored definition.
 */
export function saveDraftRule(db: Db, projectId: string, rule: RuleDefinition, changedBy: string, now: number): RuleDefinition {
  const current = db.prepare('SELECT version, created_at FROM rules WHERE project_id = ? AND rule_id = ?').get(projectId, rule.rule_id) as
    | { version: number; created_at: number }
    | undefined;
  const stored: RuleDefinition = { ...rule, version: (current?.version ?? 0) + 1 };
  const definition = JSON.stringify(stored);
  db.prepare(
    `INSERT INTO rules (project_id, rule_id, version, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, rule_id) DO UPDATE SET version = excluded.version, definition = excluded.definition, updated_at = excluded.updated_at`,
  ).run(projectId, rule.rule_id, stored.version, definition, current?.created_at ?? now, now);
  db.prepare('INSERT INTO rule_history (project_id, rule_id, version, definition, changed_at, changed_by) VALUES (?, ?, ?, ?, ?, ?)').run(
    projectId, rule.rule_id, stored.version, definition, now, changedBy,
  );
  return stored;
}

export function readDraftPolicy(db: Db, projectId: string): Policy {
  const row = db.prepare('SELECT review_threshold, block_threshold, version FROM policies WHERE project_id = ?').get(projectId) as Policy | undefined;
  return row ?? { ...kDefaultPolicy, version: 0 };
}

export function saveDraftPolicy(db: Db, projectId: string, thresholds: { review_threshold: number; block_threshold: number }, now: number): Policy {
  const version = readDraftPolicy(db, projectId).version + 1;
  db.prepare(
    `INSERT INTO policies (project_id, review_threshold, block_threshold, version, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (project_id) DO UPDATE SET review_threshold = excluded.review_threshold,
       block_threshold = excluded.block_threshold, version = excluded.version, updated_at = excluded.updated_at`,
  ).run(projectId, thresholds.review_threshold, thresholds.block_threshold, version, now);
  return { ...thresholds, version };
}

export type PublishResult = { ok: true; ruleset: PublishedRuleset } | { ok: false; errors: RuleDiagnostic[] };

/** Compiles the drafts and the draft policy into ruleset version N+1 and stores it (one transaction). */
export function publishDrafts(db: Db, projectId: string, publishedBy: string, now: number): PublishResult {
  return db.transaction((): PublishResult => {
    const rules = readDraftRules(db, projectId);
    const compiled = compileRuleset(rules);
    if (!compiled.ok) return { ok: false, errors: compiled.errors };
    const policy = readDraftPolicy(db, projectId);
    const latest = db.prepare('SELECT max(version) AS version FROM rulesets WHERE project_id = ?').get(projectId) as { version: number | null };
    const ruleset: PublishedRuleset = {
      project_id: projectId,
      version: (latest.version ?? 0) + 1,
      max_possible: compiled.artifact.max_possible,
      signals: compiled.artifact.signals,
      rules,
      policy,
      published_at: now,
      published_by: publishedBy,
    };
    db.prepare(`INSERT INTO rulesets (${kRulesetColumns}, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
      projectId, ruleset.version, ruleset.max_possible, JSON.stringify(ruleset.signals), JSON.stringify(rules),
      JSON.stringify(policy), now, publishedBy, compiled.artifact.source,
    );
    return { ok: true, ruleset };
  }).immediate();
}

/** Copies a preset's rules and policy into a new project's drafts and publishes them as version 1. */
export function installPreset(db: Db, projectId: string, presetName: string, now: number): PublishedRuleset {
  const preset = getPreset(presetName);
  if (preset === null) throw new Error(`unknown preset ${JSON.stringify(presetName)}`);
  return db.transaction(() => {
    const changedBy = `preset:${presetName}`;
    for (const rule of preset.rules) saveDraftRule(db, projectId, rule, changedBy, now);
    saveDraftPolicy(db, projectId, preset.policy, now);
    const published = publishDrafts(db, projectId, changedBy, now);
    if (!published.ok) throw new Error(`preset ${presetName} does not compile: ${published.errors[0]?.message}`);
    return published.ruleset;
  }).immediate();
}

export function readRuleset(db: Db, projectId: string, version: number): PublishedRuleset | null {
  const row = db.prepare(`SELECT ${kRulesetColumns} FROM rulesets WHERE project_id = ? AND version = ?`).get(projectId, version) as RulesetRow | undefined;
  return row === undefined ? null : toRuleset(row);
}

export function readLiveRuleset(db: Db, projectId: string): PublishedRuleset | null {
  const row = db.prepare(`SELECT ${kRulesetColumns} FROM rulesets WHERE project_id = ? ORDER BY version DESC LIMIT 1`).get(projectId) as RulesetRow | undefined;
  return row === undefined ? null : toRuleset(row);
}

export function listRulesets(db: Db, projectId: string): PublishedRuleset[] {
  const rows = db.prepare(`SELECT ${kRulesetColumns} FROM rulesets WHERE project_id = ? ORDER BY version DESC`).all(projectId) as RulesetRow[];
  return rows.map(toRuleset);
}

function toRuleset(row: RulesetRow): PublishedRuleset {
  return {
    project_id: row.project_id,
    version: row.version,
    max_possible: row.max_possible,
    signals: JSON.parse(row.signals) as string[],
    rules: JSON.parse(row.rules) as RuleDefinition[],
    policy: JSON.parse(row.policy) as Policy,
    published_at: row.published_at,
    published_by: row.published_by,
  };
}
