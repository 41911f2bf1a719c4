// Runs backtests one at a time, each on a thread of its own (backtest-worker.ts), off the HTTP
// thread: a backtest reads up to a million events and judges each again, seconds of CPU that must
// not stall the thread answering payment backends. One at a time for the whole server: on a small
// machine two would take twice the CPU from live scoring for no faster answers; backtests of other
// projects wait in a FIFO queue (at most kMaxQueued). The per-project rule (one at a time, a second
// gets 429) is the service's (backtest-service.ts).
import { Worker } from 'node:worker_threads';
import type { FaultLatch } from '../shared/fault-latch.js';
import type { BacktestJob } from './backtest-run.js';
import { kCancel, kCells, kGo, kPace, kProgress, kScanned } from './backtest-run.js';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { BacktestThreadMessage, BacktestThreadSetup } from './backtest-worker.js';

/** Backtests waiting behind the running one, all projects together. */
export const kMaxQueued = 16;
/** A backtest thread's heap bound: a runaway report fails its backtest, not the server. */
const kThreadHeapMb = 512;
/** How often the pace follows the HTTP thread's load. */
const kPaceIntervalMs = 250;
/** The least share of time a backtest works, in thousandths, however busy scoring is. */
export const kMinPace = 150;

/**
 * The share of time a backtest may work (thousandths) when the HTTP thread was busy `utilisation`
 * of the last interval: what scoring leaves (1 − utilisation), at least kMinPace. An idle server
 * runs it at full speed, one at half its capacity at about half, a saturated one at kMinPace.
 */
export function pace(utilisation: number): number {
  return Math.max(kMinPace, Math.round(1000 * (1 - Math.min(1, Math.max(0, utilisation)))));
}

export interface BacktestProgress {
  readonly state: 'queued' | 'running';
  /** Backtests ahead of it (queued only). */
  readonly ahead: number;
  readonly eventsScanned: number;
  /** 0 to 1: how much of the range's events were read. */
  readonly fraction: number;
  /** Epoch ms it started running (running only). */
  readonly startedAt: number | null;
}

export interface RunnerEvents {
  /** The backtest runs: resolves once that is stored (never rejects). */
  readonly started: (backtestId: string) => Promise<void>;
  readonly finished: (backtestId: string, outcome: { ok: true; report: Record<string, unknown> } | { ok: false; message: string }) => void;
}

interface Running {
  readonly job: BacktestJob;
  readonly cells: Int32Array;
  readonly startedAt: number;
  worker: Worker | null;
}

export class BacktestRunner {
  readonly #dataDir: string;
  readonly #events: RunnerEvents;
  readonly #latch: FaultLatch;
  readonly #now: () => number;
  readonly #queue: BacktestJob[] = [];
  #running: Running | null = null;
  #stopped = false;

  constructor(dataDir: string, events: RunnerEvents, latch: FaultLatch, now: () => number) {
    this.#dataDir = dataDir;
    this.#events = events;
    this.#latch = latch;
    this.#now = now;
  }

  /** Jobs waiting (the running one not counted); the service keeps it at most kMaxQueued. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Queues a job (the caller checked the room); it starts at once when nothing runs. */
  enqueue(job: BacktestJob): void {
    this.#queue.push(job);
    if (this.#running === null) void this.#next();
  }

  progress(backtestId: string): BacktestProgress | null {
    const running = this.#running;
    if (running !== null && running.job.backtestId === backtestId) {
      return {
        state: 'running',
        ahead: 0,
        eventsScanned: Atomics.load(running.cells, kScanned),
        fraction: Atomics.load(running.cells, kProgress) / 1_000_000,
        startedAt: running.startedAt,
      };
    }
    const position = this.#queue.findIndex((job) => job.backtestId === backtestId);
    if (position === -1) return null;
    return { state: 'queued', ahead: position + (running === null ? 0 : 1), eventsScanned: 0, fraction: 0, startedAt: null };
  }

  async #next(): Promise<void> {
    const job = this.#queue.shift();
    if (job === undefined || this.#stopped) return;
    const running: Running = { job, cells: new Int32Array(new SharedArrayBuffer(kCells * Int32Array.BYTES_PER_ELEMENT)), startedAt: this.#now(), worker: null };
    Atomics.store(running.cells, kPace, 1000);
    this.#running = running;
    await this.#events.started(job.backtestId);
    if (this.#stopped) return;
    // Tests (FAULT_INJECTION=hold_points) hold a backtest at `backtest`, running (and stored as
    // such), to see what a second gets, or what changes meanwhile. Held once its thread has taken
    // its snapshot (which events, which lists): what is scored or listed during the hold is after
    // the backtest started, as it would be during a long run.
    const hold = this.#latch.enabled;
    Atomics.store(running.cells, kGo, hold ? 0 : 1);
    const setup: BacktestThreadSetup = { dataDir: this.#dataDir, job, progress: running.cells.buffer as SharedArrayBuffer, holdAfterSnapshot: hold };
    const worker = new Worker(new URL('./backtest-worker.js', import.meta.url), { workerData: setup, resourceLimits: { maxOldGenerationSizeMb: kThreadHeapMb } });
    running.worker = worker;
    let message: BacktestThreadMessage | null = null;
    let snapshotTaken: () => void = () => undefined;
    const snapshot = new Promise<void>((resolve) => (snapshotTaken = resolve));
    worker.on('message', (value: BacktestThreadMessage) => {
      if ('snapshot' in value) snapshotTaken();
      else message = value;
    });
    let threadError: Error | null = null;
    worker.once('error', (error) => (threadError = error));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (hold) {
      await Promise.race([snapshot, exited]);
      await this.#latch.hold('backtest');
      if (this.#stopped) return;
      Atomics.store(running.cells, kGo, 1);
      Atomics.notify(running.cells, kGo);
    }
    let utilisation: EventLoopUtilization = performance.eventLoopUtilization();
    const pacer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      Atomics.store(running.cells, kPace, pace(performance.eventLoopUtilization(now, utilisation).utilization));
      utilisation = now;
    }, kPaceIntervalMs);
    pacer.unref();
    await exited;
    clearInterval(pacer);
    if (this.#stopped) return;
    this.#running = null;
    const received = message as Exclude<BacktestThreadMessage, { snapshot: true }> | null;
    if (received?.ok === true) this.#events.finished(job.backtestId, { ok: true, report: received.report });
    else this.#events.finished(job.backtestId, { ok: false, message: received?.message ?? `the backtest thread stopped: ${(threadError as Error | null)?.message ?? 'no reason given'}` });
    void this.#next();
  }

  /** Backtests queued or running (for the stop). */
  unfinished(): string[] {
    return [...(this.#running === null ? [] : [this.#running.job.backtestId]), ...this.#queue.map((job) => job.backtestId)];
  }

  /** Stops the running backtest (its thread ends at its next chunk, or is terminated) and drops the queue. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#queue.length = 0;
    const running = this.#running;
    if (running === null) return;
    Atomics.store(running.cells, kCancel, 1);
    Atomics.notify(running.cells, kCancel);
    Atomics.notify(running.cells, kGo);
    await running.worker?.terminate();
  }
}
