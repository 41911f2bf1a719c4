// Counts for /metrics of what the rules decided: events per project and decision, and matches per
// project and published rule (active and shadow). The workers count each batch (off the HTTP
// thread) into one small object sent back with the batch's results; the main thread adds it to
// running totals that /metrics reads when scraped. Label values are bounded: project ids and the
// rule ids of published rulesets. Pure.
import type { RulesetOutcome } from '../../compiler/index.js';

/** Counts of one batch: "d\0<project>\0<decision>" and "a|s\0<project>\0<rule_id>" → count. */
export type Tally = Record<string, number>;

const kSeparator = '\u0000';

export function newTally(): Tally {
  return Object.create(null) as Tally;
}

function bump(tally: Tally, key: string): void {
  tally[key] = (tally[key] ?? 0) + 1;
}

/** Adds one scored event to a batch's tally. */
export function countOutcome(tally: Tally, projectId: string, decision: string, outcome: Pick<RulesetOutcome, 'breakdown' | 'shadow'>): void {
  bump(tally, `d${kSeparator}${projectId}${kSeparator}${decision}`);
  for (const entry of outcome.breakdown) if (entry.matched) bump(tally, `a${kSeparator}${projectId}${kSeparator}${entry.rule_id}`);
  for (const entry of outcome.shadow) if (entry.matched) bump(tally, `s${kSeparator}${projectId}${kSeparator}${entry.rule_id}`);
}

export type Labels = Record<string, string>;

/** Running totals on the main thread. */
export class OutcomeCounts {
  readonly #totals = new Map<string, number>();

  add(tally: Tally | undefined): void {
    if (tally === undefined) return;
    for (const key in tally) this.#totals.set(key, (this.#totals.get(key) ?? 0) + tally[key]!);
  }

  /** Events scored, labelled by project_id and decision. */
  decisions(): Array<[Labels, number]> {
    return this.#select('d', (project, decision) => ({ project_id: project, decision }));
  }

  /** Rule matches, labelled by project_id, rule_id and status (active or shadow). */
  ruleHits(): Array<[Labels, number]> {
    return [
      ...this.#select('a', (project, rule) => ({ project_id: project, rule_id: rule, status: 'active' })),
      ...this.#select('s', (project, rule) => ({ project_id: project, rule_id: rule, status: 'shadow' })),
    ];
  }

  #select(kind: string, labels: (project: string, value: string) => Labels): Array<[Labels, number]> {
    const selected: Array<[Labels, number]> = [];
    for (const [key, count] of this.#totals) {
      const [keyKind, project, value] = key.split(kSeparator) as [string, string, string];
      if (keyKind === kind) selected.push([labels(project, value), count]);
    }
    return selected;
  }
}
