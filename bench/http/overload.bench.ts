// By hand (not part of npm run bench; about 2.5 minutes): sync scoring under overload (issue 10).
//   1. capacity: closed loop, wrk, 64 connections (BENCH_CAPACITY_SECONDS, 10 s): C = 2xx/s;
//   2. before: 0.5 C offered for 10 s (open loop): p99 of served requests, the reference;
//   3. overload: 2.5 C offered (BENCH_OVERLOAD_FACTOR) for BENCH_OVERLOAD_SECONDS (60 s);
//   4. after: 0.5 C offered from the moment the overload stops, for BENCH_RECOVERY_SECONDS (60 s),
//      while the overload's last requests are still out: back to normal at the start of the first
//      of three seconds in a row in which every request due was answered 2xx, with p99 within 2×
//      the reference.
// Steps 2–4 use the open-loop generator of _helpers/open-loop.ts (a loop in C: raw keep-alive
// sockets, at most BENCH_OVERLOAD_CONNECTIONS = 1024 at once, every request hung up after
// BENCH_TIMEOUT_MS = 2000 ms counted from when it was due). Prints goodput (2xx/s) as a fraction
// of C, the 503s (in the envelope with Retry-After?) and their latency, p99 of served requests,
// timeouts, and the server's resident set at the end of the overload.
//   node dist/bench/http/overload.bench.js     (after npm run build)
import { eventMix } from '../_helpers/event-mix.js';
import { kConnectionError, kNeverSent, kTimedOut, quantile, runOpenLoop, type OpenLoopResult } from '../_helpers/open-loop.js';
import { residentBytes } from '../_helpers/proc.js';
import { startFraudScorer } from '../_helpers/processes.js';
import { hasWrk, runWrk } from '../_helpers/wrk.js';

const kCapacitySeconds = Number(process.env.BENCH_CAPACITY_SECONDS ?? 10);
const kOverloadSeconds = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 60);
const kRecoverySeconds = Number(process.env.BENCH_RECOVERY_SECONDS ?? 60);
const kFactor = Number(process.env.BENCH_OVERLOAD_FACTOR ?? 2.5);
const kTimeoutMs = Number(process.env.BENCH_TIMEOUT_MS ?? 2000);
const kMaxConnections = Number(process.env.BENCH_OVERLOAD_CONNECTIONS ?? 1024);
/** Seconds in a row that must look normal before the server counts as recovered. */
const kSteadySeconds = 3;

interface Summary {
  readonly offered: number;
  readonly ok: number;
  readonly refused503: number;
  readonly refusedInEnvelope: number;
  readonly otherStatus: number;
  readonly timedOut: number;
  readonly neverSent: number;
  readonly connectionErrors: number;
  readonly okP50: number;
  readonly okP99: number;
  readonly refusedP50: number;
  readonly refusedP99: number;
}

function summarise(result: OpenLoopResult, from = 0, to = result.status.length): Summary {
  const ok: number[] = [];
  const refused: number[] = [];
  let refusedInEnvelope = 0;
  let otherStatus = 0;
  let timedOut = 0;
  let neverSent = 0;
  let connectionErrors = 0;
  for (let i = from; i < to; i++) {
    const code = result.status[i]!;
    if (code >= 200 && code < 300) ok.push(result.latencyMs[i]!);
    else if (code === 503) {
      refused.push(result.latencyMs[i]!);
      refusedInEnvelope += result.refusedInEnvelope[i]!;
    } else if (code === kTimedOut) timedOut++;
    else if (code === kNeverSent) neverSent++;
    else if (code === kConnectionError) connectionErrors++;
    else otherStatus++;
  }
  return {
    offered: to - from, ok: ok.length, refused503: refused.length, refusedInEnvelope, otherStatus, timedOut, neverSent, connectionErrors,
    okP50: quantile(ok, 0.5), okP99: quantile(ok, 0.99), refusedP50: quantile(refused, 0.5), refusedP99: quantile(refused, 0.99),
  };
}

