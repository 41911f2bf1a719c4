// A server's start at scale, measured (issue 10: "start with 10M stored events and 1M accounts
// (and 5M links) in ≤ 30 s"; until now only estimated from the per-row loads). After `npm run build`:
//
//   node dist/bench/state/start.bench.js                      (~1 min at the defaults here)
//     START_EVENTS (1,000,000)  START_ACCOUNTS (100,000)  START_LINKS (500,000; links between two
//     accounts, each two rows of account_links)
//     START_DATA_DIR: a data dir built by this bench is used as it is (build a big one once);
//       one that does not exist yet is built there and kept; not given: a temporary dir, removed.
//     START_COLD (1): before the first start, the database file is dropped from the page cache
//       (dd oflag=nocache, this file only), so that start reads from disk; 0 leaves the cache.
//     START_PHASES (1): the start's loads timed one by one in this process too; 0 skips them.
//     START_BUILD_ONLY (0): 1 builds the data dir and stops (build under nice, time the starts without).
//     START_PROFILE (1): 0 skips the last start under --cpu-prof.
//   Full scale (a 12 GB file, built in ~8 min on a quiet box; the starts ~4 min; under nice, since other benchmarks run here):
//     START_EVENTS=10000000 START_ACCOUNTS=1000000 START_LINKS=5000000 START_DATA_DIR=<dir on a big disk> \
//       START_BUILD_ONLY=1 nice -n 10 node dist/bench/state/start.bench.js
//     START_DATA_DIR=<the same dir> node dist/bench/state/start.bench.js      (then remove the dir)
//
// 1. The data dir, written straight into SQLite through the project's schema (openDatabase and
//    every migration, a bootstrapped tenant and its install secret: bench/_helpers/store.ts):
//    START_EVENTS judged events of the load mix spread over the 7 days before now (backtest.bench.ts
//    generate: payload, compact result, recorded signals as the pipeline stores them) and the runs
//    of their event ids the writer keeps beside them (scoring/event-id-runs.ts); START_ACCOUNTS
//    accounts (user-N, the external ids the load mix uses; each row with a list of event seqs as
//    the bulk writes leave it, 34 bytes on average) with their project, their email, phone,
//    device and IP as account_signals rows hashed by storedIdentifiers under the install secret
//    (so the server finds them for a new event), and links from shared values: households of four
//    share a device, groups of eight an IP (5 links per account by default); then the derived stamp
//    past every event, as a clean stop leaves it: the start replays nothing.
// 2. The real server on it (the command line, `serve`), timed from spawn to the `store ready` log
//    line (with its own figures) and to the first 200 of GET /healthz; its resident set, one scored
//    POST /v1/events (the proof that it serves), and its stop (SIGTERM). Started four times: from
//    the tables (no start snapshot), with the file out of the page cache (START_COLD), then warm;
//    then from the snapshot the last stop wrote (scoring/start-snapshot.ts), cold (the database
//    and the snapshot out of the page cache), then warm.
// 3. Where the time goes: the start's loads timed one by one in this process (the same functions
//    as src/main.ts calls), and a third start under `node --cpu-prof`: the HTTP thread's sampled time
//    per phase (the function and all it calls) and its costliest functions.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeSeqs } from '../../src/accounts/event-seqs.js';
import { HotAccounts } from '../../src/accounts/hot-accounts.js';
import { kServerNodeFlags } from '../../src/cli/node-flags.js';
import { writeEventIdRunsOfLog } from '../../src/scoring/event-id-runs.js';
import { EventIds } from '../../src/scoring/event-ids.js';
import { startSnapshotPath } from '../../src/scoring/start-snapshot.js';
import { rebuildVelocity } from '../../src/scoring/velocity-rebuild.js';
import { newId } from '../../src/shared/ids.js';
import { velocityIdentifiers } from '../../src/signals/identifiers.js';
import { analyzeEventPhone } from '../../src/signals/phone.js';
import { storedIdentifiers, type StoredIdentifier } from '../../src/signals/stored-identifiers.js';
import { VelocityWindows } from '../../src/signals/velocity.js';
import { KeyHasher } from '../../src/state/keys.js';
import { databasePath, openDatabase } from '../../src/store/database.js';
import { installSecret } from '../../src/store/install-secret.js';
import { migrate } from '../../src/store/migrate.js';
import type { EventInput } from '../../src/validation/event-input.js';
import { generate } from '../backtests/backtest.bench.js';
import { phaseTimes, summariseCpuProfile } from '../_helpers/cpu-profile.js';
import { dataSize } from '../_helpers/data-files.js';
import { eventMix } from '../_helpers/event-mix.js';
import { kBenchNodeArgs } from '../_helpers/processes.js';
import { createBenchStore, type BenchStore } from '../_helpers/store.js';

