// Backtests (issue 14): how fast a backtest judges 1M stored events again, and what a running
// backtest costs live scoring. By hand (≈ 6 min), after `npm run build`:
//
//   node dist/bench/backtests/backtest.bench.js
//     BENCH_EVENTS (1,000,000)  BENCH_SECONDS (20, each load window)  BENCH_ROUNDS (2)
//
// 1. A data dir made directly (bench/_helpers/store.ts: schema, tenant, the `default` preset as
//    version 1) and filled with BENCH_EVENTS events of the load mix (bench/_helpers/event-mix.ts)
//    spread over the last 7 days, inserted in bulk: each judged by version 1 from its payload and
//    recorded signals exactly as the rule worker judges one (velocity from real windows over the
//    stream, links and account signals synthetic), its compact result and shadow stored as the
//    pipeline stores them. No HTTP: a million events through POST /v1/events would take ~20 min.
// 2. The server on that data dir; a backtest of version 1 over the 7 days, alone, twice: its time,
//    and the check that it reproduces every stored decision and score.
// 3. POST /v1/events throughput (wrk, closed loop, 64 connections, http/events.lua) without a
//    backtest, then while one runs, BENCH_ROUNDS times; CPU of the backtest thread during the load
//    (FS_ANNOUNCE_THREADS=1, /proc). Targets: 1M events in under a minute; live throughput at most
//    10 % lower while a backtest runs.
// 4. At half that capacity (a fixed offered rate): latency without and with a backtest, and the
//    backtest's time beside the traffic.
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { loadRulesetWithEntries, type RuleDefinition, type RuleKind } from '../../compiler/index.js';
import { replayInput, signalGroupsOf } from '../../src/analysis/replay.js';
import { encodeRecordedSignals } from '../../src/scoring/recorded-signals.js';
import { ResultLayout } from '../../src/scoring/result-layout.js';
import { decide } from '../../src/scoring/score-result.js';
import { externalAccountIdOf, velocityIdentifiers } from '../../src/signals/identifiers.js';
import type { AccountSignals, LinkSignals } from '../../src/signals/state-signals.js';
import { VelocityWindows } from '../../src/signals/velocity.js';
import { KeyHasher } from '../../src/state/keys.js';
import type { EventInput } from '../../src/validation/event-input.js';
import { dataSize } from '../_helpers/data-files.js';
import { eventMix, random } from '../_helpers/event-mix.js';
import { sampleProcess, usageByRole } from '../_helpers/proc.js';
import { startFraudScorerOn, type StartedServer } from '../_helpers/processes.js';
import { createBenchStore, type BenchStore } from '../_helpers/store.js';
import { runLoad, type LoadFigures } from '../_helpers/load.js';
import { hasWrk, runWrk } from '../_helpers/wrk.js';

const kEvents = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const kSeconds = Number(process.env.BENCH_SECONDS ?? 20);
const kRounds = Number(process.env.BENCH_ROUNDS ?? 2);
const kDayMs = 86_400_000;
const kBatch = 50_000;

interface Range {
  readonly from: number;
  readonly to: number;
}

/**
 * Fills the store with `count` judged events of the live project; answers their time range.
 * `accountIdOf`: the acc_ id stored for an external account id (a caller that writes the accounts
 * too gives their ids; here no accounts table rows are made).
 */
