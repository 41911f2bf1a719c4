// By hand (not part of npm run bench): memory under a long sync run. Drives POST /v1/events with the
// event mix for BENCH_MEMORY_SECONDS (default 300) after a 60 s warm-up, samples the server's
// resident set size from /metrics every 10 s, and prints the samples and the growth after warm-up,
// with what the state in memory holds (entries and bytes by kind, fraud_scorer_state_*): a resident
// set that grows only by the bytes of what is held (every stored event's id stays) is flat.
//   node dist/bench/http/memory.bench.js
//   BENCH_MEMORY_RATE: offer that many events/s of the realistic mix open-loop instead of wrk's
//     closed loop at capacity (a steady load, as "flat under an hour of steady load" asks:
//     BENCH_MEMORY_SECONDS=3600 BENCH_MEMORY_RATE=3000), in runs of BENCH_MEMORY_RUN_SECONDS (20)
//     with bodies of their own: the generator sends at most 65,536 bodies in turn, and a run that
//     sent the same ones all along would bring no new account, link or velocity key after them.
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metric } from '../_helpers/metrics.js';
import { realisticLoad } from '../_helpers/open-loop.js';
import { startFraudScorer } from '../_helpers/processes.js';
import { hasWrk } from '../_helpers/wrk.js';

const kStateKinds = ['accounts', 'signal_values', 'signal_holders', 'links', 'event_ids', 'velocity_keys'] as const;

const kSeconds = Number(process.env.BENCH_MEMORY_SECONDS ?? 300);
const kWarmupSeconds = Number(process.env.BENCH_MEMORY_WARMUP_SECONDS ?? 60);
const kSampleMs = 10_000;
const kRate = Number(process.env.BENCH_MEMORY_RATE ?? 0);
const kRunSeconds = Number(process.env.BENCH_MEMORY_RUN_SECONDS ?? 20);
if (!(Number.isFinite(kRunSeconds) && kRunSeconds > 0)) throw new Error('BENCH_MEMORY_RUN_SECONDS: seconds per run, a positive number');

function mib(bytes: number): string {
  return `${Math.round(bytes / 1048576)} MiB`.padStart(8);
}

/** fraud_scorer_state_entries and _bytes by kind, and the bytes of all kinds. */
async function stateByKind(url: string): Promise<{ bytes: number; kinds: Array<{ kind: string; entries: number; bytes: number }> }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string, kind: string): number => Number(new RegExp(`^${name}\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const kinds = kStateKinds.map((kind) => ({ kind, entries: value('fraud_scorer_state_entries', kind), bytes: value('fraud_scorer_state_bytes', kind) }));
  return { bytes: kinds.reduce((sum, kind) => sum + kind.bytes, 0), kinds };
}

function walBytes(dataDir: string): number {
  try {
    return statSync(join(dataDir, 'fraud-scorer.db-wal')).size;
  } catch {
    return 0;
  }
}

async function main(): Promise<void> {
  if (kRate === 0 && !hasWrk()) throw new Error('this benchmark needs wrk (apt-get install wrk)');
  const server = await startFraudScorer();
  let loadSummary = '';
  let loadEnded: Promise<unknown>;
  if (kRate > 0) {
    // Each run makes the next bodies of the mix's sequence; between runs (making them, starting the
    // generator) nothing is offered: the bench prints how long that was in all.
    const load = realisticLoad(server, kRate);
    loadEnded = (async () => {
      let requests = 0;
      let ok = 0;
      let other = 0;
      let lost = 0;
      let offeredMs = 0;
      const loadStarted = Date.now();
      for (let left = kWarmupSeconds + kSeconds; left > 0; left -= kRunSeconds) {
        const seconds = Math.min(kRunSeconds, left);
        const result = await load(seconds);
        offeredMs += seconds * 1000;
        for (const status of result.status) {
          requests++;
          if (status >= 200 && status < 300) ok++;
          else if (status >= 300) other++;
          else lost++;
        }
      }
      loadSummary = `open loop at ${kRate}/s in runs of ${kRunSeconds} s: ${requests} requests, ${ok} answered 2xx, ${other} other answers, ` +
        `${lost} timed out or not sent; ${((Date.now() - loadStarted - offeredMs) / 1000).toFixed(1)} s between runs in all`;
    })();
  } else {
    const script = fileURLToPath(new URL('../../../bench/http/events.lua', import.meta.url));
    const load = spawn('wrk', ['-t1', '-c64', `-d${kWarmupSeconds + kSeconds}s`, '-s', script, server.url], {
      env: { ...process.env, FS_KEY: server.liveKey },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    load.stdout.on('data', (chunk: Buffer) => (loadSummary += chunk.toString()));
    loadEnded = new Promise((resolve) => load.once('exit', resolve));
  }
  const samples: Array<{ second: number; rssMiB: number; events: number }> = [];
  const started = Date.now();
  while (Date.now() - started < (kWarmupSeconds + kSeconds) * 1000) {
    await new Promise((resolve) => setTimeout(resolve, kSampleMs));
    const rss = await metric(server.url, 'fraud_scorer_process_resident_memory_bytes');
    const heap = await metric(server.url, 'fraud_scorer_nodejs_heap_size_used_bytes');
    const external = await metric(server.url, 'fraud_scorer_nodejs_external_memory_bytes');
    const keys = await metric(server.url, 'fraud_scorer_velocity_keys');
    const events = await metric(server.url, 'fraud_scorer_writer_writes_total');
    const wal = walBytes(server.dataDir);
    const state = await stateByKind(server.url);
    samples.push({ second: Math.round((Date.now() - started) / 1000), rssMiB: Math.round(rss / 1048576), events });
    console.log(
      `${String(samples.at(-1)!.second).padStart(4)} s   RSS ${String(samples.at(-1)!.rssMiB).padStart(5)} MiB   heap ${mib(heap)}   external ${mib(external)}   ` +
        `velocity keys ${keys}   WAL ${mib(wal)}   ${events} writes committed\n        state ${mib(state.bytes)}: ` +
        state.kinds.map(({ kind, entries, bytes }) => `${kind} ${entries} (${entries === 0 ? '–' : (bytes / entries).toFixed(1)} B each)`).join(', '),
    );
  }
  await loadEnded;
  await server.stop();
  const afterWarmup = samples.filter((sample) => sample.second > kWarmupSeconds);
  const first = afterWarmup[0]!;
  const peak = Math.max(...afterWarmup.map((sample) => sample.rssMiB));
  const last = afterWarmup.at(-1)!;
  console.log(`\nafter warm-up: first ${first.rssMiB} MiB, last ${last.rssMiB} MiB, peak ${peak} MiB: growth ${(((peak - first.rssMiB) / first.rssMiB) * 100).toFixed(1)}% over ${last.events - first.events} writes`);
  console.log(kRate > 0 ? loadSummary : loadSummary.split('\n').filter((line) => /Requests\/sec|requests in/.test(line)).join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
