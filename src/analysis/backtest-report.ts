// The report of a backtest, counted event by event (docs/backtests.md, "The report"). Pure.
//
// Both sides are counted over the same events: those the candidate could judge exactly (the
// replayed ones). Events it could not are counted by reason and left out of every comparison.
import type { RuleKind, RuleStatus, RulesetOutcome } from '../../compiler/index.js';
import type { Decision } from '../scoring/score-result.js';
import { precisionRecall, type Label, type PrecisionRecall } from './labels.js';
import type { SignalGroup } from './replay.js';
import { kDecisions, type StoredOutcome } from './stored-outcomes.js';

/** Sample event ids kept per transition. */
export const kTransitionSamples = 20;
/** Score histogram: buckets of this width, at most kMaxBuckets of them (the last one open). */
export const kBucketWidth = 10;
export const kMaxBuckets = 50;

export interface CandidateRule {
  readonly rule_id: string;
  readonly kind: RuleKind;
  readonly status: RuleStatus;
}

interface SideCounts {
  hits: number;
  shadowHits: number;
  /** Labelled events on which the rule matched (active or shadow). */
  hitsFraud: number;
  hitsLegitimate: number;
}

interface RuleCounts {
  readonly stored: SideCounts;
  readonly candidate: SideCounts;
}

interface DecisionLabels {
  blockFraud: number;
  blockLegitimate: number;
  flaggedFraud: number;
  flaggedLegitimate: number;
}

function sideCounts(): SideCounts {
  return { hits: 0, shadowHits: 0, hitsFraud: 0, hitsLegitimate: 0 };
}

export interface ReplayedEvent {
  readonly eventId: string;
  readonly label: Label | undefined;
  readonly storedDecision: Decision;
  readonly storedScore: number;
  readonly stored: StoredOutcome;
  readonly candidateDecision: Decision;
  readonly candidateScore: number;
  readonly candidate: RulesetOutcome;
}

