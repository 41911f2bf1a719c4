// Rule statistics (docs/backtests.md, "Rule statistics"): the main-thread side. The counting runs
// on a thread of its own (stats-worker.ts): a month of events is seconds of reading, which must
// not stall the HTTP thread. The thread starts on first use and stays while it is used (it keeps
// the counts of finished days); it ends after kIdleTimeoutMs without a request.
import { Piscina } from 'piscina';
import { apiError } from '../shared/errors.js';
import type { Db } from '../store/database.js';
import { readDraftRuleRecord } from '../rulesets/ruleset-store.js';
import type { StatsQuery } from './analysis-request.js';
import type { AnalysisAnswer } from './backtest-service.js';
import type { StatsResult, StatsTask } from './stats-reader.js';
import type { StatsSetup } from './stats-worker.js';

const kIdleTimeoutMs = 30 * 60_000;

export class RuleStatsService {
  readonly #readDb: Db;
  readonly #now: () => number;
  readonly #pool: Piscina;

  constructor(dataDir: string, readDb: Db, now: () => number) {
    this.#readDb = readDb;
    this.#now = now;
    const setup: StatsSetup = { dataDir };
    this.#pool = new Piscina({ filename: new URL('./stats-worker.js', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: kIdleTimeoutMs, workerData: setup });
  }

  async stats(projectId: string, ruleId: string, query: StatsQuery): Promise<AnalysisAnswer> {
    const rule = readDraftRuleRecord(this.#readDb, projectId, ruleId);
    if (rule === null) return { ok: false, error: apiError('NOT_FOUND', `No rule ${JSON.stringify(ruleId)} in this project.`, 'rule_id') };
    const task: StatsTask = { projectId, ruleId, from: query.from, to: query.to, now: this.#now() };
    let result: StatsResult;
    try {
      result = (await this.#pool.run(task)) as StatsResult;
    } catch (error) {
      return { ok: false, error: apiError('INTERNAL_ERROR', `The statistics could not be counted: ${(error as Error).message}. Nothing was changed; retry.`) };
    }
    return {
      ok: true,
      status: 200,
      body: {
        rule_id: ruleId,
        status: rule.rule.status,
        from: new Date(query.from).toISOString().slice(0, 10),
        to: new Date(query.to).toISOString().slice(0, 10),
        days: result.days,
        total: result.total,
        labels: result.labels,
      },
    };
  }

  /** At the stop, after the HTTP server drained: a count still running has nobody to answer. */
  close(): Promise<void> {
    return this.#pool.close({ force: true });
  }
}
