// CPU per event, by thread (issue 10): POST /v1/events against a bare uWebSockets.js handler in the
// same run, both driven by wrk with the same Lua script, for the project's mix and the harsh mix
// (FS_HARSH=1: every event with an account brings a new device and a new card), sync and async.
//
// For each run: utime + stime of every thread of the process (/proc/<pid>/task/*/stat) before and
// after a fixed wrk run, per role (the server announces its threads, FS_ANNOUNCE_THREADS=1),
// divided by the events answered 2xx, and how often each thread slept (voluntary context switches,
// from /proc/<pid>/task/*/status: each is a wake-up); events/s, p50 and p99 from wrk; the
// database's growth per event (logical size and files); the bytes the writer thread wrote (the WAL)
// and the checkpointer (copies into the database file) per event; each thread's busy share of a
// core and the machine's idle cores over the run (/proc/stat), which say what bounds the rate; the
// events per rule-pool batch and per writer commit (the server's /metrics). Async runs also wait
// for the background queue to drain and give the CPU per event including the drain. One fresh
// server per mix.
//   node dist/bench/http/cpu.bench.js     (after npm run build; BENCH_SECONDS, BENCH_WARMUP_SECONDS,
//                                          BENCH_MIXES=realistic,harsh  BENCH_MODES=sync,async, BENCH_CONNECTIONS)
//   BENCH_DATA_DIR: a data dir built by bench/state/start.bench.ts (START_BUILD_ONLY=1); each mix's
//     server runs on a copy of it (made in the same file system, removed after), so that the figures
//     are those of a database that already holds millions of events and the accounts of the mix.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { dataSize, type DataSize } from '../_helpers/data-files.js';
import type { LoadFigures } from '../_helpers/load.js';
import { drainAsyncQueue, metric } from '../_helpers/metrics.js';
import { idleCores, residentBytes, sampleMachine, sampleProcess, usageByRole, type ProcessSample, type RoleUsage } from '../_helpers/proc.js';
import { startBareUws, startFraudScorer, startFraudScorerOn, type Started, type StartedServer } from '../_helpers/processes.js';
import { hasWrk, runWrk } from '../_helpers/wrk.js';

const kSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const kWarmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
/** wrk's connections (BENCH_CONNECTIONS): past the door's OVERLOAD_EVENTS_IN_FLIGHT (64) the server refuses some, unless that is raised in this environment too. */
const kConnections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const kMixes: Record<string, Record<string, string>> = { realistic: {}, harsh: { FS_HARSH: '1' } };
const kSelectedMixes = (process.env.BENCH_MIXES ?? 'realistic,harsh').split(',');
const kModes = (process.env.BENCH_MODES ?? 'sync,async').split(',');
const kDataDir = process.env.BENCH_DATA_DIR ?? '';
/** Rows in this order; any other role the server announces follows. */
const kRoleOrder = ['http', 'rules', 'writer', 'checkpointer', 'compile', 'other', 'exited'];
const kNoRoles: ReadonlyMap<number, string> = new Map();

interface Measured {
  readonly figures: LoadFigures;
  /** Requests answered 2xx. */
  readonly events: number;
  readonly usage: Map<string, RoleUsage>;
  /** Cores of the machine idle during the run, on average (the server's, wrk's and everything else's time aside). */
  readonly idleCores: number;
  /** The server's hops during the run, from its /metrics: rule-pool batches and writer commits (absent for the bare handler). */
  readonly hops?: { readonly ruleBatches: number; readonly commits: number };
}

const kCores = availableParallelism();

async function hopCounts(url: string): Promise<[number, number]> {
  return [await metric(url, 'fraud_scorer_rule_pool_batches_total'), await metric(url, 'fraud_scorer_writer_commits_total')];
}

function pidOf(child: ChildProcess): number {
  return child.pid!;
}