export class BacktestTally {
  scanned = 0;
  /** Events of the range not scored when the backtest started (among those read): left out. */
  pending = 0;
  truncated = false;
  overBudget = 0;
  readonly #notReplayable = { no_recorded_signals: 0, erased: 0, signals_not_recorded: 0 };
  readonly #missingGroups = { velocity: 0, links: 0, account: 0 };
  readonly #transitions = new Map<string, { events: number; samples: string[] }>();
  readonly #decisions = { stored: { allow: 0, review: 0, block: 0 }, candidate: { allow: 0, review: 0, block: 0 } };
  #replayed = 0;
  #sameDecision = 0;
  #sameDecisionAndScore = 0;
  readonly #rules = new Map<string, RuleCounts>();
  readonly #scores = { stored: new Map<number, number>(), candidate: new Map<number, number>() };
  readonly #labelsKnown: boolean;
  #fraud = 0;
  #legitimate = 0;
  readonly #decisionLabels = {
    stored: { blockFraud: 0, blockLegitimate: 0, flaggedFraud: 0, flaggedLegitimate: 0 },
    candidate: { blockFraud: 0, blockLegitimate: 0, flaggedFraud: 0, flaggedLegitimate: 0 },
  };
  readonly #candidateRules: ReadonlyMap<string, CandidateRule>;

  /** `labelsKnown`: whether the store keeps labels (labels.ts); without, no precision or recall. */
  constructor(candidateRules: readonly CandidateRule[], labelsKnown: boolean) {
    this.#candidateRules = new Map(candidateRules.map((rule) => [rule.rule_id, rule]));
    this.#labelsKnown = labelsKnown;
    for (const from of kDecisions) for (const to of kDecisions) this.#transitions.set(`${from}>${to}`, { events: 0, samples: [] });
  }

  notReplayable(reason: 'no_recorded_signals' | 'erased' | 'signals_not_recorded', groups: readonly SignalGroup[] = []): void {
    this.#notReplayable[reason]++;
    for (const group of groups) this.#missingGroups[group]++;
  }

  replayed(event: ReplayedEvent): void {
    this.#replayed++;
    const transition = this.#transitions.get(`${event.storedDecision}>${event.candidateDecision}`)!;
    transition.events++;
    if (transition.samples.length < kTransitionSamples) transition.samples.push(event.eventId);
    this.#decisions.stored[event.storedDecision]++;
    this.#decisions.candidate[event.candidateDecision]++;
    if (event.storedDecision === event.candidateDecision) {
      this.#sameDecision++;
      if (event.storedScore === event.candidateScore) this.#sameDecisionAndScore++;
    }
    addScore(this.#scores.stored, event.storedScore);
    addScore(this.#scores.candidate, event.candidateScore);

    const label = event.label;
    if (label === 'fraud') this.#fraud++;
    else if (label === 'legitimate') this.#legitimate++;
    if (label !== undefined) {
      countDecisionLabel(this.#decisionLabels.stored, event.storedDecision, label);
      countDecisionLabel(this.#decisionLabels.candidate, event.candidateDecision, label);
    }
    // A rule is counted once per event and side, even if it were listed twice.
    const storedHit = new Set<string>();
    for (const entry of event.stored.matched) {
      this.#rule(entry.rule_id).stored.hits++;
      storedHit.add(entry.rule_id);
    }
    for (const outcome of event.stored.shadow) {
      if (!outcome.matched) continue;
      this.#rule(outcome.rule_id).stored.shadowHits++;
      storedHit.add(outcome.rule_id);
    }
    const candidateHit = new Set<string>();
    for (const entry of event.candidate.breakdown) {
      if (!entry.matched) continue;
      this.#rule(entry.rule_id).candidate.hits++;
      candidateHit.add(entry.rule_id);
    }
    for (const outcome of event.candidate.shadow) {
      if (!outcome.matched) continue;
      this.#rule(outcome.rule_id).candidate.shadowHits++;
      candidateHit.add(outcome.rule_id);
    }
    if (label !== undefined) {
      for (const ruleId of storedHit) countLabel(this.#rule(ruleId).stored, label);
      for (const ruleId of candidateHit) countLabel(this.#rule(ruleId).candidate, label);
    }
  }

  #rule(ruleId: string): RuleCounts {
    let counts = this.#rules.get(ruleId);
    if (counts === undefined) {
      counts = { stored: sideCounts(), candidate: sideCounts() };
      this.#rules.set(ruleId, counts);
    }
    return counts;
  }

  /** The report as the API answers it (docs/backtests.md). */
  report(): Record<string, unknown> {
    const notReplayable = this.#notReplayable.no_recorded_signals + this.#notReplayable.erased + this.#notReplayable.signals_not_recorded;
    const labels = this.#labelsKnown;
    const side = (counts: SideCounts): Record<string, unknown> => ({
      hits: counts.hits,
      shadow_hits: counts.shadowHits,
      ...(labels ? precisionRecall(counts.hitsFraud, counts.hitsLegitimate, this.#fraud) : {}),
    });
    // Every rule of the candidate, and every other rule that matched on either side; by rule_id.
    const ruleIds = [...new Set([...this.#candidateRules.keys(), ...this.#rules.keys()])].sort();
    const maxScore = Math.max(maxOf(this.#scores.stored), maxOf(this.#scores.candidate));
    return {
      events_scanned: this.scanned,
      truncated: this.truncated,
      events_pending: this.pending,
      events_replayed: this.#replayed,
      not_replayable: { total: notReplayable, ...this.#notReplayable, missing_signals: { ...this.#missingGroups } },
      candidate_over_budget: this.overBudget,
      decisions: { stored: { ...this.#decisions.stored }, candidate: { ...this.#decisions.candidate } },
      unchanged: { decision: this.#sameDecision, decision_and_score: this.#sameDecisionAndScore },
      transitions: [...this.#transitions.entries()].map(([key, t]) => {
        const [from, to] = key.split('>');
        return { from, to, events: t.events, sample_event_ids: t.samples };
      }),
      rules: ruleIds.map((ruleId) => {
        const counts = this.#rules.get(ruleId) ?? { stored: sideCounts(), candidate: sideCounts() };
        return { rule_id: ruleId, candidate_status: this.#candidateRules.get(ruleId)?.status ?? null, stored: side(counts.stored), candidate: side(counts.candidate) };
      }),
      labels: labels
        ? {
            fraud: this.#fraud,
            legitimate: this.#legitimate,
            stored: decisionPrecision(this.#decisionLabels.stored, this.#fraud),
            candidate: decisionPrecision(this.#decisionLabels.candidate, this.#fraud),
          }
        : null,
      score_distribution: {
        stored: distribution(this.#scores.stored, maxScore),
        candidate: distribution(this.#scores.candidate, maxScore),
      },
    };
  }
}

function addScore(scores: Map<number, number>, score: number): void {
  scores.set(score, (scores.get(score) ?? 0) + 1);
}

function countLabel(counts: SideCounts, label: Label): void {
  if (label === 'fraud') counts.hitsFraud++;
  else counts.hitsLegitimate++;
}

function countDecisionLabel(counts: DecisionLabels, decision: Decision, label: Label): void {
  const fraud = label === 'fraud';
  if (decision === 'block') fraud ? counts.blockFraud++ : counts.blockLegitimate++;
  if (decision !== 'allow') fraud ? counts.flaggedFraud++ : counts.flaggedLegitimate++;
}

function decisionPrecision(counts: DecisionLabels, fraud: number): { block: PrecisionRecall; review_or_block: PrecisionRecall } {
  return {
    block: precisionRecall(counts.blockFraud, counts.blockLegitimate, fraud),
    review_or_block: precisionRecall(counts.flaggedFraud, counts.flaggedLegitimate, fraud),
  };
}

function maxOf(scores: ReadonlyMap<number, number>): number {
  let max = 0;
  for (const score of scores.keys()) if (score > max) max = score;
  return max;
}

/**
 * Mean, percentiles and a histogram of scores. The buckets of both sides share their bounds
 * (`maxScore` is the higher maximum of the two), so the histograms can be laid side by side.
 */
export function distribution(scores: ReadonlyMap<number, number>, maxScore: number): Record<string, unknown> {
  const sorted = [...scores.entries()].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, n]) => sum + n, 0);
  const percentile = (p: number): number | null => {
    if (total === 0) return null;
    const rank = Math.ceil(p * total);
    let seen = 0;
    for (const [score, n] of sorted) {
      seen += n;
      if (seen >= rank) return score;
    }
    return sorted[sorted.length - 1]![0];
  };
  const bucketCount = Math.min(kMaxBuckets, Math.floor(maxScore / kBucketWidth) + 1);
  const buckets = Array.from({ length: bucketCount }, (_, i) => ({
    from: i * kBucketWidth,
    to: i === bucketCount - 1 && maxScore >= kMaxBuckets * kBucketWidth ? null : i * kBucketWidth + kBucketWidth - 1,
    events: 0,
  }));
  let sum = 0;
  for (const [score, n] of sorted) {
    sum += score * n;
    buckets[Math.min(bucketCount - 1, Math.floor(score / kBucketWidth))]!.events += n;
  }
  return {
    events: total,
    mean: total === 0 ? null : Math.round((sum / total) * 100) / 100,
    p50: percentile(0.5),
    p90: percentile(0.9),
    p99: percentile(0.99),
    max: total === 0 ? null : sorted[sorted.length - 1]![0],
    buckets,
  };
}
