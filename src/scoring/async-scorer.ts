// The background scorer of async events (interface, States and transitions: pending → scored).
//
// Accepted events are committed as pending before the 202, then queued here in arrival order, as
// their seqs: an event's body is read back from the log when its turn comes (pending-events.ts),
// so a deep backlog costs memory by the event, not by the body. A restart queues every pending
// event of the store again, so an accepted event is always scored.
// The queue is bounded: past the bound, POST /v1/events with async answers 503 ASYNC_UNAVAILABLE
// and stores nothing. An event that cannot be scored now (no live ruleset, a failed write) is set
// aside and retried after a pause, ahead of later events; other events keep flowing meanwhile.
// Set-aside events are bounded per project, not by the queue's bound: a project whose events
// cannot be scored (it never published) must not refuse the async events of every other project.
// While the HTTP thread is saturated (a burst), it scores only a few events at a time, so that
// accepting takes the thread's time first (activeLimit).
// Live and sandbox events have a scorer each (AsyncScorers), with a queue and a bound each: a
// sandbox backlog never fills the live queue (DESIGN §8, environments never mix), and while live
// events wait, the sandbox scorer keeps only a few going, so that live events are scored first.
import type { Environment } from '../auth/api-keys.js';
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
/**
 * What the sandbox scorer keeps going while live events wait their turn: few beside the live
 * scorer's kMaxActive, so that live goes first, and never none, so that a steady live backlog
 * does not leave sandbox events unscored.
 */
const kActiveBesideLiveBacklog = 8;

/** How many events the background scorer may score at once (see kBusyActive). Pure. */
export function activeLimit(utilization: number, depth: number, queueLimit: number): number {
  return utilization > kBusyUtilization && depth < kYieldUntilDepth * queueLimit ? kBusyActive : kMaxActive;
}

/** The sandbox scorer's limit while live events wait (kActiveBesideLiveBacklog). Pure. */
export function limitBesideLiveBacklog(limit: number): number {
  return Math.min(limit, kActiveBesideLiveBacklog);
}
/** The first pause before an event that could not be scored is tried again (ASYNC_RETRY_DELAY_MS). */
export const kRetryDelayMs = 1000;
/**
 * Retries of one event back off, doubling up to this (or the first pause, if longer): some causes
 * do not pass by themselves (an event over its evaluation budget fails the same way until the
 * rules change), and must not cost a worker every second. A publish retries them all at once
 * (retrySetAsideNow).
 */
const kMaxRetryDelayMs = 600_000;
/**
 * Set-aside events are kept in buckets of this many ms of due time, each retried as a whole: one
 * timer per bucket, never a scan of every set-aside event per event (a backlog of a project with no
 * ruleset yet is set aside all at once, and comes due all at once).
 */
const kRetryBucketMs = 250;

/** How scoring a queued event ended: scored now, to be tried again, or no longer pending (scored by a sync request, erased). */
export type PendingOutcome = 'done' | 'retry' | 'gone';

/** An accepted event, stored as pending at row `seq`. */
export interface PendingJob extends ScoreJob {
  readonly seq: number;
}

/** Where a queued event's body is read back from when its turn comes (pending-events.ts). */
export interface PendingSource {
  /** The events at `seqs` still pending, in that order. */
  jobs(seqs: readonly number[]): PendingJob[];
}

/**
 * Queued events read back from the log at once: enough to fill the pool's batches, few enough that
 * reading them (a point read and a JSON.parse each) keeps the thread only a fraction of a
 * millisecond.
 */
const kReadAtOnce = 64;

/** The background scorer of each environment's async events, each with its own queue and bound. */
export type AsyncScorers = Readonly<Record<Environment, AsyncScorer>>;