/** `server`: the target has /metrics (ours), whose hop counts are read before and after. */
async function measure(target: Started, roles: ReadonlyMap<number, string>, env: Record<string, string>, server = false): Promise<Measured & { before: ProcessSample }> {
  const pid = pidOf(target.child);
  const hopsBefore = server ? await hopCounts(target.url) : null;
  const machineBefore = sampleMachine();
  const before = sampleProcess(pid);
  const figures = await runWrk({ url: target.url, script: 'events.lua', env, connections: kConnections, seconds: kSeconds });
  const usage = usageByRole(pid, before, sampleProcess(pid), roles);
  const idle = idleCores(machineBefore, sampleMachine(), kCores);
  const hopsAfter = hopsBefore !== null ? await hopCounts(target.url) : null;
  const hops = hopsBefore !== null && hopsAfter !== null ? { ruleBatches: hopsAfter[0] - hopsBefore[0], commits: hopsAfter[1] - hopsBefore[1] } : undefined;
  return { figures, events: figures.requests - figures.non2xx, usage, idleCores: idle, hops, before };
}

function total(usage: Map<string, RoleUsage>): number {
  let sum = 0;
  for (const { cpuUs } of usage.values()) sum += cpuUs;
  return sum;
}

const kWidth = 12;
const num = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '–').padStart(kWidth);

function printRun(title: string, bare: Measured, ours: Measured, oursWithDrain?: Measured): void {
  const roles = [...new Set([...kRoleOrder, ...ours.usage.keys(), ...bare.usage.keys()])].filter((role) => ours.usage.has(role) || bare.usage.has(role));
  const columns = oursWithDrain ? ['bare', 'ours', 'ours+drain'] : ['bare', 'ours'];
  const runs = oursWithDrain ? [bare, ours, oursWithDrain] : [bare, ours];
  console.log(`\n${title}`);
  console.log(`${'CPU µs per event'.padEnd(22)}${columns.map((name) => name.padStart(kWidth)).join('')}`);
  for (const role of roles) {
    const cells = runs.map((run) => num((run.usage.get(role)?.cpuUs ?? NaN) / run.events));
    console.log(`  ${role.padEnd(20)}${cells.join('')}`);
  }
  console.log(`  ${'total'.padEnd(20)}${runs.map((run) => num(total(run.usage) / run.events)).join('')}`);
  console.log(`${'sleeps per event'.padEnd(22)}${columns.map((name) => name.padStart(kWidth)).join('')}`);
  for (const role of roles) console.log(`  ${role.padEnd(20)}${runs.map((run) => num((run.usage.get(role)?.sleeps ?? NaN) / run.events, 2)).join('')}`);
  // Which thread bounds the rate: one near 100 % while the machine has cores idle is the bound.
  console.log(`${'% of a core busy'.padEnd(22)}${['bare', 'ours'].map((name) => name.padStart(kWidth)).join('')}`);
  for (const role of roles) console.log(`  ${role.padEnd(20)}${[bare, ours].map((run) => num(((run.usage.get(role)?.cpuUs ?? NaN) / (run.figures.seconds * 1e6)) * 100, 0)).join('')}`);
  console.log(`${`machine: idle cores (of ${kCores})`.padEnd(22)}${[bare, ours].map((run) => num(run.idleCores, 2)).join('')}`);
  console.log(`${'events/s (2xx)'.padEnd(22)}${[bare, ours].map((run) => num(run.events / run.figures.seconds, 0)).join('')}`);
  console.log(`${'p50 ms'.padEnd(22)}${[bare, ours].map((run) => num(run.figures.p50Ms, 2)).join('')}`);
  console.log(`${'p99 ms'.padEnd(22)}${[bare, ours].map((run) => num(run.figures.p99Ms, 2)).join('')}`);
  console.log(`${'non-2xx / errors'.padEnd(22)}${[bare, ours].map((run) => `${run.figures.non2xx} / ${run.figures.errors}`.padStart(kWidth)).join('')}`);
  console.log(`ours / bare (events/s): ${(ours.events / ours.figures.seconds / (bare.events / bare.figures.seconds)).toFixed(3)}`);
  // Sync only: an async run's batches score what was accepted earlier, not its own events.
  const hops = oursWithDrain === undefined ? ours.hops : undefined;
  if (hops !== undefined) console.log(`events per rule-pool batch ${(ours.events / hops.ruleBatches).toFixed(1)}, per writer commit ${(ours.events / hops.commits).toFixed(1)}`);
}

