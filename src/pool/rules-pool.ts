// The main-thread side of the rule-evaluation pool (piscina).
//
// One piscina task per event costs the main thread more than the rules themselves (tens of µs of
// messaging against ~0.1 µs of rules), so events are batched: everything asked for during one turn
// of the event loop goes out as one task (up to kMaxBatch events). While every worker holds a
// task, events asked for meanwhile wait here and go out as one task when a worker answers: they
// would wait as long in piscina's queue, one task each, and after a stall the backlog then costs
// one task instead of one per turn that added to it (bench/README.md, step 40). Each task carries
// an abort signal (its deadline, below; a TaskAbort), and piscina gives such a task only to an
// idle worker: a worker holds one task at a time. See bench/README.md for the measurements behind
// the batch size (and step 36 for the pool tried without the signals).
//
// One event must never cost its neighbours their answer. A worker that dies (out of memory: each
// worker has a heap limit) or that holds a task past its deadline (the task is aborted, which ends
// the thread) is replaced by piscina, and every task it held fails. The events of those tasks are
// then evaluated again, each alone, in a second pool of one thread, one task at a time (queued
// here, so that its deadline counts only its own run): there an event shares its thread with
// nothing, so only an event that kills a worker by itself gets an error, and it is logged with
// its request id. Rules cannot loop and spend a bounded budget per event (compiler kEventBudget),
// so neither should happen; this is the guard behind those guards.
import { Piscina } from 'piscina';
import type { Logger } from '../shared/log.js';
import { TransientMap } from '../state/transient-map.js';
import type { Tally } from './outcome-tally.js';
import { TaskAbort } from './task-abort.js';
import { encodeTask, resultOf, type EvaluateItem, type EvaluateTaskResult, type ItemResult, type WorkerSetup } from './protocol.js';

export const kMaxBatch = 64;

/** Added to the task deadline (RulesPoolOptions.taskTimeoutMs) per event of the task. */
const kTaskDeadlinePerEventMs = 1_000;

export interface RulesPoolOptions {
  readonly threads: number;
  /** V8 old-space limit of each worker; past it the worker dies alone, not the process. */
  readonly maxHeapMb: number;
  /**
   * How long a task may take, plus 1 s per event, before its worker is ended (config
   * WORKER_TASK_TIMEOUT_MS): far above what a batch within budget takes, even one whose events all
   * spend their whole budget, so that it only ends a worker that is stuck.
   */
  readonly taskTimeoutMs: number;
  readonly log: Logger;
  /** Each batch's decisions and rule matches, for /metrics (pool/outcome-tally.ts). */
  readonly onTally?: (tally: Tally | undefined) => void;
}

interface Waiting {
  readonly item: EvaluateItem;
  readonly resolve: (result: ItemResult) => void;
}

/** A batch sent to a pool, until its task settles. */
interface Sent {
  readonly batch: readonly Waiting[];
  readonly alone: boolean;
  readonly settled: (() => void) | undefined;
  readonly abort: TaskAbort;
  readonly limitMs: number;
  readonly deadline: NodeJS.Timeout;
}

/** The isolation thread stops after this long unused: it is only needed after a failure. */
const kIsolationIdleMs = 60_000;

export class RulesPool {
  readonly #pool: Piscina;
  readonly #isolation: Piscina;
  readonly #log: Logger;
  readonly #taskTimeoutMs: number;
  #waiting: Waiting[] = [];
  #scheduled = false;
  /** Batches of the main pool sent and not yet settled. */
  #inFlight = 0;
  /** Events waiting to be evaluated alone, and whether one is being evaluated. */
  #alone: Waiting[] = [];
  #aloneRunning = false;
  readonly #sent = new TransientMap<number, Sent>();
  #nextBatch = 0;
  /** Batches sent, for /metrics. */
  batches = 0;
  /** Tasks that ended a worker (died or past their deadline), for /metrics. */
  workerFailures = 0;
  /** Workers started to replace one that ended, for /metrics. */
  restarts = 0;
  #workersStarted = 0;
  readonly #onTally: ((tally: Tally | undefined) => void) | null;
  readonly #loaded: Int32Array;
  readonly #threads: number;

