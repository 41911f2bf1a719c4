// Backtests (docs/backtests.md): start one — a published version, or the current drafts compiled on
// the rules compiler thread — and read its progress and report. One backtest at a time per project:
// a second is refused with 429 while the first is queued or running (not queued behind it: an
// analyst who changed a threshold again wants the newer run, and can ask once the first is done).
import { apiError, type ApiError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import type { FaultLatch } from '../shared/fault-latch.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import type { RulesCompiler } from '../rulesets/rules-compiler.js';
import { diagnosticParameter } from '../rulesets/rules-request.js';
import { readDraftSnapshot, readRuleset } from '../rulesets/ruleset-store.js';
import type { BacktestRequest } from './analysis-request.js';
import type { BacktestCandidate, BacktestJob } from './backtest-run.js';
import { BacktestRunner, kMaxQueued, type BacktestProgress } from './backtest-runner.js';
import { readBacktest, readRulesetSource, type BacktestRecord, type CandidateRecord } from './backtest-store.js';
import { projectListIds } from '../lists/list-store.js';
import { signalGroupsOf } from './replay.js';

export type Headers = ReadonlyArray<readonly [string, string]>;
export type AnalysisAnswer =
  | { readonly ok: true; readonly status: number; readonly body: object; readonly headers?: Headers }
  | { readonly ok: false; readonly error: ApiError; readonly headers?: Headers };

export interface BacktestServiceOptions {
  readonly dataDir: string;
  readonly readDb: Db;
  readonly writer: AppWriter;
  readonly compiler: RulesCompiler;
  readonly latch: FaultLatch;
  readonly log: Logger;
  readonly now: () => number;
}

/** Retry-After of a 429 when nothing better is known, and its bounds. */
const kDefaultRetrySeconds = 30;
const kMaxRetrySeconds = 600;

function iso(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString();
}

export class BacktestService {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #compiler: RulesCompiler;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #runner: BacktestRunner;
  /** Project → its backtest queued or running (or '' while one is being set up). */
  readonly #active = new Map<string, string>();
  /** Requests between the queue's check and the queue (compiling their candidate, recording it). */
  #preparing = 0;

  constructor(options: BacktestServiceOptions) {
    this.#readDb = options.readDb;
    this.#writer = options.writer;
    this.#compiler = options.compiler;
    this.#log = options.log;
    this.#now = options.now;
    this.#runner = new BacktestRunner(options.dataDir, { started: (id) => this.#started(id), finished: (id, outcome) => this.#finished(id, outcome) }, options.latch, options.now);
  }

  /** At start: backtests a previous run left unfinished are marked failed. */
  async recover(): Promise<void> {
    const failed = await this.#writer.call('failUnfinishedBacktests', this.#now());
    if (failed > 0) this.#log.warn('backtests left unfinished by the previous run were marked failed', { backtests: failed });
  }

  async start(projectId: string, keyId: string, request: BacktestRequest): Promise<AnalysisAnswer> {
    const busy = this.#active.get(projectId);
    if (busy !== undefined) return this.#busy(busy);
    // Requests past this check and not queued yet count as waiting: several projects may be
    // between the check and the queue at once (the awaits below).
    if (this.#runner.queued + this.#preparing >= kMaxQueued) {
      return { ok: false, error: apiError('RATE_LIMIT_EXCEEDED', 'The server has as many backtests waiting as it queues; retry later.'), headers: retryHeaders(kDefaultRetrySeconds) };
    }
    // Held from here, across the awaits below: a second request meanwhile gets 429.
    this.#active.set(projectId, '');
    this.#preparing++;
    try {
      const prepared = await this.#candidate(projectId, request.version);
      if (!prepared.ok) return prepared;
      const backtestId = newId('bt');
      try {
        await this.#writer.call('createBacktest', {
          backtestId, projectId, candidate: prepared.record, policy: prepared.candidate.policy,
          from: request.from, to: request.to, limit: request.limit, requestedBy: keyId,
        }, this.#now());
      } catch (error) {
        return { ok: false, error: apiError('INTERNAL_ERROR', `The backtest could not be recorded: ${(error as Error).message}. Nothing was started; retry.`) };
      }
      const job: BacktestJob = { backtestId, projectId, from: request.from, to: request.to, limit: request.limit, candidate: prepared.candidate };
      this.#active.set(projectId, backtestId);
      this.#runner.enqueue(job);
      const record = readBacktest(this.#readDb, projectId, backtestId)!;
      return { ok: true, status: 202, body: this.#view(record), headers: [['Location', `/v1/rules/backtests/${backtestId}`]] };
    } finally {
      this.#preparing--;
      if (this.#active.get(projectId) === '') this.#active.delete(projectId);
    }
  }

  get(projectId: string, backtestId: string): AnalysisAnswer {
    const record = readBacktest(this.#readDb, projectId, backtestId);
    if (record === null) return { ok: false, error: apiError('NOT_FOUND', 'No backtest with this backtest_id in this project.', 'backtest_id') };
    return { ok: true, status: 200, body: this.#view(record) };
  }

  /** Stops the running backtest and marks it, and those queued, failed (before the writer closes). */
  async stop(): Promise<void> {
    const unfinished = this.#runner.unfinished();
    await this.#runner.stop();
    for (const backtestId of unfinished) {
      try {
        await this.#writer.call('failBacktest', backtestId, 'The server stopped before the backtest finished; start it again.', this.#now());
      } catch {
        // The next start marks it failed (recover).
      }
    }
  }

  async #candidate(projectId: string, version: number | null): Promise<
    { ok: true; candidate: BacktestCandidate; record: CandidateRecord } | { ok: false; error: ApiError }
  > {
    if (version !== null) {
      const ruleset = readRuleset(this.#readDb, projectId, version);
      const source = ruleset === null ? null : readRulesetSource(this.#readDb, projectId, version);
      if (ruleset === null || source === null) return { ok: false, error: apiError('NOT_FOUND', `No ruleset version ${version} in this project.`, 'version') };
      return {
        ok: true,
        candidate: {
          source,
          reads: signalGroupsOf(ruleset.signals),
          rules: ruleset.rules.map(({ rule_id, kind, status }) => ({ rule_id, kind, status })),
          policy: { review_threshold: ruleset.policy.review_threshold, block_threshold: ruleset.policy.block_threshold },
        },
        record: { version },
      };
    }
    const drafts = readDraftSnapshot(this.#readDb, projectId);
    let compiled;
    try {
      compiled = await this.#compiler.compile(drafts.rules, projectListIds(this.#readDb, projectId));
    } catch (error) {
      return { ok: false, error: apiError('INTERNAL_ERROR', `The drafts could not be compiled: ${(error as Error).message}. Nothing was started; retry.`) };
    }
    if (!compiled.ok) {
      const first = compiled.errors[0];
      const parameter = first === undefined ? 'rules' : diagnosticParameter(first);
      const listed = compiled.errors.slice(0, 10).map((d) => `${diagnosticParameter(d)}: ${d.message}`).join('; ');
      return { ok: false, error: apiError('VALIDATION_ERROR', `The drafts do not compile: ${listed}. Nothing was started; fix the rules, or backtest a published version.`, parameter) };
    }
    return {
      ok: true,
      candidate: {
        source: compiled.artifact.source,
        reads: signalGroupsOf(compiled.artifact.signals),
        rules: drafts.rules.map(({ rule_id, kind, status }) => ({ rule_id, kind, status })),
        policy: { review_threshold: drafts.policy.review_threshold, block_threshold: drafts.policy.block_threshold },
      },
      record: { version: null, drafts: { rules: Object.fromEntries(drafts.rules.map((rule) => [rule.rule_id, rule.version])), policy_version: drafts.policy.version } },
    };
  }

  #busy(backtestId: string): AnalysisAnswer {
    const progress = backtestId === '' ? null : this.#runner.progress(backtestId);
    const seconds = retryAfter(progress, this.#now());
    const which = backtestId === '' ? 'Another backtest of this project is being started' : `Backtest ${backtestId} of this project is still ${progress?.state ?? 'running'}`;
    return {
      ok: false,
      error: apiError('RATE_LIMIT_EXCEEDED', `${which}: a project runs one backtest at a time. Read its progress with GET /v1/rules/backtests/{backtest_id} and start the next once it is done.`),
      headers: retryHeaders(seconds),
    };
  }

  #started(backtestId: string): Promise<void> {
    return this.#writer.call('startBacktest', backtestId, this.#now()).catch((error: unknown) => this.#log.error('a backtest could not be marked running', { backtest_id: backtestId, error }));
  }

  #finished(backtestId: string, outcome: { ok: true; report: Record<string, unknown> } | { ok: false; message: string }): void {
    // The project may start its next backtest from now on; this one's answer is written next.
    for (const [projectId, id] of this.#active) if (id === backtestId) this.#active.delete(projectId);
    const write = outcome.ok
      ? this.#writer.call('finishBacktest', backtestId, JSON.stringify(outcome.report), this.#now())
      : this.#writer.call('failBacktest', backtestId, outcome.message, this.#now());
    if (!outcome.ok) this.#log.warn('a backtest failed', { backtest_id: backtestId, reason: outcome.message });
    write.catch(async (error: unknown) => {
      this.#log.error('the outcome of a backtest could not be stored', { backtest_id: backtestId, error });
      // Not left 'running' until the next start: failed, with why (if even that can be written).
      if (!outcome.ok) return;
      await this.#writer.call('failBacktest', backtestId, `The report could not be stored (${(error as Error).message}); start the backtest again.`, this.#now())
        .catch((again: unknown) => this.#log.error('a backtest could not be marked failed', { backtest_id: backtestId, error: again }));
    });
  }

  #view(record: BacktestRecord): Record<string, unknown> {
    const progress = record.state === 'queued' || record.state === 'running' ? this.#runner.progress(record.backtest_id) : null;
    // The runner is ahead of the store: a backtest it runs may still read 'queued', one it finished 'running'.
    const state = progress?.state ?? record.state;
    return {
      backtest_id: record.backtest_id,
      state,
      candidate: record.candidate,
      policy: record.policy,
      from: iso(record.from),
      to: iso(record.to),
      limit: record.limit,
      requested_by: record.requested_by,
      created_at: iso(record.created_at),
      started_at: iso(record.started_at ?? progress?.startedAt ?? null),
      finished_at: iso(record.finished_at),
      progress: state === 'queued' || state === 'running'
        ? { events_scanned: progress?.eventsScanned ?? 0, fraction: Math.round((progress?.fraction ?? (state === 'running' ? 1 : 0)) * 10_000) / 10_000, backtests_ahead: progress?.ahead ?? 0 }
        : null,
      error: record.error,
      report: record.report === null ? null : (JSON.parse(record.report) as unknown),
    };
  }
}

/** Seconds until a running backtest should be done, from its pace so far. */
function retryAfter(progress: BacktestProgress | null, now: number): number {
  if (progress === null || progress.state !== 'running' || progress.startedAt === null || progress.fraction <= 0) return kDefaultRetrySeconds;
  const elapsed = (now - progress.startedAt) / 1000;
  const remaining = (elapsed / progress.fraction) * (1 - progress.fraction);
  return Math.min(kMaxRetrySeconds, Math.max(1, Math.ceil(remaining)));
}

/** The headers of every 429 the interface describes (Limits, rule 4): a project may run 1 backtest at a time. */
function retryHeaders(seconds: number): Headers {
  const reset = String(seconds);
  return [['Retry-After', reset], ['RateLimit-Limit', '1'], ['RateLimit-Remaining', '0'], ['RateLimit-Reset', reset]];
}
