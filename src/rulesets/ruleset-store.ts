// Draft rules, draft policy and published rulesets in SQLite (schema: migrations/002-rules.ts).
// A publish stores the drafts, compiled elsewhere (rules-service.ts, by the compiler thread;
// preset-install.ts for a new project), as ruleset version N+1 in one transaction: the new version
// is live the moment that transaction commits, and never half-written. Nothing here compiles, so the
// writer thread that runs these does not load the compiler.
import type { RuleDefinition, RulesetArtifact } from '../../compiler/index.js';
import { recordAudit } from '../audit/audit-store.js';
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

/** A draft rule with the times of its first and latest version (epoch ms). */
export interface DraftRuleRecord {
  readonly rule: RuleDefinition;
  readonly created_at: number;
  readonly updated_at: number;
}

interface DraftRuleRow {
  definition: string;
  created_at: number;
  updated_at: number;
}

function toDraftRecord(row: DraftRuleRow): DraftRuleRecord {
  return { rule: JSON.parse(row.definition) as RuleDefinition, created_at: row.created_at, updated_at: row.updated_at };
}

export function readDraftRuleRecords(db: Db, projectId: string): DraftRuleRecord[] {
  const rows = db.prepare('SELECT definition, created_at, updated_at FROM rules WHERE project_id = ? ORDER BY rule_id').all(projectId) as DraftRuleRow[];
  return rows.map(toDraftRecord);
}

export function readDraftRuleRecord(db: Db, projectId: string, ruleId: string): DraftRuleRecord | null {
  const row = db.prepare('SELECT definition, created_at, updated_at FROM rules WHERE project_id = ? AND rule_id = ?').get(projectId, ruleId) as
    | DraftRuleRow
    | undefined;
  return row === undefined ? null : toDraftRecord(row);
}

/** One stored version of a rule. */
export interface RuleHistoryEntry {
  readonly rule: RuleDefinition;
  readonly changed_at: number;
  /** The key id that made the change, or 'preset:<name>'. */
  readonly changed_by: string;
}

/** Every version of a rule, newest first. */
export function readRuleHistory(db: Db, projectId: string, ruleId: string): RuleHistoryEntry[] {
  const rows = db.prepare(
    'SELECT definition, changed_at, changed_by FROM rule_history WHERE project_id = ? AND rule_id = ? ORDER BY version DESC',
  ).all(projectId, ruleId) as Array<{ definition: string; changed_at: number; changed_by: string }>;
  return rows.map((row) => ({ rule: JSON.parse(row.definition) as RuleDefinition, changed_at: row.changed_at, changed_by: row.changed_by }));
}

export type CreateRuleOutcome =
  | { readonly kind: 'created'; readonly record: DraftRuleRecord }
  | { readonly kind: 'exists' }
  /** The project already holds `limit` rules (archived ones included: they are still records). */
  | { readonly kind: 'limit'; readonly limit: number }
  /** A list the rule reads is gone (deleted since the rule was checked). */
  | { readonly kind: 'missing_lists'; readonly lists: string[] };

/** Of `lists`, those the project does not have (as of this transaction). */
export function missingLists(db: Db, projectId: string, lists: readonly string[]): string[] {
  if (lists.length === 0) return [];
  const exists = db.prepare('SELECT 1 FROM lists WHERE project_id = ? AND list_id = ? AND deleted_at IS NULL');
  return lists.filter((listId) => exists.get(projectId, listId) === undefined);
}

/** Records which lists a draft rule reads (rule_lists): a list in use cannot be deleted. */
function setRuleLists(db: Db, projectId: string, ruleId: string, lists: readonly string[]): void {
  db.prepare('DELETE FROM rule_lists WHERE project_id = ? AND rule_id = ?').run(projectId, ruleId);
  const insert = db.prepare('INSERT INTO rule_lists (project_id, list_id, rule_id) VALUES (?, ?, ?)');
  for (const listId of lists) insert.run(projectId, listId, ruleId);
}

/**
 * Write command: adds a new draft rule as version 1. The existence check, the check that the lists
 * it reads (`lists`) exist, the insert and its audit record are one transaction.
 */