function describe(name: string, summary: Summary, seconds: number): string {
  return (
    `${name}: offered ${summary.offered} (${(summary.offered / seconds).toFixed(0)}/s); 2xx ${summary.ok} (${(summary.ok / seconds).toFixed(0)}/s, p50 ${summary.okP50.toFixed(1)} ms, p99 ${summary.okP99.toFixed(1)} ms); ` +
    `503 ${summary.refused503} (${summary.refusedInEnvelope} in the envelope with Retry-After; p50 ${summary.refusedP50.toFixed(1)} ms, p99 ${summary.refusedP99.toFixed(1)} ms); ` +
    `other status ${summary.otherStatus}; timed out ${summary.timedOut} after sending, ${summary.neverSent} before (no free connection); connection errors ${summary.connectionErrors}`
  );
}

/** Seconds after the start of `result` at which it was back to normal, or NaN. */
function recoveredAfter(result: OpenLoopResult, rate: number, referenceP99: number): number {
  const normal: boolean[] = [];
  for (let second = 0; (second + 1) * rate <= result.status.length; second++) {
    const window = summarise(result, Math.floor(second * rate), Math.floor((second + 1) * rate));
    normal.push(window.ok === window.offered && window.okP99 <= 2 * referenceP99);
    if (normal.length >= kSteadySeconds && normal.slice(-kSteadySeconds).every(Boolean)) return second - kSteadySeconds + 1;
  }
  return NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  if (!hasWrk()) throw new Error('this benchmark needs wrk (apt-get install wrk)');
  const server = await startFraudScorer();
  try {
    const env = { FS_KEY: server.liveKey };
    const pid = server.child.pid!;
    await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: 5 });
    const closed = await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: kCapacitySeconds });
    const capacity = (closed.requests - closed.non2xx) / closed.seconds;
    console.log(`capacity (closed loop, wrk, 64 connections, ${kCapacitySeconds} s): ${capacity.toFixed(0)} events/s, p50 ${closed.p50Ms} ms, p99 ${closed.p99Ms} ms, non-2xx ${closed.non2xx}`);

    const load = (rate: number, seconds: number): Promise<OpenLoopResult> =>
      runOpenLoop({
        url: server.url, path: '/v1/events', headers: { authorization: `Bearer ${server.liveKey}` }, body: eventMix(Math.floor(rate * seconds)),
        rate, seconds, timeoutMs: kTimeoutMs, maxConnections: kMaxConnections,
      });

    const half = capacity / 2;
    const before = await load(half, 10);
    const reference = summarise(before);
    console.log(describe(`before, 0.5× (open loop, 10 s)`, reference, 10));
    console.log(`  the generator's CPU: ${before.clientCpuUsPerRequest.toFixed(0)} µs per request`);

    const overloadRate = capacity * kFactor;
    const overloadRun = load(overloadRate, kOverloadSeconds);
    await sleep(kOverloadSeconds * 1000);
    const atOverloadEnd = residentBytes(pid);
    const after = await load(half, kRecoverySeconds);
    const overload = await overloadRun;
    const summary = summarise(overload);
    console.log(describe(`overload, ${kFactor}× (${overloadRate.toFixed(0)}/s offered for ${kOverloadSeconds} s)`, summary, kOverloadSeconds));
    console.log(`  the generator's CPU: ${overload.clientCpuUsPerRequest.toFixed(0)} µs per request; ${overload.connectionsOpened} connections opened`);
    console.log(`  goodput: ${(summary.ok / kOverloadSeconds).toFixed(0)}/s = ${(summary.ok / kOverloadSeconds / capacity).toFixed(2)} of capacity`);
    console.log(`  server resident set at the end of the overload: ${(atOverloadEnd.rss / 1048576).toFixed(0)} MiB (peak so far ${(atOverloadEnd.peak / 1048576).toFixed(0)} MiB)`);

    console.log(describe(`after, 0.5× (${kRecoverySeconds} s from the end of the overload)`, summarise(after), kRecoverySeconds));
    const recovered = recoveredAfter(after, half, reference.okP99);
    console.log(
      Number.isNaN(recovered)
        ? `  not back to normal within ${kRecoverySeconds} s (normal: ${kSteadySeconds} s in a row all 2xx with p99 ≤ ${(2 * reference.okP99).toFixed(1)} ms)`
        : `  back to normal ${recovered} s after the overload stopped (${kSteadySeconds} s in a row all 2xx with p99 ≤ ${(2 * reference.okP99).toFixed(1)} ms)`,
    );
    const end = residentBytes(pid);
    console.log(`server resident set at the end: ${(end.rss / 1048576).toFixed(0)} MiB (peak ${(end.peak / 1048576).toFixed(0)} MiB)`);
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
