// The compact stored form of a score result, and its expansion back into the interface's result
// (DESIGN §8: the event log keeps "a compact result"). Pure.
//
// A compiled ruleset's breakdown entries and shadow outcomes are constants of its function
// (compiler loadRulesetWithEntries lists them, in an order every load of the source repeats). So a
// result is stored as the positions of the entries that matched, and the rest is derived from the
// ruleset on reading:
//   - a matched trust or hard-block rule ends evaluation: the breakdown is that entry alone, with
//     its action, no flags;
//   - otherwise the breakdown has one entry per active rule in evaluation order (the rule's
//     matched entry, or its unmatched one), flags are the matched monitoring rules and actions the
//     matched rules' actions, deduplicated, in that order — exactly what the emitted function does
//     (compiler/emit.ts, assemble).
// The stored text is `[1,[positions],{enrichment}]` (a few dozen bytes instead of ~4 KB); the
// shadow outcomes `[1,[positions]]`. Text that does not start with `[` is a result stored in full
// before this format existed, and is returned as it is.
//
// The breakdown's JSON is joined from per-entry fragments made once per ruleset, so neither
// writing nor expanding a result serialises the breakdown again.
import type { BreakdownEntry, RuleKind, RulesetOutcome, ShadowOutcome } from '../../compiler/index.js';
import type { EnrichmentStatus } from '../pool/protocol.js';
import { storedResultJson, type Decision } from './score-result.js';

const kFormat = 1;

export interface StoredResultHeader {
  readonly eventId: string;
  readonly decision: Decision;
  readonly riskScore: number;
  readonly rulesetVersion: number;
}

export class ResultLayout {
  readonly maxPossible: number;
  readonly #entries: ReadonlyArray<BreakdownEntry | ShadowOutcome>;
  readonly #position = new Map<object, number>();
  readonly #fragments: string[];
  readonly #kinds: ReadonlyMap<string, RuleKind>;
  /** Per active rule, in evaluation order: its unmatched entry. */
  readonly #unmatched: BreakdownEntry[] = [];

  /**
   * `entries` as listed by loadRulesetWithEntries; `kinds` the kind of each published rule (the
   * version's stored definitions); `maxPossible` the ruleset's.
   */
  constructor(entries: ReadonlyArray<BreakdownEntry | ShadowOutcome>, kinds: ReadonlyMap<string, RuleKind>, maxPossible: number) {
    this.#entries = entries;
    this.#kinds = kinds;
    this.maxPossible = maxPossible;
    this.#fragments = entries.map((entry) => JSON.stringify(entry));
    entries.forEach((entry, i) => {
      this.#position.set(entry, i);
      // An active rule's entries are made in evaluation order, its unmatched one last.
      if (isBreakdownEntry(entry) && !entry.matched) this.#unmatched.push(entry);
    });
  }

  /** The breakdown as JSON text. */
  breakdownJson(breakdown: readonly BreakdownEntry[]): string {
    let json = '[';
    for (let i = 0; i < breakdown.length; i++) json += (i === 0 ? '' : ',') + this.#fragments[this.#positionOf(breakdown[i]!)];
    return `${json}]`;
  }

  /** The compact stored form of an outcome with its enrichment statuses. */
  compact(outcome: RulesetOutcome, enrichment: Readonly<Record<string, EnrichmentStatus>>): string {
    let positions = '';
    for (const entry of outcome.breakdown) {
      if (entry.matched) positions += (positions === '' ? '' : ',') + this.#positionOf(entry);
    }
    return `[${kFormat},[${positions}],${JSON.stringify(enrichment)}]`;
  }

  /** The compact stored form of the shadow outcomes (the matched ones; the rest are derived). */
  compactShadow(shadow: readonly ShadowOutcome[]): string {
    let positions = '';
    for (const outcome of shadow) positions += (positions === '' ? '' : ',') + this.#positionOf(outcome);
    return `[${kFormat},[${positions}]]`;
  }

