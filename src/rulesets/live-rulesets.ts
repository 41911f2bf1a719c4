// Which ruleset version judges a project's next event, and with which policy.
//
// The live version of a project is its highest published version. It is cached per project and
// re-read when this process publishes (notifyPublished) or when meta.rulesets_generation moves
// (another process published, e.g. `projects create`; see store/generation-watcher.ts). An event takes the version and policy at
// the moment it starts and keeps them to the end: publishing never changes an event in flight.
import type { Statement } from 'better-sqlite3';
import { apiError, type ApiError } from '../shared/errors.js';
import type { Db } from '../store/database.js';
import { GenerationWatcher } from '../store/generation-watcher.js';
import type { Policy } from './ruleset-store.js';

export interface LiveRuleset {
  readonly projectId: string;
  readonly version: number;
  readonly maxPossible: number;
  /** Signal paths the ruleset reads ('velocity.ip_1h', or a whole group like 'velocity'). */
  readonly signals: ReadonlySet<string>;
  readonly policy: Policy;
  /** Which stored or stateful signal groups the ruleset reads: only those are computed. */
  readonly reads: { readonly velocity: boolean; readonly links: boolean; readonly account: boolean };
}

export type LiveRulesetLookup = { readonly ok: true; readonly ruleset: LiveRuleset } | { readonly ok: false; readonly error: ApiError };

interface Row {
  version: number;
  max_possible: number;
  signals: string;
  policy: string;
}

export class LiveRulesets {
  readonly #latest: Statement<[string], Row>;
  readonly #watcher: GenerationWatcher;
  #cache = new Map<string, LiveRulesetLookup>();
  #listeners: Array<() => void> = [];

  constructor(db: Db) {
    this.#latest = db.prepare('SELECT version, max_possible, signals, policy FROM rulesets WHERE project_id = ? ORDER BY version DESC LIMIT 1');
    this.#watcher = new GenerationWatcher(db, 'rulesets_generation', () => {
      this.#cache = new Map();
      for (const listener of this.#listeners) listener();
    });
  }

  /**
   * Calls `listener` whenever published rulesets changed (this process or another published or
   * restored, any project), within the watcher's interval, after the cache was dropped.
   */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  start(): void {
    this.#watcher.start();
  }

  stop(): void {
    this.#watcher.stop();
  }

  /** Called after this process committed a new version of the project's ruleset. */
  notifyPublished(projectId: string): void {
    this.#cache.delete(projectId);
  }

  get(projectId: string): LiveRulesetLookup {
    let lookup = this.#cache.get(projectId);
    if (lookup === undefined) {
      lookup = this.#load(projectId);
      this.#cache.set(projectId, lookup);
    }
    return lookup;
  }

  #load(projectId: string): LiveRulesetLookup {
    const row = this.#latest.get(projectId);
    if (row === undefined) {
      return { ok: false, error: apiError('COMPILED_RULES_UNAVAILABLE', 'The project has no published ruleset. Publish one with POST /v1/rules/publish; nothing was scored or stored.') };
    }
    let signals: string[];
    try {
      signals = JSON.parse(row.signals) as string[];
    } catch {
      return { ok: false, error: apiError('COMPILED_RULES_UNAVAILABLE') };
    }
    const policy = parsePolicy(row.policy);
    if (policy === null) return { ok: false, error: apiError('PROJECT_POLICY_UNAVAILABLE') };
    const readsGroup = (group: string): boolean => signals.some((path) => path === group || path.startsWith(`${group}.`));
    return {
      ok: true,
      ruleset: {
        projectId,
        version: row.version,
        maxPossible: row.max_possible,
        signals: new Set(signals),
        policy,
        reads: { velocity: readsGroup('velocity'), links: readsGroup('links'), account: readsGroup('account') },
      },
    };
  }
}

/** A stored policy is used only when it is whole and consistent; otherwise the project fails closed. */
function parsePolicy(text: string): Policy | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const policy = value as Policy;
  if (!Number.isInteger(policy.review_threshold) || !Number.isInteger(policy.block_threshold) || !Number.isInteger(policy.version)) return null;
  if (policy.review_threshold < 0 || policy.review_threshold > policy.block_threshold) return null;
  return { review_threshold: policy.review_threshold, block_threshold: policy.block_threshold, version: policy.version };
}
