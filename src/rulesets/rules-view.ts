// What the rules API answers: stored drafts, history and published rulesets as wire records
// (docs/rules-api.md). Pure: times arrive as epoch milliseconds and leave as ISO 8601.
import type { RuleDefinition } from '../../compiler/index.js';
import { draftChanges, type DraftRuleRecord, type PolicyRecord, type PublishedRuleset, type RuleHistoryEntry } from './ruleset-store.js';

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** A rule with its fields in the documented order. */
function ruleFields(rule: RuleDefinition): Record<string, unknown> {
  return {
    rule_id: rule.rule_id,
    kind: rule.kind,
    status: rule.status,
    expression: rule.expression,
    score_delta: rule.score_delta,
    bands: rule.bands,
    action: rule.action,
    description: rule.description,
    version: rule.version,
  };
}

export function ruleView(record: DraftRuleRecord): Record<string, unknown> {
  return { ...ruleFields(record.rule), created_at: iso(record.created_at), updated_at: iso(record.updated_at) };
}

export function ruleWithHistoryView(record: DraftRuleRecord, history: readonly RuleHistoryEntry[]): Record<string, unknown> {
  return {
    ...ruleView(record),
    history: history.map((entry) => ({ ...ruleFields(entry.rule), changed_at: iso(entry.changed_at), changed_by: entry.changed_by })),
  };
}

export function policyView(policy: PolicyRecord): Record<string, unknown> {
  return {
    review_threshold: policy.review_threshold,
    block_threshold: policy.block_threshold,
    version: policy.version,
    updated_at: policy.updated_at === null ? null : iso(policy.updated_at),
  };
}

export function rulesetView(ruleset: PublishedRuleset, liveVersion: number | null): Record<string, unknown> {
  return {
    version: ruleset.version,
    live: ruleset.version === liveVersion,
    published_at: iso(ruleset.published_at),
    published_by: ruleset.published_by,
    max_possible: ruleset.max_possible,
    signals: ruleset.signals,
    policy: { review_threshold: ruleset.policy.review_threshold, block_threshold: ruleset.policy.block_threshold, version: ruleset.policy.version },
    rules: ruleset.rules.map(ruleFields),
  };
}

/** GET /v1/rules: the drafts, the live version and whether publishing would change anything. */
export function rulesListView(records: readonly DraftRuleRecord[], policy: PolicyRecord, live: PublishedRuleset | null): Record<string, unknown> {
  const changes = draftChanges({ rules: records.map((record) => record.rule), policy }, live);
  return {
    rules: records.map(ruleView),
    published_version: live?.version ?? null,
    published_at: live === null ? null : iso(live.published_at),
    drafts_differ: live === null || changes.changed_rules.length > 0 || changes.policy_changed,
    changed_rules: changes.changed_rules,
    policy_changed: changes.policy_changed,
  };
}
