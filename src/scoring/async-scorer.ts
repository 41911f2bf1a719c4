// The background scorer of async events (interface, States and transitions: pending → scored).
//
// Accepted events are committed as pending before the 202, then queued here in arrival order, as
// their seqs: an event's body is read back from the log when its turn comes (pending-events.ts),
// so a deep backlog costs memory by the event, not by the body. A restart queues every pending
// event of the store again, so an accepted event is always scored.
// The queue is bounded: past the bound, POST /v1/events with async answers 503 ASYNC_UNAVAILABLE
// and stores nothing. An event that cannot be scored now (no live ruleset, a failed write) is set
// aside and retried after a pause, ahead of later events; other events keep flowing meanwhile.
// While the HTTP thread is saturated (a burst), it scores only a few events at a time, so that
// accepting takes the thread's time first (activeLimit).
import type { Logger } from '../shared/log.js';
import type { ScoreJob } from './scorer.js';

/** Events scored at once: enough to fill the pool's batches, few enough to keep arrival order. */
const kMaxActive = 256;
/**
 * While the HTTP thread is saturated, the background scorer keeps only this many events going:
 * accepting events (a plain append) and sync scoring get the thread first, and the backlog is
 * scored when the burst has passed, but it never stops. Past kYieldUntilDepth of the queue's
 * bound it no longer yields, so that sustained overload is met at full scoring speed and refused
 * at the bound. One rather than 8: async accepted at 2.9× the sync rate instead of 2.1× in the
 * same runs (bench/README.md, step 24).
 */
const kBusyActive = 1;
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

/** Where a queued event's body is read back from when its turn comes (pending-events.ts). */
export interface PendingSource {
  /** Every pending event's seq, in arrival order. */
  seqs(): number[];
  /** The events at `seqs` still pending, in that order. */
  jobs(seqs: readonly number[]): PendingJob[];
}

/**
 * Queued events read back from the log at once: enough to fill the pool's batches, few enough that
 * reading them (a point read and a JSON.parse each) keeps the thread only a fraction of a
 * millisecond.
 */
const kReadAtOnce = 64;

export class AsyncScorer {
  readonly #limit: number;
  readonly #log: Logger;
  readonly #source: PendingSource;
  #run: ((job: PendingJob) => Promise<'done' | 'retry'>) | null = null;
  // The seqs of the events waiting, a FIFO as an array with a moving head: no shift() per event.
  // A waiting event costs 8 bytes here; its body stays in the log until its turn.
  #queue: number[] = [];
  #head = 0;
  /** Events set aside that are due again: they go before the queue (few; #queue may be long). */
  #retryDue: number[] = [];
  /** Seqs dropped while waiting: skipped at their turn (drop must not scan the queue). */
  readonly #dropped = new Set<number>();
  /** The seqs being scored (at most #maxActive). */
  readonly #activeSeqs = new Set<number>();
  #paused = false;
  #maxActive = kMaxActive;
  #loadCheck: NodeJS.Timeout | null = null;
  #pumpLater: NodeJS.Immediate | null = null;
  /** Events set aside, each with when it is due again. */
  #delayed: Array<{ seq: number; due: number }> = [];
  readonly #attempts = new Map<number, number>();
  #retryTimer: NodeJS.Timeout | null = null;
  #idleWaiters: Array<() => void> = [];
  /** Events scored since start, for /metrics. */
  scored = 0;

  constructor(limit: number, log: Logger, source: PendingSource) {
    this.#limit = limit;
    this.#log = log;
    this.#source = source;
  }

  /** Queued plus being scored: what counts against the bound. */
  get depth(): number {
    return this.#waiting() - this.#dropped.size + this.#activeSeqs.size + this.#delayed.length;
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

  /**
   * A newly accepted event: scored at once with the body in hand if nothing waits before it and
   * there is room, else queued as its seq.
   */
  enqueue(job: PendingJob): void {
    if (this.#run !== null && !this.#paused && this.#waiting() === 0 && this.#activeSeqs.size < this.#maxActive) {
      this.#start(job);
      return;
    }
    this.#queue.push(job.seq);
    this.#pump();
  }

  /** Queues the pending events a previous run accepted but did not score, in arrival order. */
  loadPending(): number {
    const seqs = this.#source.seqs();
    for (const seq of seqs) this.#queue.push(seq);
    this.#pump();
    return seqs.length;
  }

  /**
   * The events stored at `seqs` are no longer pending (scored by a sync request for the same event,
   * or erased with their account): those still waiting here are dropped and never scored. Events
   * already being scored are left to the writer, which completes only a row still pending.
   */
  drop(seqs: readonly number[]): void {
    const gone = new Set(seqs);
    const setAside = new Set<number>();
    this.#delayed = this.#delayed.filter(({ seq }) => {
      if (!gone.has(seq)) return true;
      setAside.add(seq);
      return false;
    });
    for (const seq of seqs) {
      this.#attempts.delete(seq);
      // A pending event is being scored (left to the writer), set aside (removed above) or waiting.
      if (!this.#activeSeqs.has(seq) && !setAside.has(seq)) this.#dropped.add(seq);
    }
  }

