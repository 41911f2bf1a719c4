// The score result (interface, "Score result"), assembled field by field from what the compiled
// ruleset returned and the project's policy. Pure.
//
// The result is built as JSON text once, in the rule worker: the stored form (what GET
// /v1/scores and a replay return), to which the sync response adds degraded, account_public_id
// and latency_ms. The HTTP thread only joins strings; it never parses or re-serialises the
// breakdown.
import type { RulesetOutcome } from '../../compiler/index.js';
import type { EnrichmentStatus } from '../pool/protocol.js';
import type { Environment } from '../auth/api-keys.js';

export type Decision = 'allow' | 'review' | 'block';

export interface Thresholds {
  readonly review_threshold: number;
  readonly block_threshold: number;
}

/**
 * DESIGN §3: a trust verdict allows with score 0; a hard block blocks with the maximum score;
 * otherwise the score (floored at 0) is compared with the block, then the review threshold.
 */
export function decide(outcome: RulesetOutcome, policy: Thresholds): { decision: Decision; risk_score: number } {
  if (outcome.trust_override) return { decision: 'allow', risk_score: 0 };
  if (outcome.hard_block_hit) return { decision: 'block', risk_score: outcome.max_possible };
  const risk = Math.max(0, outcome.score);
  if (risk >= policy.block_threshold) return { decision: 'block', risk_score: risk };
  if (risk >= policy.review_threshold) return { decision: 'review', risk_score: risk };
  return { decision: 'allow', risk_score: risk };
}

export interface StoredResultParts {
  readonly eventId: string;
  readonly decision: Decision;
  readonly riskScore: number;
  readonly maxPossible: number;
  /** The breakdown as JSON text (joined from per-entry fragments: scoring/result-layout.ts). */
  readonly breakdownJson: string;
  readonly flags: readonly string[];
  readonly actions: readonly string[];
  readonly trustOverride: boolean;
  readonly hardBlockHit: boolean;
  readonly enrichment: Readonly<Record<string, EnrichmentStatus>>;
  readonly rulesetVersion: number;
}

/**
 * The stored form of a result, as JSON text: every field of the interface's table except
 * degraded, latency_ms and account_public_id (interface, Idempotency 1), plus event_id, state
 * and ruleset_version. `actions` only when non-empty. A fresh result and one expanded from its
 * compact stored form go through here, so a replay answers byte for byte what the first answer did.
 */
export function storedResultJson(parts: StoredResultParts): string {
  return (
    `{"event_id":${JSON.stringify(parts.eventId)},"state":"scored","decision":"${parts.decision}","risk_score":${parts.riskScore}` +
    `,"max_possible":${parts.maxPossible},"breakdown":${parts.breakdownJson},"flags":${JSON.stringify(parts.flags)}` +
    (parts.actions.length > 0 ? `,"actions":${JSON.stringify(parts.actions)}` : '') +
    `,"trust_override":${parts.trustOverride},"hard_block_hit":${parts.hardBlockHit}` +
    `,"enrichment_status":${JSON.stringify(parts.enrichment)},"ruleset_version":${parts.rulesetVersion}}`
  );
}

/** The sync response: the stored form plus degraded (when non-empty), account_public_id and latency_ms. */
export function responseResultJson(stored: string, degraded: readonly string[], accountPublicId: string | null, latencyMs: number): string {
  return (
    stored.slice(0, -1) +
    (degraded.length > 0 ? `,"degraded":${JSON.stringify(degraded)}` : '') +
    (accountPublicId === null ? '' : `,"account_public_id":${JSON.stringify(accountPublicId)}`) +
    `,"latency_ms":${Math.round(latencyMs * 1000) / 1000}}`
  );
}

/**
 * The decision webhook body (Standard Webhooks: type, timestamp, data): the stored form plus the
 * account, and which project and environment it is of — a receiver that takes the live and the
 * sandbox project's messages at one URL tells them apart by more than which secret verifies.
 */
export function decisionWebhookJson(stored: string, accountPublicId: string | null, now: number, projectId: string, environment: Environment): string {
  const data = accountPublicId === null ? stored : `${stored.slice(0, -1)}${webhookAccountTail(accountPublicId)}`;
  return `{"type":"event.scored","timestamp":"${new Date(now).toISOString()}","project_id":${JSON.stringify(projectId)},"environment":"${environment}","data":${data}}`;
}

/**
 * A decision webhook message made with `provisional` as its account id, naming `stored` instead:
 * the account had been stored meanwhile under another id (the writer finds out at the commit).
 */
export function webhookJsonForAccount(payload: string, provisional: string, stored: string): string {
  const tail = `${webhookAccountTail(provisional)}}`;
  if (!payload.endsWith(tail)) throw new Error('the decision webhook message does not end with its account id');
  return `${payload.slice(0, -tail.length)}${webhookAccountTail(stored)}}`;
}

/**
 * The end of a decision webhook's `data` when it names the account: `,"account_public_id":"acc_…"}`
 * (the body closes with one more `}`). An erasure finds the account's messages by it and cuts it
 * out (accounts-service.ts).
 */
export function webhookAccountTail(accountPublicId: string): string {
  return `,"account_public_id":${JSON.stringify(accountPublicId)}}`;
}
