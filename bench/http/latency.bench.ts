// By hand (about a minute): where the tail latency of sync scoring comes from at a fixed load. One
// server; the realistic mix offered open-loop at BENCH_RATE events/s (1300) for 10 s of warm-up
// and BENCH_SECONDS (30) measured; prints p50/p90/p99/p99.9 of the answers and every 100-ms window
// whose slowest answer took more than BENCH_SLOW_MS (20): periodic stalls (a WAL reset, a bulk
// write) show as a row of windows at a steady interval. Server settings as environment variables
// (DERIVED_FLUSH_MS=… to compare). BENCH_NODE_ARGS: flags for the server's node (e.g. `--trace-gc`),
// whose standard output then goes to BENCH_SERVER_OUT (default: server-out.txt in the temp dir).
// BENCH_GC=1 adds `--trace-gc-nvp` and prints the HTTP thread's scavenges after the run: how many
// per second, their mean pause, and the bytes they copied and promoted to the old generation.
// Also prints the server's own histogram over the measured seconds (/metrics): the share of answers
// within 1, 2, 5, 10, 25 and 50 ms of the moment the HTTP thread read the request — without the
// time a request waits for that thread to read it, which the generator's figures include — and the
// same shares for the two hops inside it (waiting for the rule workers, for the commit), the CPU
// per event of each of its threads at that rate and how often each slept (voluntary context
// switches: each is a wake-up), and the answers that were not 2xx by status and second (a 503 at
// half capacity is the door refusing during a pause), and the connections the generator opened (a
// pause makes it open more; bench/README.md, step 42).
// BENCH_HARSH=1: the harsh mix (every event with an account brings a new device and card).
// Then the same load (mix, rate, generator, seconds) goes to a bare uWebSockets.js handler
// (bench/http/bare-uws.ts) after the server has stopped, and the same figures are printed for it:
// on this class of machine a thread woken for each request costs several times what it costs at
// capacity, and the bare handler's own p99 at a rate is the floor of what the machine gives at
// that rate (bench/README.md, step 57). BENCH_BARE=0 skips it.
//   node dist/bench/http/latency.bench.js     (after npm run build)
import { createWriteStream, readFileSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summariseScavenges } from '../_helpers/gc-trace.js';
import { durationBuckets, stageBuckets, type Buckets } from '../_helpers/metrics.js';
import { quantile, realisticLoad, type OpenLoopResult } from '../_helpers/open-loop.js';
import { sampleProcess, usageByRole } from '../_helpers/proc.js';
import { kBenchNodeArgs, startBareUws, startFraudScorer } from '../_helpers/processes.js';

const kRate = Number(process.env.BENCH_RATE ?? 1300);
const kSeconds = Number(process.env.BENCH_SECONDS ?? 30);
const kSlowMs = Number(process.env.BENCH_SLOW_MS ?? 20);
const kWindowMs = 100;
const kRoute = 'POST /v1/events';
const kGc = process.env.BENCH_GC === '1';
const kHarsh = process.env.BENCH_HARSH === '1';
const kBare = process.env.BENCH_BARE !== '0';
const kNodeArgs = kGc ? ['--trace-gc-nvp'] : [];
const kServerOut = process.env.BENCH_SERVER_OUT ?? join(tmpdir(), 'server-out.txt');

const kStages = ['rules', 'commit'] as const;

/** The share of what a histogram counted between two scrapes within each bound from 1 to 50 ms. */
function shares(before: Buckets, after: Buckets): string {
  const counted = after.count - before.count;
  return after.bounds
    .map((bound, i) => [bound, (after.cumulative[i]! - before.cumulative[i]!) / counted] as const)
    .filter(([bound]) => bound >= 0.001 && bound <= 0.05)
    .map(([bound, share]) => `≤ ${bound * 1000} ms ${(share * 100).toFixed(2)} %`)
    .join(', ');
}

