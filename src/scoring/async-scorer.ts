// The background scorer of async events (interface, States and transitions: pending → scored).
//
// Accepted events are committed as pending before the 202, then queued here in arrival order. A
// restart reloads every pending event from the store, so an accepted event is always scored.
// The queue is bounded: past the bound, POST /v1/events with async answers 503 ASYNC_UNAVAILABLE
// and stores nothing. An event that cannot be scored now (no live ruleset, a failed write) is set
// aside and retried after a pause, ahead of later events; other events keep flowing meanwhile.
// While the HTTP thread is saturated (a burst), it scores only a few events at a time, so that
// accepting takes the thread's time first (activeLimit).
import type { Statement } from 'better-sqlite3';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { EventInput } from '../validation/event-input.js';
import type { ScoreJob } from './scorer.js';
import type { Environment } from '../auth/api-keys.js';

/** Events scored at once: enough to fill the pool's batches, few enough to keep arrival order. */
const kMaxActive = 256;
/**
 * While the HTTP thread is saturated, the background scorer keeps only this many events going:
 * accepting events (a plain append) and sync scoring get the thread first, and the backlog is
 * scored when the burst has passed. Past kYieldUntilDepth of the queue's bound it no longer
 * yields, so that sustained overload is met at full scoring speed and refused at the bound.
 */
const kBusyActive = 8;
/** Busy share of the HTTP thread's time over the last check past which it counts as saturated. */
const kBusyUtilization = 0.85;
const kYieldUntilDepth = 0.9;
const kLoadCheckMs = 100;

/** How many events the background scorer may score at once (see kBusyActive). Pure. */
export function activeLimit(utilization: number, depth: number, queueLimit: number): number {
  return utilization > kBusyUtilization && depth < kYieldUntilDepth * queueLimit ? kBusyActive : kMaxActive;
}
const kRetryDelayMs = 1000;
/**
 * Retries of one event back off, doubling up to this: some causes do not pass by themselves (an
 * event over its evaluation budget fails the same way until the rules change), and must not cost
 * a worker every second.
 */
const kMaxRetryDelayMs = 600_000;

/** An accepted event, stored as pending at row `seq`. */
export interface PendingJob extends ScoreJob {
  readonly seq: number;
}

export class AsyncScorer {
  readonly #limit: number;
  readonly #log: Logger;
  #run: ((job: PendingJob) => Promise<'done' | 'retry'>) | null = null;
  // A FIFO as an array with a moving head: no shift() per event.
  #queue: PendingJob[] = [];
  #head = 0;
  #active = 0;
  #paused = false;
  #maxActive = kMaxActive;
  #loadCheck: NodeJS.Timeout | null = null;
  /** Events set aside, each with when it is due again. */
  #delayed: Array<{ job: PendingJob; due: number }> = [];
  readonly #attempts = new WeakMap<PendingJob, number>();
  #retryTimer: NodeJS.Timeout | null = null;
  #idleWaiters: Array<() => void> = [];
  /** Events scored since start, for /metrics. */
  scored = 0;

  constructor(limit: number, log: Logger) {
    this.#limit = limit;
    this.#log = log;
  }

  /** Queued plus being scored: what counts against the bound. */
  get depth(): number {
    return this.#queue.length - this.#head + this.#active + this.#delayed.length;
  }

  canAccept(): boolean {
    return !this.#paused && this.depth < this.#limit;
  }

  /** Starts scoring with `run` (EventService.scorePending). */
  start(run: (job: PendingJob) => Promise<'done' | 'retry'>): void {
    this.#run = run;
    let last = performance.eventLoopUtilization();
    this.#loadCheck = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const limit = activeLimit(performance.eventLoopUtilization(now, last).utilization, this.depth, this.#limit);
      last = now;
      const raised = limit > this.#maxActive;
      this.#maxActive = limit;
      if (raised) this.#pump();
    }, kLoadCheckMs);
    this.#loadCheck.unref();
    this.#pump();
  }

  enqueue(job: PendingJob): void {
    this.#queue.push(job);
    this.#pump();
  }

  /** Loads the pending events a previous run accepted but did not score, in arrival order. */
  loadPending(db: Db): number {
    const rows = (db.prepare(
      `SELECT e.seq, e.project_id, p.tenant_id, p.environment, e.event_id, e.payload, e.received_at
       FROM events e JOIN projects p ON p.project_id = e.project_id WHERE e.state = 'pending' ORDER BY e.seq`,
    ) as Statement<[], { seq: number; project_id: string; tenant_id: string; environment: Environment; event_id: string; payload: string; received_at: number }>).all();
    for (const row of rows) {
      this.#queue.push({
        seq: row.seq,
        projectId: row.project_id,
        tenantId: row.tenant_id,
        environment: row.environment,
        eventId: row.event_id,
        event: JSON.parse(row.payload) as EventInput,
        payload: row.payload,
        receivedAt: row.received_at,
      });
    }
    this.#pump();
    return rows.length;
  }

  /**
   * The events stored at `seqs` are no longer pending (scored by a sync request for the same event,
   * or erased with their account): those still waiting here are dropped, with what they hold in
   * memory, and never scored. Events already being scored are left to the writer, which completes
   * only a row still pending.
   */
  drop(seqs: readonly number[]): void {
    const gone = new Set(seqs);
    this.#queue = this.#queue.slice(this.#head).filter((job) => !gone.has(job.seq));
    this.#head = 0;
    this.#delayed = this.#delayed.filter(({ job }) => !gone.has(job.seq));
  }

  /** Stops taking new events from the queue; resolves when those being scored are done. */
  pause(): Promise<void> {
    this.#paused = true;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    if (this.#loadCheck !== null) clearInterval(this.#loadCheck);
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** One timer for the earliest set-aside event; due events go back to the head of the queue. */
  #scheduleRetry(): void {
    if (this.#paused || this.#delayed.length === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const d of this.#delayed) if (d.due < next) next = d.due;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      const now = Date.now();
      const due = this.#delayed.filter((d) => d.due <= now);
      this.#delayed = this.#delayed.filter((d) => d.due > now);
      this.#queue.splice(this.#head, 0, ...due.map((d) => d.job));
      this.#scheduleRetry();
      this.#pump();
    }, Math.max(0, next - Date.now()));
    this.#retryTimer.unref();
  }

  #pump(): void {
    if (this.#run === null || this.#paused) return;
    while (this.#active < this.#maxActive && this.#head < this.#queue.length) {
      const job = this.#queue[this.#head]!;
      this.#queue[this.#head] = undefined as unknown as PendingJob;
      this.#head++;
      this.#active++;
      this.#run(job).then(
        (outcome) => this.#settle(job, outcome),
        (error: unknown) => {
          this.#log.error('async scoring failed', { event_id: job.eventId, error });
          this.#settle(job, 'retry');
        },
      );
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  #settle(job: PendingJob, outcome: 'done' | 'retry'): void {
    this.#active--;
    if (outcome === 'done') {
      this.scored++;
    } else {
      // Set aside for a while: the cause (no ruleset yet, a locked database) does not go away
      // within microseconds, and retrying at once would spin.
      const attempts = (this.#attempts.get(job) ?? 0) + 1;
      this.#attempts.set(job, attempts);
      const delay = Math.min(kMaxRetryDelayMs, kRetryDelayMs * 2 ** Math.min(attempts - 1, 30));
      this.#delayed.push({ job, due: Date.now() + delay });
      this.#scheduleRetry();
    }
    if (this.#active === 0 && this.#idleWaiters.length > 0) {
      for (const wake of this.#idleWaiters.splice(0)) wake();
    }
    this.#pump();
  }
}