const kEvents = Number(process.env.START_EVENTS ?? 1_000_000);
const kAccounts = Number(process.env.START_ACCOUNTS ?? 100_000);
const kLinks = Number(process.env.START_LINKS ?? 500_000);
const kCold = process.env.START_COLD !== '0';
const kPhases = process.env.START_PHASES !== '0';
const kBuildOnly = process.env.START_BUILD_ONLY === '1';
const kProfile = process.env.START_PROFILE !== '0';
const kCli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** Written last into a data dir this bench built: its scale and key. A dir without it is not used. */
const kMarkerFile = 'start-bench.json';
const kDayMs = 86_400_000;
const kAccountBatch = 10_000;
/** How often /healthz is tried while the server starts, and for how long at most. */
const kPollMs = 20;
const kStartTimeoutMs = 600_000;

const count = (n: number): string => n.toLocaleString('en-US');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(0)} MiB`;

interface Built {
  readonly events: number;
  readonly accounts: number;
  readonly links: number;
  readonly signals: number;
  readonly liveKey: string;
  readonly builtAt: string;
}

/**
 * How accounts share values so that there are about `links` links: a device per household of
 * `device` (device - 1 links per account, halved: each link has two accounts), and an IP per group
 * of `ip` for the rest. 1M accounts, 5M links: households of 4 (1.5 M), IP groups of 8 (3.5 M).
 */
function sharing(accounts: number, links: number): { device: number; ip: number } {
  const perAccount = links / accounts;
  if (perAccount <= 1.5) return { device: Math.max(1, Math.round(2 * perAccount + 1)), ip: 1 };
  return { device: 4, ip: Math.max(1, Math.round(2 * (perAccount - 1.5) + 1)) };
}

/** Account `i` as an event of it would show it: the values the server hashes into account_signals. */
function profileOf(i: number, device: number, ip: number): EventInput {
  const group = Math.floor(i / ip);
  return {
    event_id: `profile-${i}`,
    event_type: 'login',
    external_account_id: `user-${i}`,
    // Email and phone as bench/_helpers/event-mix.ts writes them for account i; IPs in a range the mix does not use.
    user: { email: `user${i}@example${i % 7}.com`, phone: `+4915${String(10_000_000 + i * 37).padStart(9, '0')}`, country: 'DE' },
    context: { ip: `172.${16 + ((group >> 16) & 15)}.${(group >> 8) & 255}.${group & 255}`, fp_id: `fp_household_${Math.floor(i / device)}` },
  } as unknown as EventInput;
}

/**
 * Writes the accounts, their project, signal rows and links in each table's key order (an
 * account's rows in the order of its random acc_ id), as the writer's bulk writes would leave them.
 */
function writeAccounts(store: BenchStore, ids: readonly string[], now: number): { signals: number; links: number } {
  const { db, secret, bootstrap } = store;
  const tenantId = bootstrap.tenant.tenant_id;
  const projectId = bootstrap.live.project_id;
  const projects = `,${projectId},`;
  const { device, ip } = sharing(ids.length, kLinks);
  // Times are functions of the account's number, so both rows of a link get the same ones.
  const createdAt = (i: number): number => now - (30 + ((i * 7919) % 370)) * kDayMs;
  const lastSeenAt = (i: number): number => now - 3_600_000 - ((i * 104_729) % (7 * kDayMs));
  const valuesOf = (i: number): StoredIdentifier[] => {
    const event = profileOf(i, device, ip);
    return storedIdentifiers(event, analyzeEventPhone(event), secret, velocityIdentifiers(event));
  };
  const insertAccount = db.prepare(
    `INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews, fraud_confirmed, counted_order, event_seqs)
     VALUES (?, ?, 'live', ?, ?, ?, ?, ?, ?, 0, 0, ?)`,
  );
  // The open list of its events' seqs (migration 17) as a row holds it between two moves to
  // account_event_seqs: 1 to 16 seqs of a ten-million-event log (4-byte varints), 34 bytes on average.
  const eventSeqsOf = (i: number): Buffer =>
    encodeSeqs(Array.from({ length: 1 + (i % 16) }, (_, k) => 5_000_000 + ((i * 31 + k * 7919) % 5_000_000)));
  const insertProject = db.prepare('INSERT INTO account_projects (account_id, project_id, first_seen_at) VALUES (?, ?, ?)');
  const insertSignal = db.prepare(
    `INSERT INTO account_signals (account_id, signal_type, signal_hash, tenant_id, environment, masked, first_seen_s, last_seen) VALUES (?, ?, ?, ?, 'live', ?, ?, ?)`,
  );
  const insertLink = db.prepare(
    `INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const order = Array.from(ids.keys()).sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
  let signals = 0;
  let linkRows = 0;
  const write = db.transaction((from: number, to: number) => {
    for (let k = from; k < to; k++) {
      const i = order[k]!;
      const id = ids[i]!;
      insertAccount.run(id, tenantId, `user-${i}`, createdAt(i), lastSeenAt(i), 1 + (i % 40), i % 29 === 0 ? 1 : 0, i % 11 === 0 ? 1 : 0, eventSeqsOf(i));
      insertProject.run(id, projectId, createdAt(i));
      const values = valuesOf(i).sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
      for (const value of values) insertSignal.run(id, value.type, value.hash, tenantId, value.masked, Math.floor(createdAt(i) / 1000), lastSeenAt(i));
      signals += values.length;
      // The other accounts of its household (device) and IP group, by link type then acc_ id.
      const maskOf = (type: string): string => values.find((value) => value.type === type)!.masked;
      const links: Array<[string, number]> = [];
      const household = Math.floor(i / device) * device;
      for (let j = household; j < Math.min(ids.length, household + device); j++) if (j !== i) links.push(['fp', j]);
      const group = Math.floor(i / ip) * ip;
      for (let j = group; j < Math.min(ids.length, group + ip); j++) if (j !== i) links.push(['ip_24h', j]);
      links.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : ids[a[1]]! < ids[b[1]]! ? -1 : 1));
      for (const [type, j] of links) {
        insertLink.run(id, type, ids[j], `user-${j}`, projects, maskOf(type === 'ip_24h' ? 'ip' : type), Math.max(createdAt(i), createdAt(j)), Math.max(lastSeenAt(i), lastSeenAt(j)));
      }
      linkRows += links.length;
    }
  });
  for (let from = 0; from < order.length; from += kAccountBatch) write(from, Math.min(order.length, from + kAccountBatch));
  return { signals, links: linkRows / 2 };
}