export function generate(store: BenchStore, count: number, accountIdOf: (external: string) => string = (external) => `acc_bench_${external}`): Range {
  const { db } = store;
  const projectId = store.bootstrap.live.project_id;
  const version = db.prepare('SELECT source, rules, max_possible, policy, signals FROM rulesets WHERE project_id = ? AND version = 1').get(projectId) as
    { source: string; rules: string; max_possible: number; policy: string; signals: string };
  const { evaluate, entries } = loadRulesetWithEntries(version.source);
  const kinds = new Map<string, RuleKind>((JSON.parse(version.rules) as RuleDefinition[]).map((rule) => [rule.rule_id, rule.kind]));
  const layout = new ResultLayout(entries, kinds, version.max_possible);
  const policy = JSON.parse(version.policy) as { review_threshold: number; block_threshold: number };
  const reads = signalGroupsOf(JSON.parse(version.signals) as string[]);
  const insert = db.prepare(
    `INSERT INTO events (project_id, event_id, event_type, account_id, received_at, state, payload, ruleset_version, decision, risk_score, result, shadow, signals, scored_at)
     VALUES (?, ?, ?, ?, ?, 'scored', ?, 1, ?, ?, ?, ?, ?, ?)`,
  );
  const velocity = new VelocityWindows(new KeyHasher(randomBytes(32)));
  const accounts = new Map<string, { created: number; events: number; blocks: number; reviews: number; links: LinkSignals }>();
  const next = eventMix(11);
  const chance = random(7);
  const to = Date.now() - 3_600_000;
  const from = to - 7 * kDayMs;
  const decisions = { allow: 0, review: 0, block: 0 };
  const started = performance.now();
  for (let done = 0; done < count; ) {
    const end = Math.min(count, done + kBatch);
    db.transaction(() => {
      for (let i = done; i < end; i++) {
        const payload = next();
        const event = JSON.parse(payload) as EventInput;
        const at = from + Math.floor((i * (to - from)) / count);
        const ids = velocityIdentifiers(event);
        const external = externalAccountIdOf(event);
        const accountId = external === null ? null : accountIdOf(external);
        const keys = { cardToken: ids.cardToken, ip: ids.ip, accountId, email: ids.email, fp: ids.fp };
        let account: AccountSignals = { known: false };
        let links: LinkSignals = { email: 0, phone: 0, fp: 0, ip_24h: 0, card: 0, total: 0, fraud: 0 };
        if (external !== null) {
          let state = accounts.get(external);
          if (state === undefined) {
            // Most accounts are months old; a few link to others, fewer to fraud.
            const linked = chance() < 0.05;
            state = {
              created: at - Math.floor(chance() * 400 * kDayMs), events: 0, blocks: 0, reviews: 0,
              links: linked ? { email: chance() < 0.5 ? 1 : 0, phone: 0, fp: 1 + Math.floor(chance() * 4), ip_24h: 1, card: chance() < 0.3 ? 2 : 0, total: 2, fraud: chance() < 0.1 ? 1 : 0 } : links,
            };
            accounts.set(external, state);
          }
          account = { known: true, age_days: (at - state.created) / kDayMs, events: state.events, blocks: state.blocks, reviews: state.reviews, fraud_confirmed: false };
          links = state.links;
        }
        const recorded = encodeRecordedSignals({ velocity: velocity.read(projectId, keys, at), links, account });
        const replay = replayInput(payload, recorded, at + 2, reads);
        if (!replay.ok) throw new Error(`generated event not replayable: ${replay.reason}`);
        const outcome = evaluate(replay.input);
        const judged = decide(outcome, policy);
        decisions[judged.decision]++;
        insert.run(
          projectId, event.event_id, event.event_type, accountId, at, payload, judged.decision, judged.risk_score,
          layout.compact(outcome, {}), layout.compactShadow(outcome.shadow), recorded, at + 2,
        );
        velocity.record(projectId, keys, ids.amountCents, at);
        if (external !== null) {
          const state = accounts.get(external)!;
          state.events++;
          if (judged.decision === 'block') state.blocks++;
          if (judged.decision === 'review') state.reviews++;
        }
      }
    })();
    done = end;
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  console.log(`generated ${count.toLocaleString('en-US')} events in ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(decisions)}`);
  return { from, to };
}

async function call(server: StartedServer, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.liveKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await response.json()) as { status: number; data: any; errors: unknown[] };
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed.errors)}`);
  return parsed.data;
}

async function startBacktest(server: StartedServer, range: Range): Promise<string> {
  const started = await call(server, 'POST', '/v1/rules/backtests', { version: 1, from: new Date(range.from).toISOString(), to: new Date(range.to + 1).toISOString() });
  return started.backtest_id as string;
}

async function finished(server: StartedServer, id: string): Promise<any> {
  for (;;) {
    const state = await call(server, 'GET', `/v1/rules/backtests/${id}`);
    if (state.state === 'done' || state.state === 'failed') return state;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main(): Promise<void> {
  if (!hasWrk()) throw new Error('this benchmark needs wrk (apt-get install wrk)');
  const store = createBenchStore();
  const key = store.bootstrap.keys.find((entry) => entry.name === 'live_secret')!.key;
  const range = generate(store, kEvents);
  store.db.close();
  const size = dataSize(store.dataDir);
  console.log(`database: ${(size.dbFile / 1024 / 1024).toFixed(0)} MiB`);

  const server = await startFraudScorerOn(store.dataDir, key, { FS_ANNOUNCE_THREADS: '1' });
  try {
    console.log('\nbacktest alone (version 1 over the 7 days):');
    for (let run = 1; run <= 2; run++) {
      const wall = performance.now();
      const done = await finished(server, await startBacktest(server, range));
      const seconds = (performance.now() - wall) / 1000;
      if (done.state !== 'done') throw new Error(`backtest failed: ${done.error}`);
      const r = done.report;
      const exact = r.unchanged.decision_and_score === r.events_scanned && r.events_replayed === r.events_scanned;
      console.log(
        `  run ${run}: ${r.events_scanned.toLocaleString('en-US')} events in ${(r.duration_ms / 1000).toFixed(1)} s on its thread (${seconds.toFixed(1)} s from POST to done): ` +
          `${Math.round(r.events_scanned / (r.duration_ms / 1000)).toLocaleString('en-US')} events/s; every stored decision and score reproduced: ${exact}`,
      );
    }

    const env = { FS_KEY: server.liveKey };
    await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: 5 }); // warm-up
    console.log(`\nPOST /v1/events, wrk 64 connections, ${kSeconds} s windows:`);
    const baseline: number[] = [];
    const loaded: number[] = [];
    for (let round = 1; round <= kRounds; round++) {
      const alone = await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: kSeconds });
      baseline.push(alone.requestsPerSecond);
      console.log(`  round ${round}, no backtest:      ${alone.requestsPerSecond.toFixed(0)} events/s  p50 ${alone.p50Ms.toFixed(1)} ms  p99 ${alone.p99Ms.toFixed(1)} ms  non-2xx ${alone.non2xx}`);
      const id = await startBacktest(server, range);
      const before = sampleProcess(server.child.pid!);
      const during = await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds: kSeconds });
      const usage = usageByRole(server.child.pid!, before, sampleProcess(server.child.pid!), server.threads);
      const progress = await call(server, 'GET', `/v1/rules/backtests/${id}`);
      loaded.push(during.requestsPerSecond);
      const backtestCpu = (usage.get('backtest')?.cpuUs ?? 0) / 1e6;
      const scanned = progress.state === 'done' ? progress.report.events_scanned : progress.progress.events_scanned;
      console.log(
        `  round ${round}, backtest running: ${during.requestsPerSecond.toFixed(0)} events/s  p50 ${during.p50Ms.toFixed(1)} ms  p99 ${during.p99Ms.toFixed(1)} ms  non-2xx ${during.non2xx}; ` +
          `the backtest thread used ${backtestCpu.toFixed(1)} CPU s and judged ${scanned.toLocaleString('en-US')} events meanwhile`,
      );
      const done = await finished(server, id);
      console.log(`    (the backtest then finished: ${done.state}, ${(done.report?.duration_ms / 1000).toFixed(1)} s in all)`);
    }
    const mean = (values: number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;
    console.log(`\nlive throughput while a backtest runs: ${((mean(loaded) / mean(baseline) - 1) * 100).toFixed(1)} % (${mean(loaded).toFixed(0)} against ${mean(baseline).toFixed(0)} events/s)`);

    // At half the capacity just measured (autocannon's fixed rate; wrk has none): latency without
    // and with a backtest, and how long the backtest takes beside that traffic.
    const rate = Math.round(mean(baseline) / 2);
    const headers = { authorization: `Bearer ${server.liveKey}` };
    const half = (): Promise<LoadFigures> => runLoad({ url: server.url, method: 'POST', path: '/v1/events', headers, body: eventMix(5), connections: 64, seconds: kSeconds, rate });
    console.log(`\nPOST /v1/events at ${rate} events/s offered (half the capacity), ${kSeconds} s:`);
    const quiet = await half();
    console.log(`  no backtest:      ${quiet.requestsPerSecond.toFixed(0)} events/s  p50 ${quiet.p50Ms.toFixed(1)} ms  p99 ${quiet.p99Ms.toFixed(1)} ms  non-2xx ${quiet.non2xx}`);
    const id = await startBacktest(server, range);
    const busy = await half();
    const meanwhile = await call(server, 'GET', `/v1/rules/backtests/${id}`);
    const judged = meanwhile.state === 'done' ? meanwhile.report.events_scanned : meanwhile.progress.events_scanned;
    console.log(`  backtest running: ${busy.requestsPerSecond.toFixed(0)} events/s  p50 ${busy.p50Ms.toFixed(1)} ms  p99 ${busy.p99Ms.toFixed(1)} ms  non-2xx ${busy.non2xx}; the backtest judged ${judged.toLocaleString('en-US')} events meanwhile`);
    const done = await finished(server, id);
    console.log(`    (the backtest then finished: ${done.state}, ${(done.report?.duration_ms / 1000).toFixed(1)} s in all)`);
  } finally {
    await server.stop();
  }
}

// Run as a script; imported (a profile of the backtest loop), only `generate` is used.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  void main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