export function createDraftRule(
  db: Db, projectId: string, rule: RuleDefinition, changedBy: string, maxRules: number, now: number, lists: readonly string[] = [],
): CreateRuleOutcome {
  if (readDraftRule(db, projectId, rule.rule_id) !== null) return { kind: 'exists' };
  const { n } = db.prepare('SELECT count(*) AS n FROM rules WHERE project_id = ?').get(projectId) as { n: number };
  if (n >= maxRules) return { kind: 'limit', limit: maxRules };
  const stored = saveDraftRuleReading(db, projectId, rule, changedBy, now, lists);
  if ('missing' in stored) return { kind: 'missing_lists', lists: stored.missing };
  recordAudit(db, {
    projectId, actor: changedBy, action: 'rule.create', target: `rule:${rule.rule_id}`,
    summary: { version: stored.version, kind: stored.kind, status: stored.status, lists: [...lists] }, at: now,
  });
  return { kind: 'created', record: readDraftRuleRecord(db, projectId, rule.rule_id)! };
}

export type ReplaceRuleOutcome =
  | { readonly kind: 'saved'; readonly record: DraftRuleRecord }
  /** The new definition equals the current one: no new version was made. */
  | { readonly kind: 'unchanged'; readonly record: DraftRuleRecord }
  | { readonly kind: 'not_found' }
  /** The caller's expected version is not the current one (someone else changed the rule). */
  | { readonly kind: 'version_mismatch'; readonly current: number }
  /** A list the rule reads is gone (deleted since the rule was checked). */
  | { readonly kind: 'missing_lists'; readonly lists: string[] };

/**
 * Write command: replaces an existing draft rule with its next version. `expectedVersion`, when
 * not null, must be the current version: an optimistic lock between analysts editing one rule.
 * `lists`: the lists the new version reads, which must exist.
 */
export function replaceDraftRule(
  db: Db, projectId: string, rule: RuleDefinition, expectedVersion: number | null, changedBy: string, now: number, lists: readonly string[] = [],
): ReplaceRuleOutcome {
  const current = readDraftRuleRecord(db, projectId, rule.rule_id);
  if (current === null) return { kind: 'not_found' };
  // Equal content first: a retried PUT that was applied (its answer lost) carries the version it
  // replaced, and overwrites nothing, so the lock has nothing to protect.
  if (sameRuleContent(current.rule, rule)) return { kind: 'unchanged', record: current };
  if (expectedVersion !== null && expectedVersion !== current.rule.version) return { kind: 'version_mismatch', current: current.rule.version };
  const stored = saveDraftRuleReading(db, projectId, rule, changedBy, now, lists);
  if ('missing' in stored) return { kind: 'missing_lists', lists: stored.missing };
  recordAudit(db, {
    projectId, actor: changedBy, action: 'rule.replace', target: `rule:${rule.rule_id}`,
    summary: { version: stored.version, previous_version: current.rule.version, changed: changedFields(current.rule, stored), status: stored.status, lists: [...lists] },
    at: now,
  });
  return { kind: 'saved', record: readDraftRuleRecord(db, projectId, rule.rule_id)! };
}

/** Saves the rule's next version with the lists it reads, when they all exist; else names the missing ones. */
function saveDraftRuleReading(
  db: Db, projectId: string, rule: RuleDefinition, changedBy: string, now: number, lists: readonly string[],
): RuleDefinition | { readonly missing: string[] } {
  const missing = missingLists(db, projectId, lists);
  if (missing.length > 0) return { missing };
  const stored = saveDraftRule(db, projectId, rule, changedBy, now);
  setRuleLists(db, projectId, rule.rule_id, lists);
  return stored;
}

/** The fields of a rule that differ between two versions (for the audit summary: names, not contents). */
function changedFields(before: RuleDefinition, after: RuleDefinition): string[] {
  const fields = ['kind', 'status', 'expression', 'score_delta', 'bands', 'action', 'description'] as const;
  return fields.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
}

/** Equal in every field but the version. */
function sameRuleContent(a: RuleDefinition, b: RuleDefinition): boolean {
  return canonicalRule(a) === canonicalRule(b);
}