export class AsyncScorer {
  readonly #limit: number;
  readonly #log: Logger;
  readonly #source: PendingSource;
  readonly #retryDelayMs: number;
  /** The live scorer, for the sandbox one: it yields while live events wait (kActiveBesideLiveBacklog). */
  readonly #yieldsTo: AsyncScorer | null;
  #run: ((job: PendingJob) => Promise<PendingOutcome>) | null = null;
  // The seqs of the events waiting, a FIFO as an array with a moving head: no shift() per event.
  // A waiting event costs 8 bytes here; its body stays in the log until its turn.
  #queue: number[] = [];
  #head = 0;
  /** Events set aside that are due again: they go before the queue (few; #queue may be long). */
  #retryDue: number[] = [];
  /** Seqs dropped while waiting: skipped at their turn (drop must not scan the queue). */
  readonly #dropped = new Set<number>();
  /** The seqs being scored (at most #cap()). */
  readonly #activeSeqs = new Set<number>();
  #paused = false;
  #maxActive = kMaxActive;
  #loadCheck: NodeJS.Timeout | null = null;
  #pumpLater: NodeJS.Immediate | null = null;
  /** Events set aside, by the end of the bucket of due time they fall in (kRetryBucketMs). */
  #delayed = new Map<number, number[]>();
  #delayedCount = 0;
  /**
   * The events set aside at least once and not done with yet (set aside, due again, or being tried
   * again), each with its project's index in #setAsideCounts (0: not known, a failed read). They
   * count against their project's bound, never the queue's: a publish makes every one of them due
   * at once, and they must not then fill the queue of the other projects.
   */
  readonly #setAsideProject = new Map<number, number>();
  /** The events of #setAsideProject by project index: each project's are bounded on their own (canAccept). */
  #setAsideCounts: number[] = [0];
  /** Each project's index in #setAsideCounts. */
  readonly #projectIndex = new Map<string, number>([['', 0]]);
  /** Accepted events between the check of the bound and the queue (EventService awaits their write). */
  #reserved = 0;
  readonly #attempts = new Map<number, number>();
  #retryTimer: NodeJS.Timeout | null = null;
  /** When #retryTimer fires (the earliest bucket when it was set). */
  #retryAt = Number.POSITIVE_INFINITY;
  #idleWaiters: Array<() => void> = [];
  /** Events scored since start, for /metrics. */
  scored = 0;

  constructor(limit: number, log: Logger, source: PendingSource, retryDelayMs = kRetryDelayMs, yieldsTo: AsyncScorer | null = null) {
    this.#limit = limit;
    this.#log = log;
    this.#source = source;
    this.#retryDelayMs = retryDelayMs;
    this.#yieldsTo = yieldsTo;
  }

  /** Queued, set aside, being scored, or accepted and being written: what counts against the bound. */
  get depth(): number {
    return this.#waiting() - this.#dropped.size + this.#activeSeqs.size + this.#delayedCount + this.#reserved;
  }

  /** What the queue's bound counts: `depth` but for the events set aside (bounded per project instead). */
  get queued(): number {
    return this.depth - this.#setAsideProject.size;
  }

  /** Whether events wait for their turn (queued or due again, not set aside for a pause). */
  get backlogged(): boolean {
    return this.#waiting() > this.#dropped.size;
  }

  /** Events set aside, waiting for their pause to end or for a publish (retrySetAsideNow). */
  get setAside(): number {
    return this.#delayedCount;
  }

  /**
   * Whether an async event of `projectId` may be accepted: the queue (events waiting, being
   * scored or written) is under the bound, and so are that project's own events set aside.
   */
  canAccept(projectId: string): boolean {
    return this.refusal(projectId) === null;
  }