async function main(): Promise<void> {
  const server = await startFraudScorer({ FS_ANNOUNCE_THREADS: '1' }, kNodeArgs);
  const out = kBenchNodeArgs.length + kNodeArgs.length > 0 ? server.child.stdout!.pipe(createWriteStream(kServerOut)) : null;
  if (out !== null) console.log(`server's standard output: ${kServerOut}`);
  try {
    const load = realisticLoad(server, kRate, { harsh: kHarsh });
    await load(10);
    const before = await durationBuckets(server.url, kRoute);
    const stagesBefore = await Promise.all(kStages.map((stage) => stageBuckets(server.url, stage)));
    const cpuBefore = sampleProcess(server.child.pid!);
    const result = await load(kSeconds);
    const usage = usageByRole(server.child.pid!, cpuBefore, sampleProcess(server.child.pid!), server.threads);
    const after = await durationBuckets(server.url, kRoute);
    const stagesAfter = await Promise.all(kStages.map((stage) => stageBuckets(server.url, stage)));
    const served: number[] = [];
    const slowest = new Map<number, number>();
    for (let i = 0; i < result.status.length; i++) {
      const window = Math.floor(result.dueMs[i]! / kWindowMs);
      slowest.set(window, Math.max(slowest.get(window) ?? 0, result.latencyMs[i]!));
      if (result.status[i]! >= 200 && result.status[i]! < 300) served.push(result.latencyMs[i]!);
    }
    console.log(`${kHarsh ? 'harsh mix: ' : ''}${kRate} events/s offered for ${kSeconds} s: ${served.length} of ${result.status.length} answered 2xx; ${latencies(served)}`);
    if (served.length < result.status.length) console.log(`not 2xx, by status and second of the run (0: timed out, -1: never sent, -2: connection error): ${notServed(result)}`);
    // CPU per event at this rate, by thread (as cpu.bench.ts counts it at capacity): a load paced
    // below capacity gives each thread fewer events per wake-up, batch and commit.
    const perEvent = [...usage].map(([role, { cpuUs }]) => `${role} ${(cpuUs / served.length).toFixed(1)}`).join(', ');
    const totalUs = [...usage.values()].reduce((sum, { cpuUs }) => sum + cpuUs, 0) / served.length;
    console.log(`CPU µs per event answered 2xx: ${perEvent}; total ${totalUs.toFixed(1)}; WAL written per event ${((usage.get('writer')?.wchar ?? 0) / served.length).toFixed(0)} B`);
    // Below capacity each event wakes the threads on its own: sleeps per event say how often.
    const sleeps = [...usage].map(([role, { sleeps }]) => `${role} ${(sleeps / served.length).toFixed(2)}`).join(', ');
    console.log(`sleeps (voluntary context switches) per event answered 2xx: ${sleeps}`);
    // A thread busy most of the run queues the requests behind one another, whatever the rate.
    const busy = [...usage].map(([role, { cpuUs }]) => `${role} ${((cpuUs / (kSeconds * 1e6)) * 100).toFixed(0)} %`).join(', ');
    console.log(`share of a core each thread was busy: ${busy}`);
    const slow = [...slowest].filter(([, latency]) => latency > kSlowMs);
    console.log(`${slow.length} of ${slowest.size} windows of ${kWindowMs} ms had an answer slower than ${kSlowMs} ms (second of the run: slowest ms):`);
    console.log(slow.map(([window, latency]) => `${((window * kWindowMs) / 1000).toFixed(1)}: ${latency.toFixed(0)}`).join(', '));
    // The server's own view (its histogram over the measured seconds): the share of answers within
    // each bound, which says whether its p99 is under a bound that the generator's figure includes.
    console.log(`the server's own timing (read → answered, ${after.count - before.count} answers): ${shares(before, after)}`);
    // The two hops inside that time: the rule workers' and the writer's (events scored, /metrics).
    kStages.forEach((stage, i) => {
      console.log(`  waiting for ${stage === 'rules' ? 'the rule workers' : 'the commit'} (${stagesAfter[i]!.count - stagesBefore[i]!.count} events): ${shares(stagesBefore[i]!, stagesAfter[i]!)}`);
    });
    const stalls = result.clientStalls;
    console.log(`the generator's own stalls over 10 ms (second: ms), answers then timed late: ${stalls.length === 0 ? 'none' : stalls.map(([at, length]) => `${(at / 1000).toFixed(1)}: ${length.toFixed(0)}`).join(', ')}`);
    console.log(`the generator's CPU: ${result.clientCpuUsPerRequest.toFixed(1)} µs per request; ${result.connectionsOpened} connections opened`);
  } finally {
    await server.stop();
  }
  if (out !== null) await finished(out);
  if (kBare) await bareAtTheSameRate();
  if (kGc) {
    const gc = summariseScavenges(readFileSync(kServerOut, 'utf8'));
    if (gc === null) console.log('no scavenges in the trace');
    else {
      console.log(
        `the HTTP thread's scavenges (the last two thirds of the run): ${gc.perSecond.toFixed(1)}/s, mean pause ${gc.pauseMs.toFixed(2)} ms, ` +
          `${(gc.survivedBytes / 1024).toFixed(0)} KiB survived and ${(gc.promotedBytes / 1024).toFixed(0)} KiB promoted each (${(gc.promotedPerSecond / 1048576).toFixed(1)} MiB/s); ${gc.markCompacts} mark-compacts`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

/** `ms p50 …, p90 …, p99 …, p99.9 …, max …` of the answers' latencies (sorts `served`). */
function latencies(served: number[]): string {
  served.sort((a, b) => a - b);
  const ms = (q: number): string => quantile(served, q).toFixed(1);
  return `ms p50 ${ms(0.5)}, p90 ${ms(0.9)}, p99 ${ms(0.99)}, p99.9 ${ms(0.999)}, max ${served.at(-1)?.toFixed(1)}`;
}

/**
 * The same load offered to the bare handler: its latencies, and its thread's CPU and sleeps per
 * request, at the rate the server was measured at — what the machine itself costs there.
 */
async function bareAtTheSameRate(): Promise<void> {
  const bare = await startBareUws();
  try {
    const load = realisticLoad({ url: bare.url, liveKey: 'unused' }, kRate, { harsh: kHarsh });
    await load(5);
    const before = sampleProcess(bare.child.pid!);
    const result = await load(kSeconds);
    const http = usageByRole(bare.child.pid!, before, sampleProcess(bare.child.pid!), new Map()).get('http')!;
    const served: number[] = [];
    for (let i = 0; i < result.status.length; i++) if (result.status[i]! >= 200 && result.status[i]! < 300) served.push(result.latencyMs[i]!);
    console.log(`the bare handler, the same load after the server stopped: ${served.length} of ${result.status.length} answered 2xx; ${latencies(served)}`);
    console.log(
      `  its thread: ${(http.cpuUs / served.length).toFixed(1)} µs of CPU and ${(http.sleeps / served.length).toFixed(2)} sleeps per request, ` +
        `busy ${((http.cpuUs / (kSeconds * 1e6)) * 100).toFixed(0)} % of a core; the generator's stalls over 10 ms: ${result.clientStalls.length}`,
    );
  } finally {
    await bare.stop();
  }
}

/** Answers other than 2xx, as "status: count (seconds in which they fell)". */
function notServed(result: OpenLoopResult): string {
  const byStatus = new Map<number, { count: number; seconds: Set<number> }>();
  for (let i = 0; i < result.status.length; i++) {
    const status = result.status[i]!;
    if (status >= 200 && status < 300) continue;
    const entry = byStatus.get(status) ?? { count: 0, seconds: new Set<number>() };
    entry.count++;
    entry.seconds.add(Math.floor(result.dueMs[i]! / 1000));
    byStatus.set(status, entry);
  }
  return [...byStatus].map(([status, { count, seconds }]) => `${status}: ${count} (s ${[...seconds].join(', ')})`).join('; ');
}
