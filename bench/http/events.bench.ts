// POST /v1/events under load (issue 4 targets), persistence on, the `default` preset, the event mix
// of bench/http/events.lua (= bench/_helpers/event-mix.ts):
//   - sync throughput at 64 connections, and its ratio to the bare uWebSockets.js handler;
//   - p50/p99 at a fixed offered load (autocannon's overall rate; BENCH_FIXED_RATE, 10,000/s);
//   - async ingestion throughput, and how long the queue takes to drain behind it.
import { startFraudScorer } from '../_helpers/processes.js';
import { eventMix } from '../_helpers/event-mix.js';
import { formatFigures, runLoad } from '../_helpers/load.js';
import { drainAsyncQueue, metric } from '../_helpers/metrics.js';
import { closedLoop } from './front-end.bench.js';

const kFixedRate = Number(process.env.BENCH_FIXED_RATE ?? 10_000);

export async function runEventBenchmarks(bareRequestsPerSecond: number, seconds: number): Promise<void> {
  const server = await startFraudScorer();
  try {
    const env = { FS_KEY: server.liveKey };
    // Warm-up: JIT, the rule workers, SQLite's page cache, the accounts of the mix.
    await closedLoop(server.url, 'events.lua', { ...env, FS_SEED: '1' }, 5);

    const sync = await closedLoop(server.url, 'events.lua', env, seconds);
    console.log(formatFigures('POST /v1/events sync, 64 connections', sync));
    console.log(`sync scoring / bare: ${(sync.requestsPerSecond / bareRequestsPerSecond).toFixed(2)}`);

    const headers = { authorization: `Bearer ${server.liveKey}` };
    const fixed = await runLoad({ url: server.url, method: 'POST', path: '/v1/events', headers, body: eventMix(3), connections: 64, seconds, rate: kFixedRate });
    console.log(formatFigures(`POST /v1/events sync at ${kFixedRate}/s offered`, fixed));

    const ingest = await closedLoop(server.url, 'events.lua', { ...env, FS_ASYNC: '1' }, seconds);
    console.log(formatFigures('POST /v1/events async (accepted), 64 conns', ingest));
    console.log(`async queue depth when the load stopped: ${await metric(server.url, 'fraud_scorer_async_queue_depth')}`);
    console.log(`async queue drained in ${(await drainAsyncQueue(server.url)).toFixed(1)} s`);
  } finally {
    await server.stop();
  }
}