  /**
   * Why an async event of `projectId` would be refused now: the queue is full (or paused), or the
   * project's own events set aside (no published ruleset, over budget) reach the bound; null: it
   * would not.
   */
  refusal(projectId: string): 'queue' | 'project' | null {
    if (this.#paused || this.queued >= this.#limit) return 'queue';
    const index = this.#projectIndex.get(projectId);
    return index !== undefined && this.#setAsideCounts[index]! >= this.#limit ? 'project' : null;
  }

  /**
   * Holds a place under the bound for an event accepted and not yet queued (its write is awaited),
   * so that requests arriving meanwhile see it; `unreserve` when it is queued or was not stored.
   */
  reserve(): void {
    this.#reserved++;
  }

  unreserve(): void {
    this.#reserved--;
  }

  /** Starts scoring with `run` (EventService.scorePending). */
  start(run: (job: PendingJob) => Promise<PendingOutcome>): void {
    this.#run = run;
    let last = performance.eventLoopUtilization();
    this.#loadCheck = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const limit = activeLimit(performance.eventLoopUtilization(now, last).utilization, this.queued, this.#limit);
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
    if (this.#run !== null && !this.#paused && this.#waiting() === 0 && this.#activeSeqs.size < this.#cap()) {
      this.#start(job);
      return;
    }
    this.#queue.push(job.seq);
    this.#pump();
  }

  /**
   * Queues the pending events a previous run accepted but did not score, by seq in arrival order
   * (the writer's, pendingSeqsByEnvironment: it read the log for them once at start).
   */
  loadPending(seqs: readonly number[]): number {
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
    for (const [due, bucket] of this.#delayed) {
      const kept = bucket.filter((seq) => {
        if (!gone.has(seq)) return true;
        setAside.add(seq);
        return false;
      });
      if (kept.length === 0) this.#delayed.delete(due);
      else this.#delayed.set(due, kept);
    }
    this.#delayedCount -= setAside.size;
    for (const seq of seqs) {
      this.#attempts.delete(seq);
      // One being scored is done with when it settles.
      if (!this.#activeSeqs.has(seq)) this.#doneWith(seq);
      // A pending event is being scored (left to the writer), set aside (removed above) or waiting.
      if (!this.#activeSeqs.has(seq) && !setAside.has(seq)) this.#dropped.add(seq);
    }
  }

  /**
   * The rules changed (a ruleset was published or restored): every event set aside is due now,
   * whatever its back-off, since what failed it (no live ruleset yet, an event over the evaluation
   * budget) may be gone. One that fails again is set aside for its next, longer pause, as before.
   */
  retrySetAsideNow(): void {
    if (this.#delayedCount === 0) return;
    for (const seqs of this.#delayed.values()) for (const seq of seqs) this.#retryDue.push(seq);
    this.#delayed.clear();
    this.#delayedCount = 0;
    this.#scheduleRetry(); // nothing left to wait for: clears the timer
    this.#pumpSoon();
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

  /** Sets `seq` (an event of `projectId`; '' when not known) aside until `due`, in its bucket. */
  #setAside(seq: number, due: number, projectId: string): void {
    const bucket = Math.ceil(due / kRetryBucketMs) * kRetryBucketMs;
    const seqs = this.#delayed.get(bucket);
    if (seqs === undefined) this.#delayed.set(bucket, [seq]);
    else seqs.push(seq);
    this.#delayedCount++;
    if (!this.#setAsideProject.has(seq)) {
      const index = this.#internProject(projectId);
      this.#setAsideProject.set(seq, index);
      this.#setAsideCounts[index]!++;
    }
    if (bucket < this.#retryAt) this.#scheduleRetry();
  }

  /** `seq` is done with (scored, dropped, no longer pending): out of its project's count, if it was set aside. */
  #doneWith(seq: number): void {
    const index = this.#setAsideProject.get(seq);
    if (index === undefined) return;
    this.#setAsideProject.delete(seq);
    this.#setAsideCounts[index]!--;
  }

  #internProject(projectId: string): number {
    let index = this.#projectIndex.get(projectId);
    if (index === undefined) {
      index = this.#setAsideCounts.push(0) - 1;
      this.#projectIndex.set(projectId, index);
    }
    return index;
  }

  /** One timer for the earliest bucket; its events (and any other due) go to #retryDue, ahead of the queue. */
  #scheduleRetry(): void {
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    this.#retryAt = Number.POSITIVE_INFINITY;
    if (this.#paused || this.#delayed.size === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const due of this.#delayed.keys()) if (due < next) next = due;
    this.#retryAt = next;
    this.#retryTimer = setTimeout(() => {
      const now = Date.now();
      for (const [due, seqs] of this.#delayed) {
        if (due > now) continue;
        for (const seq of seqs) this.#retryDue.push(seq);
        this.#delayedCount -= seqs.length;
        this.#delayed.delete(due);
      }
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
    const room = Math.min(this.#cap() - this.#activeSeqs.size, kReadAtOnce);
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
      const due = Date.now() + this.#retryDelayMs;
      for (const seq of seqs) this.#setAside(seq, due, '');
      return;
    }
    for (const job of jobs) this.#start(job);
    // Those no longer pending (scored or erased meanwhile) are done with: their retry count too.
    if (jobs.length < seqs.length) {
      const started = new Set(jobs.map((job) => job.seq));
      for (const seq of seqs) {
        if (started.has(seq)) continue;
        this.#attempts.delete(seq);
        this.#doneWith(seq);
      }
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#activeSeqs.size < this.#cap() && this.#waiting() > 0) this.#pumpSoon();
  }

  /**
   * How many may be scored at once now: #maxActive, or for the sandbox scorer while live events
   * wait, a few (read at each start, so that live goes first at once; a sandbox event scored
   * starts the next, so sandbox never stops).
   */
  #cap(): number {
    return this.#yieldsTo?.backlogged === true ? limitBesideLiveBacklog(this.#maxActive) : this.#maxActive;
  }

  /** #pump on the next turn of the event loop (once, however often asked meanwhile). */
  #pumpSoon(): void {
    if (this.#pumpLater !== null || this.#run === null || this.#paused) return;
    this.#pumpLater = setImmediate(() => {
      this.#pumpLater = null;
      this.#pump();
    });
  }

  /** Events waiting for their turn (due again, or queued), dropped ones included. */
  #waiting(): number {
    return this.#retryDue.length + this.#queue.length - this.#head;
  }

  #start(job: PendingJob): void {
    this.#activeSeqs.add(job.seq);
    this.#run!(job).then(
      (outcome) => this.#settle(job.seq, outcome, job.projectId),
      (error: unknown) => {
        this.#log.error('async scoring failed', { event_id: job.eventId, error });
        this.#settle(job.seq, 'retry', job.projectId);
      },
    );
  }

  #settle(seq: number, outcome: PendingOutcome, projectId: string): void {
    this.#activeSeqs.delete(seq);
    if (outcome !== 'retry') {
      if (outcome === 'done') this.scored++;
      this.#attempts.delete(seq);
      this.#doneWith(seq);
    } else {
      // Set aside for a while: the cause (no ruleset yet, a locked database) does not go away
      // within microseconds, and retrying at once would spin.
      const attempts = (this.#attempts.get(seq) ?? 0) + 1;
      this.#attempts.set(seq, attempts);
      const delay = Math.min(Math.max(kMaxRetryDelayMs, this.#retryDelayMs), this.#retryDelayMs * 2 ** Math.min(attempts - 1, 30));
      this.#setAside(seq, Date.now() + delay, projectId);
    }
    if (this.#activeSeqs.size === 0 && this.#idleWaiters.length > 0) {
      for (const wake of this.#idleWaiters.splice(0)) wake();
    }
    // After a retry, on the next turn, never from here: that outcome can come at once (no ruleset
    // yet), and a whole backlog would then pass through this turn without the thread serving a
    // request. A scored event came back from the rule workers and the writer: the next ones start
    // now, as they always did.
    if (outcome !== 'retry') this.#pump();
    else this.#pumpSoon();
  }
}
