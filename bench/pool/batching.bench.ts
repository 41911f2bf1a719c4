// The hop to the rule workers: one piscina task per event against batches (what src/pool/rules-pool.ts
// does: everything asked for in one event-loop turn, up to 64 events, as one task). Prints events/s
// and the HTTP thread's CPU time per event, which is what batching is for.
import { deserialize, serialize } from 'node:v8';
import { Piscina } from 'piscina';
import { RulesPool } from '../../src/pool/rules-pool.js';
import { createLogger } from '../../src/shared/log.js';
import { encodeTask, itemOf, taskSize, type EvaluateItem, type EvaluateTaskResult } from '../../src/pool/protocol.js';
import { eventMix } from '../_helpers/event-mix.js';
import { createBenchStore } from '../_helpers/store.js';

const kEvents = 20_000;

export async function runBatchingBenchmark(): Promise<void> {
  const store = createBenchStore();
  const setup = { dataDir: store.dataDir, faults: [], listsClock: new SharedArrayBuffer(8), loaded: new SharedArrayBuffer(4) };
  const mix = eventMix(11);
  const items: EvaluateItem[] = Array.from({ length: kEvents }, () => {
    const payload = mix();
    return {
      projectId: store.bootstrap.live.project_id, eventId: JSON.parse(payload).event_id, version: 1, policy: { review_threshold: 40, block_threshold: 80 }, payload,
      // What the scorer sends for an event with an account, on the default preset (which reads all three groups).
      phone: { signals: { present: true, parseable: true, valid: true, country: 'DE', type: 'MOBILE' }, e164: '+4915010004551', masked: '+49*********51', status: 'ok' },
      velocity: { card_1h: 1, card_24h: 3, ip_1h: 2, ip_24h: 5, account_1h: 1, account_24h: 4, email_1h: 1, email_24h: 4, fp_1h: 1, fp_24h: 3, account_amount_24h: 123_456, card_amount_24h: 23_456 },
      links: { email: 0, phone: 0, fp: 1, ip_24h: 2, card: 0, total: 2, fraud: 0 },
      account: { known: true, age_days: 300, events: 40, blocks: 0, reviews: 1, fraud_confirmed: false, labelled_fraud: 0 },
      now: Date.now(), requestId: 'a3b1c2d4-0000-4000-8000-1234567890ab',
    };
  });

  measureWireFormat(items.slice(0, 24));

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
  await measure('one task per event', () => Promise.all(items.map((item) => perEvent.run(encodeTask([item])) as Promise<EvaluateTaskResult>)));
  await perEvent.close();

  const pool = new RulesPool(setup, { threads: 1, maxHeapMb: 512, taskTimeoutMs: 30_000, log: createLogger('warn') });
  await measure('batched (RulesPool, up to 64 per task)', () => Promise.all(items.map((item) => pool.evaluate(item))));
  await pool.close();
  store.remove();
}

/**
 * A batch of 24 events (the size seen under full load) through a structured clone, as postMessage
 * does it: the events as objects (before step 11) against the columns of pool/protocol.ts, read
 * back into objects as the worker does. Both sides' work, on one thread.
 */
function measureWireFormat(batch: readonly EvaluateItem[]): void {
  const rounds = 3_000;
  const time = (name: string, run: () => void): void => {
    run();
    const started = performance.now();
    for (let i = 0; i < rounds; i++) run();
    console.log(`${name.padEnd(40)} ${(((performance.now() - started) * 1000) / (rounds * batch.length)).toFixed(2).padStart(6)} µs/event`);
  };
  time('clone of a batch: objects', () => {
    deserialize(serialize({ items: batch }));
  });
  time('clone of a batch: columns (protocol.ts)', () => {
    const task = deserialize(serialize(encodeTask(batch))) as ReturnType<typeof encodeTask>;
    for (let i = 0; i < taskSize(task); i++) itemOf(task, i);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`rule worker hop, ${kEvents} events, 1 worker thread\n`);
  runBatchingBenchmark().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