function canonicalRule(rule: RuleDefinition): string {
  // A fixed key order: definitions stored by older code may list their keys in another order.
  const bands = rule.bands === null ? null : rule.bands.map((band) => [band.band, band.expression, band.score_delta]);
  return JSON.stringify([rule.rule_id, rule.kind, rule.status, rule.expression, rule.score_delta, bands, rule.action, rule.description]);
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

/** The draft policy and when it was last saved (null: never saved, the defaults apply). */
export interface PolicyRecord extends Policy {
  readonly updated_at: number | null;
}

export function readDraftPolicyRecord(db: Db, projectId: string): PolicyRecord {
  const row = db.prepare('SELECT review_threshold, block_threshold, version, updated_at FROM policies WHERE project_id = ?').get(projectId) as
    | PolicyRecord
    | undefined;
  return row ?? { ...kDefaultPolicy, version: 0, updated_at: null };
}

export type ReplacePolicyOutcome =
  | { readonly kind: 'saved' | 'unchanged'; readonly policy: PolicyRecord }
  | { readonly kind: 'version_mismatch'; readonly current: number };

/** Write command: saves the draft thresholds as the policy's next version, unless they are unchanged. */
export function replaceDraftPolicy(
  db: Db, projectId: string, thresholds: { review_threshold: number; block_threshold: number }, expectedVersion: number | null, now: number, changedBy: string,
): ReplacePolicyOutcome {
  const current = readDraftPolicyRecord(db, projectId);
  // Equal thresholds first, as for a rule: a retried PUT that was applied is answered, not refused.
  if (current.updated_at !== null && current.review_threshold === thresholds.review_threshold && current.block_threshold === thresholds.block_threshold) {
    return { kind: 'unchanged', policy: current };
  }
  if (expectedVersion !== null && expectedVersion !== current.version) return { kind: 'version_mismatch', current: current.version };
  const saved = saveDraftPolicy(db, projectId, thresholds, now);
  recordAudit(db, {
    projectId, actor: changedBy, action: 'policy.replace', target: 'policy',
    summary: {
      version: saved.version,
      review_threshold: [current.review_threshold, saved.review_threshold],
      block_threshold: [current.block_threshold, saved.block_threshold],
    },
    at: now,
  });
  return { kind: 'saved', policy: readDraftPolicyRecord(db, projectId) };
}

/** The drafts as one consistent read: what a publish compiles. */
export interface DraftSnapshot {
  readonly rules: RuleDefinition[];
  readonly policy: Policy;
}

export function readDraftSnapshot(db: Db, projectId: string): DraftSnapshot {
  // One transaction, so that a rule and the policy saved in between cannot be half seen.
  return db.transaction(() => ({ rules: readDraftRules(db, projectId), policy: readDraftPolicy(db, projectId) }))();
}

export type StoreRulesetOutcome =
  | { readonly kind: 'published'; readonly ruleset: PublishedRuleset }
  /** The live ruleset already holds exactly these drafts (a concurrent publish stored them). */
  | { readonly kind: 'unchanged'; readonly ruleset: PublishedRuleset }
  /** A draft changed after the snapshot was compiled: compile again. */
  | { readonly kind: 'stale' }
  /** A list the compiled rules read is gone (deleted since they were compiled). */
  | { readonly kind: 'missing_lists'; readonly lists: string[] };

/**
 * Write command: stores `artifact`, compiled elsewhere from `snapshot`, as ruleset version N+1.
 * Compiling takes tens of milliseconds (more for large rulesets), too long to hold the single
 * writer; so the rules API compiles off this thread and this command only checks, inside the
 * transaction, that the drafts are still the ones compiled.
 */
export function storePublishedRuleset(
  db: Db, projectId: string, snapshot: DraftSnapshot, artifact: RulesetArtifact, publishedBy: string, now: number,
): StoreRulesetOutcome {
  if (!sameDrafts(readDraftSnapshot(db, projectId), snapshot)) return { kind: 'stale' };
  const live = readLiveRuleset(db, projectId);
  if (live !== null && !publishWouldChange(snapshot, live)) return { kind: 'unchanged', ruleset: live };
  const missing = missingLists(db, projectId, artifact.lists);
  if (missing.length > 0) return { kind: 'missing_lists', lists: missing };
  const ruleset = insertRuleset(db, projectId, snapshot, artifact, publishedBy, now);
  const changes = draftChanges(snapshot, live);
  recordAudit(db, {
    projectId, actor: publishedBy, action: 'ruleset.publish', target: `ruleset:${ruleset.version}`,
    summary: { version: ruleset.version, previous_version: live?.version ?? null, rules: artifact.rules.length, changed_rules: changes.changed_rules, policy_changed: changes.policy_changed, lists: artifact.lists },
    at: now,
  });
  return { kind: 'published', ruleset };
}

/**
 * Whether two sets of rules and policy are the same drafts, version for version: the drafts a
 * publish read are still the drafts (every change of a rule or of the policy takes a new version).
 */
export function sameDrafts(a: DraftSnapshot, b: DraftSnapshot): boolean {
  if (a.policy.version !== b.policy.version || a.rules.length !== b.rules.length) return false;
  const versions = new Map(b.rules.map((rule) => [rule.rule_id, rule.version]));
  return a.rules.every((rule) => versions.get(rule.rule_id) === rule.version);
}

/**
 * Whether publishing `drafts` would change what `live` scores with. By content, not by version:
 * a rule edited and edited back (or restored to the live version) has a new version and the live
 * content, and a version number published always means a change.
 */
export function publishWouldChange(drafts: DraftSnapshot, live: DraftSnapshot | null): boolean {
  const changes = draftChanges(drafts, live);
  return changes.changed_rules.length > 0 || changes.policy_changed;
}

export interface DraftChanges {
  /** rule_ids whose draft differs from the published rule (new rules included), sorted. */
  readonly changed_rules: string[];
  readonly policy_changed: boolean;
}

/** What a publish would change: drafts against the live ruleset (everything, when none is published). */
export function draftChanges(drafts: DraftSnapshot, published: DraftSnapshot | null): DraftChanges {
  const publishedRules = new Map((published?.rules ?? []).map((rule) => [rule.rule_id, rule]));
  const draftIds = new Set(drafts.rules.map((rule) => rule.rule_id));
  const changed = drafts.rules.filter((rule) => {
    const live = publishedRules.get(rule.rule_id);
    // A rule never published and archived acts on nothing (a draft created, then thrown away).
    if (live === undefined) return published === null || rule.status !== 'archived';
    return live.version !== rule.version && !sameRuleContent(live, rule);
  }).map((rule) => rule.rule_id);
  // Rules are never deleted, so a published rule missing from the drafts is only possible after a
  // manual repair of the store; it is still a difference a publish would make.
  for (const ruleId of publishedRules.keys()) if (!draftIds.has(ruleId)) changed.push(ruleId);
  return {
    changed_rules: changed.sort(),
    policy_changed: published === null || !sameThresholds(published.policy, drafts.policy),
  };
}

function sameThresholds(a: Policy, b: Policy): boolean {
  return a.review_threshold === b.review_threshold && a.block_threshold === b.block_threshold;
}

export function insertRuleset(db: Db, projectId: string, snapshot: DraftSnapshot, artifact: RulesetArtifact, publishedBy: string, now: number): PublishedRuleset {
  const ruleset: PublishedRuleset = {
    project_id: projectId,
    version: (readLiveVersion(db, projectId) ?? 0) + 1,
    max_possible: artifact.max_possible,
    signals: artifact.signals,
    rules: snapshot.rules,
    policy: snapshot.policy,
    published_at: now,
    published_by: publishedBy,
  };
  db.prepare(`INSERT INTO rulesets (${kRulesetColumns}, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    projectId, ruleset.version, ruleset.max_possible, JSON.stringify(ruleset.signals), JSON.stringify(ruleset.rules),
    JSON.stringify(ruleset.policy), now, publishedBy, artifact.source,
  );
  // Which rules read which lists: a list the live ruleset reads cannot be deleted. Written only
  // when there are some (the column's default is {}), so that presets install on any schema.
  if (artifact.lists.length > 0) {
    const lists: Record<string, string[]> = {};
    for (const rule of artifact.rules) for (const listId of rule.lists) (lists[listId] ??= []).push(rule.rule_id);
    db.prepare('UPDATE rulesets SET lists = ? WHERE project_id = ? AND version = ?').run(JSON.stringify(lists), projectId, ruleset.version);
  }
  return ruleset;
}

export function readRuleset(db: Db, projectId: string, version: number): PublishedRuleset | null {
  const row = db.prepare(`SELECT ${kRulesetColumns} FROM rulesets WHERE project_id = ? AND version = ?`).get(projectId, version) as RulesetRow | undefined;
  return row === undefined ? null : toRuleset(row);
}

export function readLiveRuleset(db: Db, projectId: string): PublishedRuleset | null {
  const row = db.prepare(`SELECT ${kRulesetColumns} FROM rulesets WHERE project_id = ? ORDER BY version DESC LIMIT 1`).get(projectId) as RulesetRow | undefined;
  return row === undefined ? null : toRuleset(row);
}

/** Published rulesets, newest first; a page of `limit` below version `before` when given. */
export function listRulesets(db: Db, projectId: string, page: { before: number | null; limit: number } = { before: null, limit: -1 }): PublishedRuleset[] {
  const rows = db.prepare(`SELECT ${kRulesetColumns} FROM rulesets WHERE project_id = ? AND version < ? ORDER BY version DESC LIMIT ?`)
    .all(projectId, page.before ?? Number.MAX_SAFE_INTEGER, page.limit) as RulesetRow[];
  return rows.map(toRuleset);
}

export function readLiveVersion(db: Db, projectId: string): number | null {
  const row = db.prepare('SELECT max(version) AS version FROM rulesets WHERE project_id = ?').get(projectId) as { version: number | null };
  return row.version;
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

/**
 * What restoring published version `target` makes of the drafts (POST /v1/rulesets/{version}/restore):
 * every rule of the target with the target's content, every other rule archived (rules are never
 * deleted: those created after the target stop acting), the target's thresholds. A rule or policy
 * whose content already matches keeps its version; a changed one gets its next version, the one
 * saveDraftRule / saveDraftPolicy will give it. Pure.
 */
export interface RestorePlan extends DraftSnapshot {
  /** The rules that change, with the versions they will be saved as. */
  readonly saved: readonly RuleDefinition[];
  readonly policyChanged: boolean;
}

export function restorePlan(drafts: DraftSnapshot, target: PublishedRuleset): RestorePlan {
  const targetRules = new Map(target.rules.map((rule) => [rule.rule_id, rule]));
  const draftIds = new Set(drafts.rules.map((rule) => rule.rule_id));
  const rules: RuleDefinition[] = [];
  const saved: RuleDefinition[] = [];
  for (const draft of drafts.rules) {
    const restored = targetRules.get(draft.rule_id);
    const wanted = restored ?? (draft.status === 'archived' ? draft : { ...draft, status: 'archived' as const });
    if (sameRuleContent(draft, wanted)) {
      rules.push(draft);
    } else {
      const next = { ...wanted, version: draft.version + 1 };
      rules.push(next);
      saved.push(next);
    }
  }
  // A published rule missing from the drafts (only after a manual repair of the store) comes back.
  for (const rule of target.rules) {
    if (draftIds.has(rule.rule_id)) continue;
    const next = { ...rule, version: 1 };
    rules.push(next);
    saved.push(next);
  }
  rules.sort((a, b) => (a.rule_id < b.rule_id ? -1 : a.rule_id > b.rule_id ? 1 : 0));
  const policyChanged =
    drafts.policy.review_threshold !== target.policy.review_threshold || drafts.policy.block_threshold !== target.policy.block_threshold;
  const policy = policyChanged
    ? { review_threshold: target.policy.review_threshold, block_threshold: target.policy.block_threshold, version: drafts.policy.version + 1 }
    : drafts.policy;
  return { rules, policy, saved, policyChanged };
}

/** Whether a restore's plan changes a draft (a rule or the policy). */
export function restoreChangesDrafts(plan: RestorePlan): boolean {
  return plan.saved.length > 0 || plan.policyChanged;
}

/**
 * A restore ends as a publish does: 'unchanged' when the drafts and the live ruleset already equal
 * the target, 'stale' or 'missing_lists' when the plan must be made and compiled again.
 */
export type RestoreOutcome = StoreRulesetOutcome;

/**
 * Write command: resets the drafts to published version `version` and publishes them as version
 * N+1 with `artifact`, compiled elsewhere from `restorePlan(snapshot, version)`; one transaction.
 * `archivedLists`: the lists read by each rule the plan saves archived (the artifact has only the
 * rules it compiled), by rule id; a list read by a draft rule of any status stays in use.
 */
export function storeRestoredRuleset(
  db: Db, projectId: string, version: number, snapshot: DraftSnapshot, artifact: RulesetArtifact,
  archivedLists: Readonly<Record<string, readonly string[]>>, restoredBy: string, now: number,
): RestoreOutcome {
  if (!sameDrafts(readDraftSnapshot(db, projectId), snapshot)) return { kind: 'stale' };
  const target = readRuleset(db, projectId, version);
  if (target === null) throw new Error(`ruleset version ${version} of project ${projectId} is not stored`);
  const plan = restorePlan(snapshot, target);
  const live = readLiveRuleset(db, projectId);
  // Restoring the live version (or one equal to it) resets the drafts and publishes nothing; with
  // the drafts already reset, it writes nothing at all.
  const resetOnly = live !== null && !publishWouldChange(plan, live);
  if (resetOnly && !restoreChangesDrafts(plan)) return { kind: 'unchanged', ruleset: live };
  const listsOf = new Map<string, readonly string[]>(artifact.rules.map((rule) => [rule.rule_id, rule.lists]));
  for (const [ruleId, lists] of Object.entries(archivedLists)) listsOf.set(ruleId, lists);
  const missing = missingLists(db, projectId, [...new Set([...artifact.lists, ...Object.values(archivedLists).flat()])]);
  if (missing.length > 0) return { kind: 'missing_lists', lists: missing };
  for (const rule of plan.saved) {
    const lists = listsOf.get(rule.rule_id);
    if (lists === undefined) throw new Error(`the lists read by rule ${rule.rule_id} (${rule.status}) are not known`);
    const stored = saveDraftRule(db, projectId, rule, restoredBy, now);
    if (stored.version !== rule.version) throw new Error(`rule ${rule.rule_id} was saved as version ${stored.version}, planned ${rule.version}`);
    setRuleLists(db, projectId, rule.rule_id, lists);
  }
  if (plan.policyChanged) saveDraftPolicy(db, projectId, plan.policy, now);
  const ruleset = resetOnly ? live : insertRuleset(db, projectId, plan, artifact, restoredBy, now);
  recordRestoreInAuditTrail(db, { projectId, actor: restoredBy, restoredVersion: version, publishedVersion: ruleset.version, rulesChanged: plan.saved.map((rule) => rule.rule_id), policyChanged: plan.policyChanged, at: now });
  return resetOnly ? { kind: 'unchanged', ruleset } : { kind: 'published', ruleset };
}

export interface RestoreAuditEntry {
  readonly projectId: string;
  readonly actor: string;
  readonly restoredVersion: number;
  readonly publishedVersion: number;
  readonly rulesChanged: readonly string[];
  readonly policyChanged: boolean;
  readonly at: number;
}

/** A restore's audit record, in the restore's transaction: which version came back as which. */
function recordRestoreInAuditTrail(db: Db, entry: RestoreAuditEntry): void {
  recordAudit(db, {
    projectId: entry.projectId, actor: entry.actor, action: 'ruleset.restore', target: `ruleset:${entry.publishedVersion}`,
    summary: { version: entry.publishedVersion, restored_version: entry.restoredVersion, changed_rules: [...entry.rulesChanged], policy_changed: entry.policyChanged },
    at: entry.at,
  });
}