  /** The stored result (storedResultJson) of a compact form; full text stored earlier as is. */
  expand(stored: string, header: StoredResultHeader): string {
    if (!stored.startsWith('[')) return stored;
    const { matched, enrichment } = this.#parseCompact(stored);
    const verdict = matched.find((entry) => {
      const kind = this.#kinds.get(entry.rule_id);
      return kind === 'trust' || kind === 'hard_block';
    });
    let breakdown: readonly BreakdownEntry[];
    let flags: string[] = [];
    const actions: string[] = [];
    if (verdict !== undefined) {
      breakdown = [verdict];
      if (verdict.action !== undefined) actions.push(verdict.action);
    } else {
      const byRule = new Map(matched.map((entry) => [entry.rule_id, entry]));
      breakdown = this.#unmatched.map((none) => byRule.get(none.rule_id) ?? none);
      flags = matched.filter((entry) => this.#kinds.get(entry.rule_id) === 'monitoring').map((entry) => entry.rule_id);
      for (const entry of breakdown) if (entry.action !== undefined && !actions.includes(entry.action)) actions.push(entry.action);
    }
    const verdictKind = verdict === undefined ? undefined : this.#kinds.get(verdict.rule_id);
    return storedResultJson({
      eventId: header.eventId,
      decision: header.decision,
      riskScore: header.riskScore,
      maxPossible: this.maxPossible,
      breakdownJson: this.breakdownJson(breakdown),
      flags,
      actions,
      trustOverride: verdictKind === 'trust',
      hardBlockHit: verdictKind === 'hard_block',
      enrichment,
      rulesetVersion: header.rulesetVersion,
    });
  }

  /** The shadow outcomes of a compact form; full JSON stored earlier, parsed. */
  expandShadow(stored: string): ShadowOutcome[] {
    if (!stored.startsWith('[1,')) return JSON.parse(stored) as ShadowOutcome[];
    const [, positions] = JSON.parse(stored) as [number, number[]];
    return positions.map((p) => this.#entryAt(p) as ShadowOutcome);
  }

  /**
   * The matched breakdown entries of a stored result, compact or stored in full (rule statistics
   * and backtests read these, not the expanded result). Compact: in the order stored (evaluation
   * order). On a trust or hard-block verdict the verdict's entry is among them.
   */
  matchedEntries(stored: string): BreakdownEntry[] {
    if (!stored.startsWith('[')) {
      const full = JSON.parse(stored) as { breakdown: BreakdownEntry[] };
      return full.breakdown.filter((entry) => entry.matched);
    }
    return this.#parseCompact(stored).matched;
  }

  #parseCompact(stored: string): { matched: BreakdownEntry[]; enrichment: Record<string, EnrichmentStatus> } {
    const [format, positions, enrichment] = JSON.parse(stored) as [number, number[], Record<string, EnrichmentStatus>];
    if (format !== kFormat) throw new Error(`stored result of an unknown format ${format}`);
    return { matched: positions.map((p) => this.#entryAt(p) as BreakdownEntry), enrichment };
  }

  /** The rule_ids of the active rules, in evaluation order (trust, hard block, scoring, monitoring). */
  activeRuleIds(): string[] {
    return this.#unmatched.map((entry) => entry.rule_id);
  }

  #positionOf(entry: object): number {
    const position = this.#position.get(entry);
    if (position === undefined) throw new Error('an outcome entry that is not one of its ruleset\'s');
    return position;
  }

  #entryAt(position: number): BreakdownEntry | ShadowOutcome {
    const entry = this.#entries[position];
    if (entry === undefined) throw new Error(`stored result names entry ${position}, which its ruleset does not have`);
    return entry;
  }
}

function isBreakdownEntry(entry: BreakdownEntry | ShadowOutcome): entry is BreakdownEntry {
  return 'reason' in entry;
}
