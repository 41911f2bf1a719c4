// The hop to the rule workers: one piscina task per event against batches (what src/pool/rules-pool.ts
// does: everything asked for in one event-loop turn, up to 64 events, as one task). Prints events/s
// and the HTTP thread's CPU time per event, which is what batching is for.
import { Piscina } from 'piscina';
import { RulesPool } from '../../src/pool/rules-pool.js';
import { createLogger } from '../../src/shared/log.js';
import type { EvaluateItem, EvaluateTaskResult } from '../../src/pool/protocol.js';
import { eventMix } from '../_helpers/event-mix.js';
import { createBenchStore } from '../_helpers/store.js';

const kEvents = 20_000;

export async function runBatchingBenchmark(): Promise<void> {
  const store = createBenchStore();
  const setup = { dataDir: store.dataDir, faults: [], listsClock: new SharedArrayBuffer(8) };
  const mix = eventMix(11);
  const items: EvaluateItem[] = Array.from({ length: kEvents }, () => {
    const payload = mix();
    return {
      projectId: store.bootstrap.live.project_id, eventId: JSON.parse(payload).event_id, version: 1, policy: { review_threshold: 40, block_threshold: 80 }, payload,
      phone: null, velocity: {}, links: { email: 0, phone: 0, fp: 0, ip_24h: 0, card: 0, total: 0, fraud: 0 }, account: { known: false }, now: Date.now(), requestId: null,
    };
  });

  const measure = async (name: string, run: () => Promise<unknown>): Promise<void> => {
    await run(); // warm-up
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run();
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    // process.cpuUsage counts every thread of the process: the hop's cost on both sides.
    console.log(`${name.padEnd(40)} ${(kEvents / (wall / 1000)).toFixed(0).padStart(8)} events/s   process CPU ${((used.user + used.system) / kEvents).toFixed(1).padStart(6)} µs/event`);
  };

  const perEvent = new Piscina({ filename: new URL('../../src/pool/worker.js', import.meta.url).href, workerData: setup, minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 4 });
  await measure('one task per event', () => Promise.all(items.map((item) => perEvent.run({ items: [item] }) as Promise<EvaluateTaskResult>)));
  await perEvent.close();

  const pool = new RulesPool(setup, { threads: 1, maxHeapMb: 512, taskTimeoutMs: 30_000, log: createLogger('warn') });
  await measure('batched (RulesPool, up to 64 per task)', () => Promise.all(items.map((item) => pool.evaluate(item))));
  await pool.close();
  store.remove();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`rule worker hop, ${kEvents} events, 1 worker thread\n`);
  runBatchingBenchmark().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