  /** Stops taking new events from the queue; resolves when those being scored are done. */
  pause(): Promise<void> {
    this.#paused = true;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    if (this.#loadCheck !== null) clearInterval(this.#loadCheck);
    if (this.#pumpLater !== null) clearImmediate(this.#pumpLater);
    if (this.#activeSeqs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** One timer for the earliest set-aside event; due events go to #retryDue, ahead of the queue. */
  #scheduleRetry(): void {
    if (this.#paused || this.#delayed.length === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const d of this.#delayed) if (d.due < next) next = d.due;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      const now = Date.now();
      for (const d of this.#delayed) if (d.due <= now) this.#retryDue.push(d.seq);
      this.#delayed = this.#delayed.filter((d) => d.due > now);
      this.#scheduleRetry();
      this.#pump();
    }, Math.max(0, next - Date.now()));
    this.#retryTimer.unref();
  }

  /**
   * Starts queued events while there is room: one read of at most kReadAtOnce bodies per turn of
   * the event loop, so that a deep backlog does not hold the thread for a whole pool's worth.
   */
  #pump(): void {
    if (this.#run === null || this.#paused) return;
    const room = Math.min(this.#maxActive - this.#activeSeqs.size, kReadAtOnce);
    if (room <= 0 || this.#waiting() === 0) return;
    // Events due again first (ahead of later events), then the queue.
    const taken = this.#retryDue.splice(0, room);
    const fromQueue = Math.min(room - taken.length, this.#queue.length - this.#head);
    for (let i = 0; i < fromQueue; i++) taken.push(this.#queue[this.#head + i]!);
    this.#head += fromQueue;
    const seqs = taken.filter((seq) => !this.#dropped.delete(seq));
    // Nothing waits: a mark left for a seq that was not queued after all must not count.
    if (this.#waiting() === 0) this.#dropped.clear();
    let jobs: PendingJob[];
    try {
      jobs = this.#source.jobs(seqs);
    } catch (error) {
      // The store could not be read (a locked or failing disk): the events wait and come back.
      this.#log.error('queued async events could not be read', { events: seqs.length, error });
      const due = Date.now() + kRetryDelayMs;
      for (const seq of seqs) this.#delayed.push({ seq, due });
      this.#scheduleRetry();
      return;
    }
    for (const job of jobs) this.#start(job);
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#activeSeqs.size < this.#maxActive && this.#waiting() > 0 && this.#pumpLater === null) {
      this.#pumpLater = setImmediate(() => {
        this.#pumpLater = null;
        this.#pump();
      });
    }
  }

  /** Events waiting for their turn (due again, or queued), dropped ones included. */
  #waiting(): number {
    return this.#retryDue.length + this.#queue.length - this.#head;
  }

  #start(job: PendingJob): void {
    this.#activeSeqs.add(job.seq);
    this.#run!(job).then(
      (outcome) => this.#settle(job.seq, outcome),
      (error: unknown) => {
        this.#log.error('async scoring failed', { event_id: job.eventId, error });
        this.#settle(job.seq, 'retry');
      },
    );
  }

  #settle(seq: number, outcome: 'done' | 'retry'): void {
    this.#activeSeqs.delete(seq);
    if (outcome === 'done') {
      this.scored++;
      this.#attempts.delete(seq);
    } else {
      // Set aside for a while: the cause (no ruleset yet, a locked database) does not go away
      // within microseconds, and retrying at once would spin.
      const attempts = (this.#attempts.get(seq) ?? 0) + 1;
      this.#attempts.set(seq, attempts);
      const delay = Math.min(kMaxRetryDelayMs, kRetryDelayMs * 2 ** Math.min(attempts - 1, 30));
      this.#delayed.push({ seq, due: Date.now() + delay });
      this.#scheduleRetry();
    }
    if (this.#activeSeqs.size === 0 && this.#idleWaiters.length > 0) {
      for (const wake of this.#idleWaiters.splice(0)) wake();
    }
    this.#pump();
  }
}