  constructor(setup: WorkerSetup, options: RulesPoolOptions) {
    this.#loaded = new Int32Array(setup.loaded);
    this.#threads = options.threads;
    this.#log = options.log;
    this.#onTally = options.onTally ?? null;
    this.#taskTimeoutMs = options.taskTimeoutMs;
    this.#pool = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      workerData: setup,
      minThreads: options.threads,
      maxThreads: options.threads,
      // What piscina does with abortable tasks anyway (any higher setting is not used).
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      recordTiming: false,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
    });
    this.#isolation = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      workerData: setup,
      minThreads: 0,
      maxThreads: 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: kIsolationIdleMs,
      recordTiming: false,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
    });
    // A worker that dies holding no task makes piscina emit 'error': without a listener that would
    // throw on this thread.
    for (const pool of [this.#pool, this.#isolation]) pool.on('error', (error: unknown) => this.#log.error('rule worker failed', { reason: describe(error) }));
    this.#pool.on('workerCreate', () => {
      this.#workersStarted++;
      if (this.#workersStarted <= options.threads) return;
      this.restarts++;
      this.#log.warn('rule worker started to replace one that ended', { restarts: this.restarts });
    });
  }

  /**
   * Resolves once every worker of the pool has loaded its module (or after `limitMs`). The server
   * listens only then: a worker ended while Node instantiates its module — a stop just after the
   * start — aborted the whole process under Node 22 ("FATAL ERROR: v8::Module::IsGraphAsync must
   * be used on an instantiated module", test/cli/serve-signals.test.ts, once in a CI run), and
   * under Node 20 while it built the module's CommonJS facade after evaluating it (the worker
   * counts itself once the code loading its module has returned: pool/worker.ts).
   */
  async ready(limitMs = 30_000): Promise<void> {
    const until = performance.now() + limitMs;
    while (Atomics.load(this.#loaded, 0) < this.#threads && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  get queueSize(): number {
    return this.#pool.queueSize + this.#waiting.length;
  }

  /** Evaluates one event; never rejects (a failure is an ItemResult with its error code). */
  evaluate(item: EvaluateItem): Promise<ItemResult> {
    return new Promise((resolve) => {
      this.#waiting.push({ item, resolve });
      if (this.#waiting.length >= kMaxBatch) this.#flush();
      else if (!this.#scheduled && this.#inFlight < this.#threads) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#waiting.length === 0) return;
    const batch = this.#waiting;
    this.#waiting = [];
    this.#send(batch, false);
  }

  /** Evaluates queued events alone in the isolation pool, one after the other. */
  #pumpAlone(): void {
    if (this.#aloneRunning) return;
    const next = this.#alone.shift();
    if (next === undefined) return;
    this.#aloneRunning = true;
    this.#send([next], true, () => {
      this.#aloneRunning = false;
      this.#pumpAlone();
    });
  }

  /**
   * Runs `batch` as one task. If the task fails, each of its events is queued to run alone in the
   * isolation pool (`alone` false), or, when it already ran alone there, answered with an error.
   *
   * The batch waits in #sent under a number, and nothing handed to piscina (the callbacks, the
   * abort signal) refers to it: piscina keeps its tasks in a Map, whose replaced tables can keep
   * what they held through scavenges (state/transient-map.ts) — with the batch, every event's
   * objects.
   */
  #send(batch: readonly Waiting[], alone: boolean, settled?: () => void): void {
    this.batches++;
    const task = encodeTask(batch.map((waiting) => waiting.item));
    const number = this.#nextBatch++;
    const abort = new TaskAbort();
    const limitMs = this.#taskTimeoutMs + kTaskDeadlinePerEventMs * batch.length;
    const sent: Sent = { batch, alone, settled, abort, limitMs, deadline: setTimeout(() => abort.abort(), limitMs) };
    sent.deadline.unref();
    this.#sent.set(number, sent);
    if (!alone) this.#inFlight++;
    (alone ? this.#isolation : this.#pool).run(task, { signal: abort }).then(
      (result: EvaluateTaskResult) => this.#answered(number, result),
      (error: unknown) => this.#failed(number, error),
    );
  }

  /** The batch's task is done: each event gets its result. */
  #answered(number: number, result: EvaluateTaskResult): void {
    const { batch, alone, settled, deadline } = this.#taken(number);
    clearTimeout(deadline);
    if (!alone) this.#sendHeld();
    settled?.();
    this.#onTally?.(result.tally);
    for (let i = 0; i < batch.length; i++) {
      const outcome = resultOf(result, i);
      if (!outcome.ok && outcome.overBudget === true) {
        const { item } = batch[i]!;
        this.#log.warn('event over its evaluation budget; it was not scored', {
          request_id: item.requestId, project_id: item.projectId, event_id: item.eventId, ruleset_version: item.version,
        });
      }
      batch[i]!.resolve(outcome);
    }
  }

  /** The batch's task failed (its worker died or passed the deadline). */
  #failed(number: number, error: unknown): void {
    const { batch, alone, settled, abort, limitMs, deadline } = this.#taken(number);
    clearTimeout(deadline);
    if (!alone) this.#sendHeld();
    settled?.();
    this.workerFailures++;
    const reason = abort.aborted ? `no answer within ${limitMs} ms` : describe(error);
    if (!alone) {
      this.#log.warn('rule worker failed on a batch; evaluating its events one by one', { events: batch.length, reason });
      this.#alone.push(...batch);
      this.#pumpAlone();
      return;
    }
    for (const { item, resolve } of batch) {
      this.#log.error('rule worker failed on this event; it was not scored', {
        request_id: item.requestId, project_id: item.projectId, event_id: item.eventId, ruleset_version: item.version, reason,
      });
      resolve({
        ok: false,
        code: 'COMPILED_RULES_UNAVAILABLE',
        message: `The rules could not be evaluated on this event (the rule worker ${abort.aborted ? 'did not finish' : 'failed'}). Nothing was stored.`,
      });
    }
  }

  /** A task of the main pool settled: a worker is free for the events held meanwhile. */
  #sendHeld(): void {
    this.#inFlight--;
    if (this.#waiting.length > 0 && !this.#scheduled) this.#flush();
  }

  #taken(number: number): Sent {
    const sent = this.#sent.get(number)!;
    this.#sent.delete(number);
    return sent;
  }

  async close(): Promise<void> {
    this.#flush();
    await Promise.all([this.#pool.close(), this.#isolation.close()]);
  }
}

function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return `${code}${typeof e?.message === 'string' ? e.message : String(error)}`;
}
