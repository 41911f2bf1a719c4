// Rule statistics read from the store (stats-worker.ts runs this on its own thread): the day
// counts of rule-stats.ts for the days asked, read in one scan per run of days not kept, and the
// labelled events for precision and recall.
//
// A day is finished — its counts kept — once it ended more than kArrivalDisorderMs ago and none of
// its events is still pending; stored results never change afterwards (an erasure removes personal
// data from payloads, not results). Labels do change (a chargeback arrives weeks later), so
// precision and recall are read anew on every request.
import type { Decision } from '../scoring/score-result.js';
import { FifoCache } from '../state/fifo-cache.js';
import type { Db } from '../store/database.js';
import { EventChunks, kArrivalDisorderMs, seqRangeOf } from './event-range.js';
import { labelsOf, precisionRecall } from './labels.js';
import { countRow, newDayAggregate, ruleDay, sumDays, type DayAggregate, type RuleDay } from './rule-stats.js';
import { activeRuleRan, readStoredOutcome, StoredVersions } from './stored-outcomes.js';

export interface StatsTask {
  readonly projectId: string;
  readonly ruleId: string;
  /** UTC midnights of the first and last day, both included. */
  readonly from: number;
  readonly to: number;
  readonly now: number;
}

export interface StatsResult {
  readonly days: Array<RuleDay & { date: string }>;
  readonly total: RuleDay;
  /** null: the store keeps no labels. */
  readonly labels: null | {
    readonly fraud: number;
    readonly legitimate: number;
    readonly matched_fraud: number;
    readonly matched_legitimate: number;
    readonly precision: number | null;
    readonly recall: number | null;
  };
  /** Days answered from kept counts, and rows read (for tests and the log). */
  readonly days_kept: number;
  readonly rows_read: number;
}

const kDayMs = 86_400_000;
const kChunk = 5_000;
/** Finished days kept, all projects together (a day's counts are a few kilobytes). */
export const kKeptDays = 2_000;

interface StatsRow {
  seq: number;
  received_at: number;
  state: string;
  ruleset_version: number | null;
  decision: Decision | null;
  result: string | null;
  shadow: string | null;
}

export class RuleStatsReader {
  readonly #db: Db;
  readonly #versions: StoredVersions;
  readonly #kept = new FifoCache<string, DayAggregate>(kKeptDays);

  constructor(db: Db) {
    this.#db = db;
    this.#versions = new StoredVersions(db);
  }

  read(task: StatsTask): StatsResult {
    const version = (v: number) => this.#versions.get(task.projectId, v);
    const key = (day: number): string => `${task.projectId}\u0000${task.from + day * kDayMs}`;
    const dayCount = (task.to - task.from) / kDayMs + 1;
    const days: DayAggregate[] = [];
    // Which days came from the cache, decided once: keeping the days read below may push some of
    // them out of it meanwhile, and reading such a day again would add its rows twice.
    const found: boolean[] = [];
    let daysKept = 0;
    for (let i = 0; i < dayCount; i++) {
      const day = this.#kept.get(key(i));
      days.push(day ?? newDayAggregate());
      found.push(day !== undefined);
      if (day !== undefined) daysKept++;
    }
    // Days not kept, read in runs of consecutive days: one scan per run.
    let rowsRead = 0;
    for (let i = 0; i < dayCount; ) {
      if (found[i]) {
        i++;
        continue;
      }
      let end = i;
      while (end + 1 < dayCount && !found[end + 1]) end++;
      const from = task.from + i * kDayMs;
      const to = task.from + (end + 1) * kDayMs;
      const chunks = new EventChunks<StatsRow>(
        this.#db, 'received_at, state, ruleset_version, decision, result, shadow', task.projectId, from, to, seqRangeOf(this.#db, from, to), kChunk,
      );
      for (let rows = chunks.next(); rows.length > 0; rows = chunks.next()) {
        rowsRead += rows.length;
        for (const row of rows) countRow(days[Math.floor((row.received_at - task.from) / kDayMs)]!, row, version);
      }
      for (let d = i; d <= end; d++) {
        const dayEnd = task.from + (d + 1) * kDayMs;
        if (dayEnd + kArrivalDisorderMs <= task.now && days[d]!.pending === 0) this.#keep(key(d), days[d]!);
      }
      i = end + 1;
    }
    const ruleDays = days.map((day, i) => ({ date: new Date(task.from + i * kDayMs).toISOString().slice(0, 10), ...ruleDay(day, task.ruleId, version) }));
    return { days: ruleDays, total: sumDays(ruleDays), labels: this.#labels(task), days_kept: daysKept, rows_read: rowsRead };
  }

  #keep(key: string, day: DayAggregate): void {
    this.#kept.set(key, day);
  }

  /**
   * Precision and recall of the rule over the labelled events of the range on which it ran (as an
   * active rule that was reached, or as a shadow rule): precision among those it matched, recall
   * among those labelled fraud.
   */
  #labels(task: StatsTask): StatsResult['labels'] {
    const to = task.to + kDayMs;
    const labels = labelsOf(this.#db, task.projectId, seqRangeOf(this.#db, task.from, to), task.from, to);
    if (labels === null) return null;
    const read = this.#db.prepare(`SELECT ruleset_version, result, shadow FROM events WHERE project_id = ? AND event_id = ? AND state = 'scored'`);
    let fraud = 0;
    let legitimate = 0;
    let matchedFraud = 0;
    let matchedLegitimate = 0;
    for (const [eventId, label] of labels) {
      const row = read.get(task.projectId, eventId) as { ruleset_version: number; result: string; shadow: string | null } | undefined;
      if (row === undefined) continue;
      const version = this.#versions.get(task.projectId, row.ruleset_version);
      const outcome = readStoredOutcome(version, row.result, row.shadow);
      const ranActive = activeRuleRan(version, task.ruleId, outcome.verdict?.rule_id ?? null);
      const ranShadow = version.shadowIds.includes(task.ruleId);
      if (!ranActive && !ranShadow) continue;
      const matched = outcome.matched.some((entry) => entry.rule_id === task.ruleId) || outcome.shadow.some((shadow) => shadow.rule_id === task.ruleId && shadow.matched);
      if (label === 'fraud') {
        fraud++;
        if (matched) matchedFraud++;
      } else {
        legitimate++;
        if (matched) matchedLegitimate++;
      }
    }
    return { fraud, legitimate, matched_fraud: matchedFraud, matched_legitimate: matchedLegitimate, ...precisionRecall(matchedFraud, matchedLegitimate, fraud) };
  }
}