function printGrowth(events: number, before: DataSize, after: DataSize, usage: Map<string, RoleUsage>): void {
  const per = (bytes: number): string => `${(bytes / events).toFixed(0)} B`;
  const files = after.dbFile + after.walFile - before.dbFile - before.walFile;
  console.log(
    `per event: database growth ${per(after.logical - before.logical)} (files db+wal ${per(files)}); ` +
      `WAL written by the writer ${per(usage.get('writer')?.wchar ?? 0)}; copied by the checkpointer ${per(usage.get('checkpointer')?.wchar ?? 0)}`,
  );
}

/** A fresh server, or one on a copy of BENCH_DATA_DIR (the server removes the copy when stopped). */
async function startServer(env: Record<string, string>): Promise<StartedServer> {
  if (kDataDir === '') return startFraudScorer(env);
  const { liveKey, events } = JSON.parse(readFileSync(join(kDataDir, 'start-bench.json'), 'utf8')) as { liveKey: string; events: number };
  const copy = mkdtempSync(join(dirname(kDataDir), 'fraud-scorer-bench-copy-'));
  rmSync(copy, { recursive: true });
  const copied = spawnSync('cp', ['-a', kDataDir, copy], { stdio: 'inherit' });
  if (copied.status !== 0) throw new Error(`could not copy ${kDataDir}`);
  console.log(`server on a copy of ${kDataDir} (${events} events built there)`);
  return startFraudScorerOn(copy, liveKey, env);
}

async function runMix(mix: string, bare: Started): Promise<void> {
  const mixEnv = kMixes[mix];
  if (mixEnv === undefined) throw new Error(`unknown mix ${mix}`);
  const server = await startServer({ FS_ANNOUNCE_THREADS: '1' });
  try {
    const env = { ...mixEnv, FS_KEY: server.liveKey };
    // Warm-up: JIT, the rule workers, SQLite's page caches, the accounts of the mix.
    await runWrk({ url: bare.url, script: 'events.lua', env, connections: kConnections, seconds: 2 });
    const warm = await runWrk({ url: server.url, script: 'events.lua', env, connections: kConnections, seconds: kWarmupSeconds });
    let stored = warm.requests - warm.non2xx;
    for (const mode of kModes) {
      const modeEnv = mode === 'async' ? { ...env, FS_ASYNC: '1' } : env;
      const bareRun = await measure(bare, kNoRoles, modeEnv);
      const sizeBefore = dataSize(server.dataDir);
      const ours = await measure(server, server.threads, modeEnv, true);
      const title = `${mix} mix, ${mode}: ${kSeconds} s, ${kConnections} connections, ${stored} events stored before`;
      if (mode === 'async') {
        const drainSeconds = await drainAsyncQueue(server.url);
        const withDrain = { ...ours, usage: usageByRole(pidOf(server.child), ours.before, sampleProcess(pidOf(server.child)), server.threads) };
        printRun(title, bareRun, ours, withDrain);
        console.log(`async queue drained ${drainSeconds.toFixed(1)} s after the load stopped: ${(ours.events / (ours.figures.seconds + drainSeconds)).toFixed(0)} events/s accepted and scored`);
        printGrowth(ours.events, sizeBefore, dataSize(server.dataDir), withDrain.usage);
      } else {
        printRun(title, bareRun, ours);
        printGrowth(ours.events, sizeBefore, dataSize(server.dataDir), ours.usage);
      }
      stored += ours.events;
    }
    const memory = residentBytes(pidOf(server.child));
    console.log(`\nserver resident set at the end of the ${mix} runs: ${(memory.rss / 1048576).toFixed(0)} MiB (peak ${(memory.peak / 1048576).toFixed(0)} MiB), ${stored} events stored`);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  if (!hasWrk()) throw new Error('this benchmark needs wrk (apt-get install wrk)');
  console.log(`CPU per event by thread: wrk, 1 thread, ${kConnections} connections, ${kSeconds} s per run, on the same machine as the servers`);
  const bare = await startBareUws();
  try {
    for (const mix of kSelectedMixes) await runMix(mix, bare);
  } finally {
    await bare.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
