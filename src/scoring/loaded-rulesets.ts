// Published ruleset versions as functions, with the layout of their results (result-layout.ts),
// loaded from their stored source on first use and kept in a bounded cache. Versions are
// immutable, so an entry never goes stale: an event tagged with version N is judged, and its
// stored result read back, by exactly version N even while N+1 is being published.
import type { Database, Statement } from 'better-sqlite3';
import type { RuleDefinition, RuleKind, RulesetFunction } from '../../compiler/index.js';
// load.js alone, not the compiler's index: the writer thread loads rulesets, it never compiles one.
import { loadRulesetWithEntries } from '../../compiler/load.js';
import { FifoCache } from '../state/fifo-cache.js';
import { ResultLayout } from './result-layout.js';

export interface LoadedVersion {
  readonly evaluate: RulesetFunction;
  readonly layout: ResultLayout;
}

const kDefaultCapacity = 256;

export class LoadedRulesets {
  readonly #stored: Statement<[string, number], { source: string; rules: string; max_possible: number }>;
  readonly #cache: FifoCache<string, LoadedVersion>;

  constructor(db: Database, capacity = kDefaultCapacity) {
    this.#stored = db.prepare('SELECT source, rules, max_possible FROM rulesets WHERE project_id = ? AND version = ?');
    this.#cache = new FifoCache(capacity);
  }

  /** The version, or why it cannot be had. */
  get(projectId: string, version: number): LoadedVersion | string {
    const key = `${projectId}\u0000${version}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const row = this.#stored.get(projectId, version);
    if (row === undefined) return `ruleset version ${version} of project ${projectId} is not stored`;
    let loaded: LoadedVersion;
    try {
      const { evaluate, entries } = loadRulesetWithEntries(row.source);
      const kinds = new Map<string, RuleKind>((JSON.parse(row.rules) as RuleDefinition[]).map((rule) => [rule.rule_id, rule.kind]));
      loaded = { evaluate, layout: new ResultLayout(entries, kinds, row.max_possible) };
    } catch (error) {
      return `ruleset version ${version} of project ${projectId} does not load: ${(error as Error).message}`;
    }
    this.#cache.set(key, loaded);
    return loaded;
  }
}