/** Builds the data dir (see the header); answers what the marker file records. */
function build(dir: string | undefined): { dataDir: string; built: Built } {
  const store = createBenchStore(dir);
  const { db } = store;
  const now = Date.now();
  const ids = Array.from({ length: kAccounts }, () => newId('acc'));
  // The load mix's accounts are user-0 … user-19999: their events name the accounts made here.
  const accountIdOf = (external: string): string => ids[Number(external.slice('user-'.length))] ?? `acc_bench_${external}`;
  let started = performance.now();
  generate(store, kEvents, accountIdOf);
  // The runs of event ids the writer keeps beside the log (scoring/event-id-runs.ts).
  writeEventIdRunsOfLog(db);
  started = performance.now();
  const { signals, links } = writeAccounts(store, ids, now);
  // The stamp past every stored event, as a clean stop leaves it: nothing to replay at start. The
  // events' scored_order stays NULL, as in a store that was scoring before migration 013.
  db.prepare('UPDATE derived_stamp SET scored_order = (SELECT count(*) FROM events), from_seq = (SELECT coalesce(max(seq), 0) + 1 FROM events) WHERE id = 1').run();
  db.pragma('wal_checkpoint(TRUNCATE)');
  console.log(`wrote ${count(kAccounts)} accounts, ${count(signals)} signal rows and ${count(links)} links (${count(links * 2)} rows of account_links) in ${seconds(performance.now() - started)}`);
  db.close();
  const built: Built = {
    events: kEvents, accounts: kAccounts, links, signals,
    liveKey: store.bootstrap.keys.find((entry) => entry.name === 'live_secret')!.key,
    builtAt: new Date(now).toISOString(),
  };
  writeFileSync(join(store.dataDir, kMarkerFile), `${JSON.stringify(built)}\n`, { mode: 0o600 });
  return { dataDir: store.dataDir, built };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function statusKiB(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]);
}

