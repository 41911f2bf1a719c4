// The score result (interface, "Score result"), assembled field by field from what the compiled
// ruleset returned and the project's policy. Pure.
import type { BreakdownEntry, RulesetOutcome } from '../../compiler/index.js';
import type { EnrichmentStatus } from '../pool/protocol.js';
import type { Policy } from '../rulesets/ruleset-store.js';

export type Decision = 'allow' | 'review' | 'block';

export interface ScoreResult {
  event_id: string;
  state: 'scored';
  decision: Decision;
  risk_score: number;
  max_possible: number;
  breakdown: BreakdownEntry[];
  flags: string[];
  actions?: string[];
  trust_override: boolean;
  hard_block_hit: boolean;
  degraded?: string[];
  enrichment_status: Record<string, EnrichmentStatus>;
  ruleset_version: number;
  account_public_id?: string;
  latency_ms?: number;
}

/**
 * DESIGN §3: a trust verdict allows with score 0; a hard block blocks with the maximum score;
 * otherwise the score (floored at 0) is compared with the block, then the review threshold.
 */
export function decide(outcome: RulesetOutcome, policy: Policy): { decision: Decision; risk_score: number } {
  if (outcome.trust_override) return { decision: 'allow', risk_score: 0 };
  if (outcome.hard_block_hit) return { decision: 'block', risk_score: outcome.max_possible };
  const risk = Math.max(0, outcome.score);
  if (risk >= policy.block_threshold) return { decision: 'block', risk_score: risk };
  if (risk >= policy.review_threshold) return { decision: 'review', risk_score: risk };
  return { decision: 'allow', risk_score: risk };
}

export interface ScoreInputs {
  readonly eventId: string;
  readonly outcome: RulesetOutcome;
  readonly policy: Policy;
  readonly rulesetVersion: number;
  readonly enrichment: Readonly<Record<string, EnrichmentStatus>>;
  readonly accountPublicId: string | null;
  readonly latencyMs: number;
}

export function buildScoreResult(inputs: ScoreInputs): ScoreResult {
  const { outcome } = inputs;
  const { decision, risk_score } = decide(outcome, inputs.policy);
  const result: ScoreResult = {
    event_id: inputs.eventId,
    state: 'scored',
    decision,
    risk_score,
    max_possible: outcome.max_possible,
    breakdown: outcome.breakdown,
    flags: outcome.flags,
    trust_override: outcome.trust_override,
    hard_block_hit: outcome.hard_block_hit,
    enrichment_status: { ...inputs.enrichment },
    ruleset_version: inputs.rulesetVersion,
  };
  if (outcome.actions.length > 0) result.actions = outcome.actions;
  if (outcome.degraded.length > 0) result.degraded = outcome.degraded;
  if (inputs.accountPublicId !== null) result.account_public_id = inputs.accountPublicId;
  result.latency_ms = roundLatency(inputs.latencyMs);
  return result;
}

/** The result as stored, and as rebuilt later: without degraded, latency_ms and account_public_id. */
export function storedResult(result: ScoreResult): string {
  const { degraded: _degraded, latency_ms: _latency, account_public_id: _account, ...kept } = result;
  return JSON.stringify(kept);
}

function roundLatency(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
