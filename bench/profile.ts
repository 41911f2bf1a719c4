// By hand: where a sync run's CPU goes, by thread and area (issue 10). Two servers, one after the
// other, each warmed up with wrk and then driven for PROFILE_SECONDS (15) with the mix of
// bench/http/events.lua (PROFILE_HARSH=1: the harsh mix) after PROFILE_WARMUP_SECONDS (5) of warm-up
// (the mix's caches of phone analyses and keyed hashes fill in about a minute):
//   1. `node --perf-basic-prof` under `perf record -g` (Debian package linux-perf) for the measured
//      run only: the top 25 symbols by self time, and CPU per event by thread × area;
//   2. `node --cpu-prof` (every thread: workers inherit the flag): the top 10 JavaScript functions
//      by self time per thread, over the server's whole life (start and warm-up included).
// Profiles go to PROFILE_DIR (default: a new directory under the system temp dir), never into the
// clone; the perf map files V8 writes to /tmp are removed at the end.
//   node dist/bench/profile.js     (after npm run build; perf needs perf_event_paranoid ≤ 1 or root)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summariseCpuProfile } from './_helpers/cpu-profile.js';
import { readPerfSamples } from './_helpers/perf-samples.js';
import { startFraudScorer, type StartedServer } from './_helpers/processes.js';
import { runWrk } from './_helpers/wrk.js';
import type { LoadFigures } from './_helpers/load.js';

const kSeconds = Number(process.env.PROFILE_SECONDS ?? 15);
const kWarmupSeconds = Number(process.env.PROFILE_WARMUP_SECONDS ?? 5);
const kFrequency = 499;
const kMixEnv: Record<string, string> = process.env.PROFILE_HARSH === '1' ? { FS_HARSH: '1' } : {};
const kOut = process.env.PROFILE_DIR ?? mkdtempSync(join(tmpdir(), 'fraud-scorer-profile-'));
mkdirSync(kOut, { recursive: true });

async function warmAndLoad(server: StartedServer, during?: () => Promise<void>): Promise<LoadFigures> {
  const env = { ...kMixEnv, FS_KEY: server.liveKey };
  await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: kWarmupSeconds });
  // wrk runs a second longer than the profile, so the profile sees only steady load.
  const [figures] = await Promise.all([runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: kSeconds + 1 }), during?.()]);
  return figures;
}

function perfRecord(pid: number, output: string): Promise<void> {
  const perf = spawn('perf', ['record', '-g', '-F', String(kFrequency), '-p', String(pid), '-o', output, '--', 'sleep', String(kSeconds)], { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    perf.once('error', reject);
    perf.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`perf record exited with ${code}`))));
  });
}

async function perfProfile(): Promise<void> {
  const server = await startFraudScorer({ FS_ANNOUNCE_THREADS: '1' }, ['--perf-basic-prof']);
  const perfData = join(kOut, 'perf.data');
  let figures: LoadFigures;
  try {
    figures = await warmAndLoad(server, () => new Promise((resolve) => setTimeout(resolve, 500)).then(() => perfRecord(server.child.pid!, perfData)));
  } catch (error) {
    await server.stop();
    rmSync(join(tmpdir(), `perf-${server.child.pid}.map`), { force: true });
    throw error;
  }
  await server.stop();
  // perf script needs V8's map of JIT code; removed once read.
  const summary = readPerfSamples(perfData);
  rmSync(join(tmpdir(), `perf-${server.child.pid}.map`), { force: true });
  const eventsInProfile = ((figures.requests - figures.non2xx) / figures.seconds) * kSeconds;
  const usPerSample = 1e6 / kFrequency;
  console.log(`perf: ${summary.samples} samples at ${kFrequency} Hz over ${kSeconds} s, ${figures.requestsPerSecond.toFixed(0)} events/s (${perfData})\n`);
  console.log('Top 25 symbols, self time (% of all samples of the server):');
  for (const [symbol, count] of [...summary.symbols].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${((100 * count) / summary.samples).toFixed(1).padStart(6)}%  ${symbol}`);
  }
  const roleAreas = new Map<string, Map<string, number>>();
  for (const [tid, areas] of summary.threadAreas) {
    const role = server.threads.get(tid) ?? (tid === server.child.pid ? 'http' : 'other');
    const sum = roleAreas.get(role) ?? new Map<string, number>();
    for (const [area, count] of areas) sum.set(area, (sum.get(area) ?? 0) + count);
    roleAreas.set(role, sum);
  }
  console.log('\nCPU µs per event by thread and area (perf samples × sampling period / events in the profile):');
  for (const [role, areas] of [...roleAreas].sort((a, b) => total(b[1]) - total(a[1]))) {
    console.log(`  ${role}: ${((total(areas) * usPerSample) / eventsInProfile).toFixed(1)} µs`);
    for (const [area, count] of [...areas].sort((a, b) => b[1] - a[1])) {
      const us = (count * usPerSample) / eventsInProfile;
      if (us >= 0.5) console.log(`      ${us.toFixed(1).padStart(7)}  ${area}`);
    }
  }
}

function total(areas: Map<string, number>): number {
  let sum = 0;
  for (const count of areas.values()) sum += count;
  return sum;
}

async function jsProfiles(): Promise<void> {
  const dir = join(kOut, 'cpuprofile');
  mkdirSync(dir, { recursive: true });
  const server = await startFraudScorer({}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  try {
    await warmAndLoad(server);
  } finally {
    await server.stop();
  }
  console.log(`\n--cpu-prof, top 10 functions by self time per thread (sampled stacks, whole life of the server; ${dir}):`);
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const summary = summariseCpuProfile(join(dir, file));
    console.log(`  ${summary.role} (${(summary.busyUs / 1e6).toFixed(1)} s sampled, waiting excluded):`);
    for (const [name, us] of summary.functions.slice(0, 10)) {
      console.log(`    ${((100 * us) / summary.busyUs).toFixed(1).padStart(5)}%  ${name}`);
    }
  }
}

async function main(): Promise<void> {
  console.log(`Profiles of a sync run (${process.env.PROFILE_HARSH === '1' ? 'harsh' : 'realistic'} mix), written to ${kOut}\n`);
  await perfProfile();
  await jsProfiles();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