/** The share of the file in the page cache (fincore), or null when it cannot be told. */
function cachedShare(path: string): number | null {
  const out = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES,SIZE', path], { encoding: 'utf8' });
  const [resident, size] = (out.stdout ?? '').trim().split(/\s+/).map(Number);
  return out.status === 0 && size! > 0 ? resident! / size! : null;
}

/** Drops the file's pages from the page cache (POSIX_FADV_DONTNEED through dd): this file only. */
function evict(path: string): void {
  spawnSync('dd', [`of=${path}`, 'oflag=nocache', 'conv=notrunc,fdatasync', 'count=0', 'status=none']);
}

interface StartFigures {
  /** From spawn, ms. */
  readonly storeReadyMs: number;
  readonly listeningMs: number;
  readonly healthzMs: number;
  /** The fields of the `store ready` line. */
  readonly storeReady: Record<string, unknown>;
  readonly rssKiB: number;
  readonly peakKiB: number;
  readonly post: { status: number; ms: number; body: string };
  readonly stopMs: number;
  /** The stop's `start snapshot written` line (bytes, ms), if it wrote one. */
  readonly snapshotWritten: Record<string, unknown> | null;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** One start of the real server on `dataDir`, timed (see the header), then its stop by its pid. */
async function timeStart(dataDir: string, liveKey: string, nodeArgs: string[] = []): Promise<StartFigures> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawned = performance.now();
  const child = spawn(process.execPath, [...kServerNodeFlags, ...kBenchNodeArgs, ...nodeArgs, kCli, 'serve', '--port', String(port), '--data-dir', dataDir], {
    env: { ...process.env, RATE_LIMIT_PER_ROUTE: '100000000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let storeReadyMs = NaN;
  let listeningMs = NaN;
  let storeReady: Record<string, unknown> = {};
  let snapshotWritten: Record<string, unknown> | null = null;
  let output = '';
  let partial = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      output += `${line}\n`;
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.message === 'store ready') {
        storeReadyMs = performance.now() - spawned;
        storeReady = entry;
      } else if (entry.message === 'start snapshot written') {
        snapshotWritten = entry;
      } else if (entry.level === 'warn' || entry.level === 'error') {
        console.log(`  server ${entry.level}: ${line}`);
      }
    }
  });
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (Number.isNaN(listeningMs) && output.includes('listening on')) listeningMs = performance.now() - spawned;
  });
  let gone = false;
  void exited(child).then(() => (gone = true));
  try {
    // Tried from the spawn on: refused until the socket listens.
    let healthzMs = NaN;
    while (Number.isNaN(healthzMs)) {
      if (gone) throw new Error(`the server exited while starting: ${output}`);
      if (performance.now() - spawned > kStartTimeoutMs) throw new Error(`no 200 from /healthz ${seconds(kStartTimeoutMs)} after the spawn: ${output}`);
      try {
        const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
        await response.arrayBuffer();
        if (response.status === 200) healthzMs = performance.now() - spawned;
      } catch {
        // not listening yet
      }
      if (Number.isNaN(healthzMs)) await new Promise((resolve) => setTimeout(resolve, kPollMs));
    }
    const rssKiB = statusKiB(child.pid!, 'VmRSS');
    const peakKiB = statusKiB(child.pid!, 'VmHWM');
    // One event of a stored account (user-5): scored with its stored signals, links and velocity.
    const next = eventMix(5);
    let body = next();
    while (!body.includes('"external_account_id":"user-')) body = next();
    body = body.replace(/"user-\d+"/, '"user-5"');
    const posted = performance.now();
    const response = await fetch(`${url}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' }, body });
    const post = { status: response.status, ms: performance.now() - posted, body: await response.text() };
    const stopping = performance.now();
    child.kill('SIGTERM');
    await exited(child);
    if (child.exitCode !== 0) throw new Error(`the server stopped with ${child.exitCode ?? child.signalCode}: ${output}`);
    return { storeReadyMs, listeningMs, healthzMs, storeReady, rssKiB, peakKiB, post, stopMs: performance.now() - stopping, snapshotWritten };
  } finally {
    if (!gone) {
      child.kill('SIGTERM');
      await exited(child);
    }
  }
}

function report(label: string, figures: StartFigures): void {
  const r = figures.storeReady;
  console.log(`\n${label}:`);
  console.log(`  spawn → store ready ${seconds(figures.storeReadyMs)}, → listening ${seconds(figures.listeningMs)}, → first 200 of /healthz ${seconds(figures.healthzMs)}`);
  console.log(`  store ready: ${count(Number(r.accounts))} accounts, ${count(Number(r.account_signals))} signal rows, ${count(Number(r.account_links))} links loaded in ${count(Number(r.accounts_load_ms))} ms; ` +
    `events replayed ${r.events_replayed}, velocity events rebuilt ${count(Number(r.velocity_events_rebuilt))}, pending async events ${r.pending_async_events}; ` +
    `event ids and velocity ${r.from_snapshot === true ? 'from the start snapshot' : 'from the event log'}`);
  // Every phase time the line gives (accounts_load_ms; later builds may log more).
  console.log(`  phases logged: ${Object.entries(r).filter(([name]) => name.endsWith('_ms')).map(([name, ms]) => `${name} ${count(Number(ms))}`).join(', ')}`);
  console.log(`  resident set after start ${mib(figures.rssKiB * 1024)} (peak ${mib(figures.peakKiB * 1024)})`);
  const data = figures.post.status === 200 ? (JSON.parse(figures.post.body) as { data: Record<string, unknown> }).data : figures.post.body;
  console.log(`  POST /v1/events (account user-5): ${figures.post.status} in ${figures.post.ms.toFixed(0)} ms ${JSON.stringify(data).slice(0, 200)}`);
  const written = figures.snapshotWritten;
  console.log(`  stop (SIGTERM to exit) ${seconds(figures.stopMs)}; ${written === null ? 'no start snapshot written' : `start snapshot written: ${mib(Number(written.bytes))} in ${count(Number(written.ms))} ms`}`);
  if (figures.post.status !== 200) throw new Error('the started server did not score the event');
}

/** The loads of a start, one by one, in this process: the functions src/main.ts calls, in its order. */
function timePhases(dataDir: string): void {
  const rows: Array<{ phase: string; ms: string; rows: string }> = [];
  const timed = <T>(phase: string, work: () => T, rowsOf: (result: T) => string): T => {
    const begin = performance.now();
    const result = work();
    rows.push({ phase, ms: (performance.now() - begin).toFixed(0), rows: rowsOf(result) });
    return result;
  };
  const secret = timed('open, migrations (none to apply), install secret', () => {
    const setup = openDatabase(dataDir);
    migrate(setup);
    const value = installSecret(setup);
    setup.close();
    return value;
  }, () => '');
  const readDb = openDatabase(dataDir, { readonly: true });
  const hasher = new KeyHasher(secret);
  timed('velocity rebuild (last 24 h)', () => rebuildVelocity(readDb, new VelocityWindows(hasher), Date.now()), (n) => `${count(n)} events`);
  timed('accounts, signals, links (HotAccounts.load)', () => HotAccounts.load(readDb, hasher, secret).counts, (c) => `${count(c.accounts)} + ${count(c.signals)} + ${count(c.links)}`);
  timed('event ids (EventIds.load)', () => EventIds.load(readDb, hasher), () => '');
  // AsyncScorer.loadPending's query (its queue is not made here).
  timed('pending async events (query)', () => readDb.prepare(
    `SELECT e.project_id, p.tenant_id, p.environment, e.event_id, e.payload, e.received_at
     FROM events e JOIN projects p ON p.project_id = e.project_id WHERE e.state = 'pending' ORDER BY e.seq`,
  ).all().length, (n) => count(n));
  readDb.close();
  console.log('\nthe start\'s loads one by one, in this process:');
  console.table(rows);
}

/** A start under node --cpu-prof: the HTTP thread's time per phase, its costliest functions, the other threads' time. */
async function profileStart(dataDir: string, liveKey: string): Promise<void> {
  const profileDir = mkdtempSync(join(tmpdir(), 'fraud-scorer-start-prof-'));
  try {
    const figures = await timeStart(dataDir, liveKey, ['--cpu-prof', '--cpu-prof-dir', profileDir]);
    report('start under --cpu-prof (warm; the profiler slows it)', figures);
    const phases: ReadonlyArray<readonly [string, string, RegExp]> = [
      ['migrations', 'migrate', /\/store\/migrate\.js$/],
      ['velocity rebuild', 'rebuildVelocity', /\/scoring\/velocity-rebuild\.js$/],
      ['accounts, signals, links load', 'load', /\/accounts\/hot-accounts\.js$/],
      ['event ids load', 'load', /\/scoring\/event-ids\.js$/],
      ['pending async events', 'loadPending', /\/scoring\/async-scorer\.js$/],
      ['backtests recover', 'recover', /\/analysis\/backtest-service\.js$/],
      ['startService (the rest of it)', 'startService', /\/src\/main\.js$/],
      ['shutdown', 'shutdown', /\/src\/main\.js$/],
      ['the posted event', 'submit', /\/scoring\/event-service\.js$/],
    ];
    for (const file of readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile'))) {
      const path = join(profileDir, file);
      const summary = summariseCpuProfile(path);
      if (summary.role !== 'http' && summary.role !== 'start loads') {
        console.log(`  ${summary.role} thread: ${(summary.busyUs / 1000).toFixed(0)} ms sampled busy`);
        continue;
      }
      const times = [...phaseTimes(path, phases)].sort((a, b) => b[1] - a[1]);
      console.log(`  ${summary.role} thread: ${(summary.busyUs / 1000).toFixed(0)} ms sampled busy (start, one event and stop); by phase:`);
      console.table(times.map(([phase, us]) => ({ phase, ms: (us / 1000).toFixed(0), share: `${((us / summary.busyUs) * 100).toFixed(1)} %` })));
      console.log('  its costliest functions (self time):');
      console.table(summary.functions.slice(0, 15).map(([where, us]) => ({ function: where, ms: (us / 1000).toFixed(0) })));
    }
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const given = process.env.START_DATA_DIR;
  let dataDir: string;
  let built: Built;
  if (given !== undefined && existsSync(join(given, kMarkerFile))) {
    dataDir = given;
    built = JSON.parse(readFileSync(join(given, kMarkerFile), 'utf8')) as Built;
    console.log(`using the data dir built ${built.builtAt} in ${given}`);
  } else {
    if (given !== undefined && existsSync(given) && readdirSync(given).length > 0) {
      throw new Error(`${given} is not empty and holds no ${kMarkerFile}: not a data dir this bench built (remove it, or name another)`);
    }
    const started = performance.now();
    ({ dataDir, built } = build(given));
    console.log(`built the data dir in ${seconds(performance.now() - started)}`);
  }
  if (kBuildOnly) {
    if (given === undefined) rmSync(dataDir, { recursive: true, force: true });
    return;
  }
  try {
    const size = dataSize(dataDir);
    console.log(`scale: ${count(built.events)} events, ${count(built.accounts)} accounts, ${count(built.signals)} signal rows, ${count(built.links)} links; ` +
      `database ${mib(size.dbFile)} (WAL ${mib(size.walFile)})`);
    const db = databasePath(dataDir);
    const snapshot = startSnapshotPath(dataDir);
    const inCache = (): string => `${((cachedShare(db) ?? NaN) * 100).toFixed(0)} % of the database file in the page cache`;
    // From the tables (no snapshot), cold then warm; its stop writes the snapshot. Then from the
    // snapshot (each stop writes the next one), cold — database and snapshot file out of the page
    // cache — then warm.
    rmSync(snapshot, { force: true });
    if (kCold) evict(db);
    report(`start from the tables, ${kCold ? 'cold' : 'as cached'} (${inCache()})`, await timeStart(dataDir, built.liveKey));
    rmSync(snapshot, { force: true });
    report(`start from the tables, warm (${inCache()})`, await timeStart(dataDir, built.liveKey));
    if (kCold) {
      evict(db);
      if (existsSync(snapshot)) evict(snapshot);
    }
    report(`start from the snapshot, ${kCold ? 'cold' : 'as cached'} (${inCache()})`, await timeStart(dataDir, built.liveKey));
    report(`start from the snapshot, warm (${inCache()})`, await timeStart(dataDir, built.liveKey));
    // Later runs of this bench start from the tables first, as the data dir was built.
    rmSync(snapshot, { force: true });
    if (kPhases) timePhases(dataDir);
    if (kProfile) await profileStart(dataDir, built.liveKey);
  } finally {
    if (given === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
