// The main-thread side of the rule-evaluation pool (piscina).
//
// One piscina task per event costs the main thread more than the rules themselves (tens of µs of
// messaging against ~0.1 µs of rules), so events are batched: everything asked for during one turn
// of the event loop goes out as one task (up to kMaxBatch events), and several tasks may be in a
// worker at once. See bench/README.md for the measurements behind the batch size.
import { Piscina } from 'piscina';
import type { EvaluateItem, EvaluateTask, EvaluateTaskResult, ItemResult, WorkerSetup } from './protocol.js';

export const kMaxBatch = 64;

interface Waiting {
  readonly item: EvaluateItem;
  readonly resolve: (result: ItemResult) => void;
}

export class RulesPool {
  readonly #pool: Piscina;
  #waiting: Waiting[] = [];
  #scheduled = false;
  /** Batches sent, for /metrics. */
  batches = 0;

  constructor(setup: WorkerSetup, threads: number) {
    this.#pool = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      workerData: setup,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 4,
      idleTimeout: Number.POSITIVE_INFINITY,
      recordTiming: false,
    });
  }

  get queueSize(): number {
    return this.#pool.queueSize + this.#waiting.length;
  }

  /** Evaluates one event; never rejects (a failed worker answers COMPILED_RULES_UNAVAILABLE). */
  evaluate(item: EvaluateItem): Promise<ItemResult> {
    return new Promise((resolve) => {
      this.#waiting.push({ item, resolve });
      if (this.#waiting.length >= kMaxBatch) this.#flush();
      else if (!this.#scheduled) {
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
    this.batches++;
    const task: EvaluateTask = { items: batch.map((waiting) => waiting.item) };
    this.#pool.run(task).then(
      (result: EvaluateTaskResult) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(result.results[i]!);
      },
      (error: unknown) => {
        const failure: ItemResult = { ok: false, code: 'COMPILED_RULES_UNAVAILABLE', message: `rule worker failed: ${(error as Error).message}` };
        for (const waiting of batch) waiting.resolve(failure);
      },
    );
  }

  async close(): Promise<void> {
    this.#flush();
    await this.#pool.close();
  }
}
