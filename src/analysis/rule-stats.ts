// Rule statistics (GET /v1/rules/{rule_id}/stats, docs/backtests.md "Rule statistics"): per UTC
// day, the stored results of a project's events counted for every rule at once, then read out for
// one rule. Pure: the stats thread (stats-worker.ts) feeds it rows and versions.
//
// Counting all rules of a day in one pass lets a finished day be kept and answered again for any
// rule. "Evaluated" is not stored per rule: an active rule runs on every event of a version that
// has it, unless a trust or hard-block rule ended evaluation before it; so a day keeps its events
// per (version, rule that ended evaluation) and the count is worked out per rule when asked.
import type { Decision } from '../scoring/score-result.js';
import { activeRuleRan, kDecisions, readStoredOutcome, shadowDecision, type StoredOutcome, type StoredVersion } from './stored-outcomes.js';

export interface DayAggregate {
  /** Scored events of the day. */
  events: number;
  /** Events of the day still pending (async, not scored yet): such a day is not final. */
  pending: number;
  /** Version → the rule that ended evaluation ('' for none) → events. */
  readonly byVersion: Map<number, Map<string, number>>;
  /** Rule → events it matched on as an active rule. */
  readonly activeMatched: Map<string, number>;
  /** Rule → events it matched on as a shadow rule. */
  readonly shadowMatched: Map<string, number>;
  /** Rule → events on which it could not be judged as a shadow rule (degraded in its shadow outcome). */
  readonly shadowDegraded: Map<string, number>;
  /** Shadow rule → 'stored>would-be' decision → events whose decision it would have changed. */
  readonly shadowChanges: Map<string, Map<string, number>>;
}

export function newDayAggregate(): DayAggregate {
  return { events: 0, pending: 0, byVersion: new Map(), activeMatched: new Map(), shadowMatched: new Map(), shadowDegraded: new Map(), shadowChanges: new Map() };
}

function increment<K>(map: Map<K, number>, key: K, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

/** Counts one scored event of the day. */
export function countEvent(day: DayAggregate, version: StoredVersion, outcome: StoredOutcome, decision: Decision): void {
  day.events++;
  let verdicts = day.byVersion.get(version.version);
  if (verdicts === undefined) {
    verdicts = new Map();
    day.byVersion.set(version.version, verdicts);
  }
  increment(verdicts, outcome.verdict?.rule_id ?? '');
  for (const entry of outcome.matched) increment(day.activeMatched, entry.rule_id);
  for (const shadow of outcome.shadow) {
    if (shadow.degraded) increment(day.shadowDegraded, shadow.rule_id);
    if (!shadow.matched) continue;
    increment(day.shadowMatched, shadow.rule_id);
    const wouldBe = shadowDecision(shadow, outcome, decision, version.policy);
    if (wouldBe === decision) continue;
    let changes = day.shadowChanges.get(shadow.rule_id);
    if (changes === undefined) {
      changes = new Map();
      day.shadowChanges.set(shadow.rule_id, changes);
    }
    increment(changes, `${decision}>${wouldBe}`);
  }
}

/** Reads a stored row into `day`; `version` resolves the row's ruleset version. */
export function countRow(
  day: DayAggregate, row: { state: string; ruleset_version: number | null; decision: Decision | null; result: string | null; shadow: string | null },
  version: (v: number) => StoredVersion,
): void {
  if (row.state === 'pending') {
    day.pending++;
    return;
  }
  if (row.state !== 'scored' || row.result === null) return; // 'erased' before it was scored: never judged
  const stored = version(row.ruleset_version!);
  countEvent(day, stored, readStoredOutcome(stored, row.result, row.shadow), row.decision!);
}

export interface RuleDay {
  readonly events: number;
  readonly active: { evaluated: number; matched: number };
  readonly shadow: { evaluated: number; matched: number; degraded: number; decisions_changed: number; changes: Array<{ from: string; to: string; events: number }> };
}

/** One rule's numbers for a day. */
export function ruleDay(day: DayAggregate, ruleId: string, version: (v: number) => StoredVersion): RuleDay {
  let activeEvaluated = 0;
  let shadowEvaluated = 0;
  for (const [v, verdicts] of day.byVersion) {
    const stored = version(v);
    if (stored.activeOrder.has(ruleId)) {
      for (const [verdict, events] of verdicts) if (activeRuleRan(stored, ruleId, verdict === '' ? null : verdict)) activeEvaluated += events;
    }
    if (stored.shadowIds.includes(ruleId)) for (const events of verdicts.values()) shadowEvaluated += events;
  }
  const changes = changeList(day.shadowChanges.get(ruleId));
  return {
    events: day.events,
    active: { evaluated: activeEvaluated, matched: day.activeMatched.get(ruleId) ?? 0 },
    shadow: {
      evaluated: shadowEvaluated,
      matched: day.shadowMatched.get(ruleId) ?? 0,
      degraded: day.shadowDegraded.get(ruleId) ?? 0,
      decisions_changed: changes.reduce((sum, change) => sum + change.events, 0),
      changes,
    },
  };
}

/** Decision changes in a fixed order (allow, review, block, from then to), only those that happened. */
function changeList(changes: ReadonlyMap<string, number> | undefined): Array<{ from: string; to: string; events: number }> {
  const list: Array<{ from: string; to: string; events: number }> = [];
  if (changes === undefined) return list;
  for (const from of kDecisions) {
    for (const to of kDecisions) {
      const events = changes.get(`${from}>${to}`);
      if (events !== undefined) list.push({ from, to, events });
    }
  }
  return list;
}

/** The sum of days (the range's total). */
export function sumDays(days: readonly RuleDay[]): RuleDay {
  const changes = new Map<string, number>();
  const total = { events: 0, active: { evaluated: 0, matched: 0 }, shadow: { evaluated: 0, matched: 0, degraded: 0, decisions_changed: 0, changes: [] as RuleDay['shadow']['changes'] } };
  for (const day of days) {
    total.events += day.events;
    total.active.evaluated += day.active.evaluated;
    total.active.matched += day.active.matched;
    total.shadow.evaluated += day.shadow.evaluated;
    total.shadow.matched += day.shadow.matched;
    total.shadow.degraded += day.shadow.degraded;
    total.shadow.decisions_changed += day.shadow.decisions_changed;
    for (const change of day.shadow.changes) increment(changes, `${change.from}>${change.to}`, change.events);
  }
  total.shadow.changes = changeList(changes);
  return total;
}
