// What the stored results of events say, rule by rule (rule statistics, backtests): which active
// rules matched, whether a trust or hard-block rule ended evaluation, the raw score, the shadow
// outcomes; and what a shadow rule would have decided had it been active. Read from the compact
// stored form through the ruleset version's layout (scoring/result-layout.ts); results stored in
// full before the compact format are read too.
import type { BreakdownEntry, RuleDefinition, RuleKind, ShadowOutcome } from '../../compiler/index.js';
import { LoadedRulesets } from '../scoring/loaded-rulesets.js';
import type { ResultLayout } from '../scoring/result-layout.js';
import type { Decision, Thresholds } from '../scoring/score-result.js';
import { FifoCache } from '../state/fifo-cache.js';
import type { Db } from '../store/database.js';

export const kDecisions: readonly Decision[] = ['allow', 'review', 'block'];

/** A published ruleset version, as its stored results need it. */
export interface StoredVersion {
  readonly version: number;
  readonly policy: Thresholds;
  readonly layout: ResultLayout;
  /** Active rules in evaluation order, and each one's position in it. */
  readonly activeIds: readonly string[];
  readonly activeOrder: ReadonlyMap<string, number>;
  readonly shadowIds: readonly string[];
  readonly kinds: ReadonlyMap<string, RuleKind>;
}

/** Versions kept loaded; a scan meets few, statistics over many projects a few each. */
const kKeptVersions = 256;

/** Versions of the projects' rulesets, loaded once each (up to kKeptVersions). Throws for a version that is not stored or does not load. */
export class StoredVersions {
  readonly #loaded: LoadedRulesets;
  readonly #row;
  readonly #cache = new FifoCache<string, StoredVersion>(kKeptVersions);

  constructor(db: Db) {
    this.#loaded = new LoadedRulesets(db);
    this.#row = db.prepare('SELECT rules, policy FROM rulesets WHERE project_id = ? AND version = ?');
  }

  get(projectId: string, version: number): StoredVersion {
    const key = `${projectId}\u0000${version}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const loaded = this.#loaded.get(projectId, version);
    if (typeof loaded === 'string') throw new Error(loaded);
    const row = this.#row.get(projectId, version) as { rules: string; policy: string };
    const rules = JSON.parse(row.rules) as RuleDefinition[];
    const policy = JSON.parse(row.policy) as Thresholds;
    const activeIds = loaded.layout.activeRuleIds();
    const stored: StoredVersion = {
      version,
      policy: { review_threshold: policy.review_threshold, block_threshold: policy.block_threshold },
      layout: loaded.layout,
      activeIds,
      activeOrder: new Map(activeIds.map((id, i) => [id, i])),
      shadowIds: rules.filter((rule) => rule.status === 'shadow').map((rule) => rule.rule_id),
      kinds: new Map(rules.map((rule) => [rule.rule_id, rule.kind])),
    };
    this.#cache.set(key, stored);
    return stored;
  }
}

export interface StoredOutcome {
  readonly matched: readonly BreakdownEntry[];
  /** The matched trust or hard-block rule that ended evaluation; null when all rules ran. */
  readonly verdict: BreakdownEntry | null;
  readonly verdictKind: 'trust' | 'hard_block' | null;
  /** The sum of the matched scoring deltas, not floored (0 on a verdict). */
  readonly rawScore: number;
  /** Every shadow rule's outcome (matched or not). */
  readonly shadow: readonly ShadowOutcome[];
}

export function readStoredOutcome(version: StoredVersion, result: string, shadow: string | null): StoredOutcome {
  const matched = version.layout.matchedEntries(result);
  let verdict: BreakdownEntry | null = null;
  let verdictKind: StoredOutcome['verdictKind'] = null;
  let rawScore = 0;
  for (const entry of matched) {
    const kind = version.kinds.get(entry.rule_id);
    if (kind === 'trust' || kind === 'hard_block') {
      verdict = entry;
      verdictKind = kind;
    }
    rawScore += entry.score_delta;
  }
  return { matched, verdict, verdictKind, rawScore: verdict === null ? rawScore : 0, shadow: shadow === null ? [] : version.layout.expandShadow(shadow) };
}

/** The decision of a score under thresholds (score-result.ts decide(), without verdicts). */
export function decisionForScore(risk: number, policy: Thresholds): Decision {
  if (risk >= policy.block_threshold) return 'block';
  if (risk >= policy.review_threshold) return 'review';
  return 'allow';
}

/**
 * What the event's decision would have been with this (matched) shadow rule made active and
 * everything else as stored (docs/rules.md, "How a ruleset is evaluated"): a trust rule allows;
 * a hard-block rule blocks unless an active trust rule ended evaluation first; a scoring rule
 * adds its delta to the stored raw score unless a verdict ended evaluation; a monitoring rule
 * changes nothing.
 */
export function shadowDecision(shadow: ShadowOutcome, stored: StoredOutcome, storedDecision: Decision, policy: Thresholds): Decision {
  if (!shadow.matched) return storedDecision;
  switch (shadow.kind) {
    case 'trust':
      return 'allow';
    case 'hard_block':
      return stored.verdictKind === 'trust' ? storedDecision : 'block';
    case 'scoring':
      return stored.verdict !== null ? storedDecision : decisionForScore(Math.max(0, stored.rawScore + shadow.score_delta), policy);
    case 'monitoring':
      return storedDecision;
  }
}

/**
 * Whether the active rule `ruleId` of `version` ran on an event with this outcome: every active
 * rule runs unless a trust or hard-block rule ended evaluation before it.
 */
export function activeRuleRan(version: StoredVersion, ruleId: string, verdictRuleId: string | null): boolean {
  const position = version.activeOrder.get(ruleId);
  if (position === undefined) return false;
  return verdictRuleId === null || position <= version.activeOrder.get(verdictRuleId)!;
}
