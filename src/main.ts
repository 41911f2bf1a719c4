// The composition root: settings in, a running service out. Opens the store, runs migrations and
// the first-start bootstrap, wires the handlers into the route table, and starts the front end.
// Nothing else constructs services; tests start the real thing through the command line.
import { giveToDataDirOwner } from './store/data-dir-owner.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasFault, kFaults, settingWarnings, type Config } from './config/settings.js';
import { KeyRegistry } from './auth/key-registry.js';
import { mendLinkHalves } from './accounts/link-halves.js';
import { DerivedFlusher, kBacklogPartRows } from './accounts/derived-flush.js';
import { KeyedHashCache } from './signals/keyed-hash-cache.js';
import { VelocityWindows } from './signals/velocity.js';
import { HotAccounts, StateLoadError } from './accounts/hot-accounts.js';
import { createReadScoreHandler, createSubmitEventAdmission, createSubmitEventHandler } from './http/handlers/events.js';
import { createEraseHandler, createLinksHandler } from './http/handlers/accounts.js';
import { AccountsService } from './accounts/accounts-service.js';
import { OperatorErasures } from './accounts/operator-erasures.js';
import { CasesService } from './cases/cases-service.js';
import { UnfoldedCases } from './cases/unfolded-cases.js';
import { createChangeCaseHandler, createListCasesHandler, createReadCaseHandler } from './http/handlers/cases.js';
import { createHealthHandler, createMetricsHandler } from './http/handlers/operations.js';
import { RulesPool } from './pool/rules-pool.js';
import { LiveRulesets } from './rulesets/live-rulesets.js';
import { RulesCompiler } from './rulesets/rules-compiler.js';
import { RulesService } from './rulesets/rules-service.js';
import { createRulesHandlers } from './http/handlers/rules.js';
import { createAnalysisHandlers } from './http/handlers/analysis.js';
import { BacktestService } from './analysis/backtest-service.js';
import { RuleStatsService } from './analysis/stats-service.js';
import { createWebhookHandlers } from './http/handlers/webhooks.js';
import { AsyncScorer, type AsyncScorers } from './scoring/async-scorer.js';
import { PendingEvents } from './scoring/pending-events.js';
import { EventService } from './scoring/event-service.js';
import { EventReader } from './scoring/event-store.js';
import { KeyHasher } from './state/keys.js';
import type { Bytes } from './state/slots.js';
import { Scorer } from './scoring/scorer.js';
import { loadsFromSnapshot, startLoads, type StartLoads } from './scoring/start-loads.js';
import { saveStartSnapshot, takeStartSnapshot } from './scoring/start-snapshot.js';
import { claimSnapshot } from './store/snapshot-seal.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { DeliveriesService } from './webhooks/deliveries.js';
import { installSecret } from './store/install-secret.js';
import { Checkpointer } from './store/checkpointer.js';
import { announceThread } from './shared/threads.js';
import { createAgentHandler, createCollectHandler } from './http/handlers/fingerprint.js';
import { loadAgentScript } from './fingerprint/agent-asset.js';
import { buildRouteTable } from './http/routes.js';
import { HttpServer, ListenError } from './http/server.js';
import { addressUnavailable } from './http/listen-error.js';
import type { AccessLog, Logger } from './shared/log.js';
import { kVersion } from './shared/version.js';
import { OutcomeCounts } from './pool/outcome-tally.js';
import { acquireDataDirLock, DataDirLockedError, type DataDirLock } from './store/data-dir-lock.js';
import { Metrics } from './shared/metrics.js';
import { closeCleanly, DataDirError, isBusyError, openDatabase, secureDataDir, SqliteBuildError, type Db } from './store/database.js';
import { AccountGate } from './accounts/account-gate.js';
import { FaultLatch } from './shared/fault-latch.js';
import { migrate, SchemaTooNewError } from './store/migrate.js';
import { Writer } from './store/writer.js';
import { kWriterThreadScript, type AppWriter } from './write-commands.js';
import { ListsClock } from './lists/lists-clock.js';
import { ListsService } from './lists/lists-service.js';
import { listClock } from './lists/list-store.js';
import { createListsHandlers } from './http/handlers/lists.js';
import { createLabelsHandlers } from './http/handlers/labels.js';
import { createAuditHandler } from './http/handlers/audit.js';
import { LabelsService } from './labels/labels-service.js';
import { kAuditPurgeBatch } from './audit/audit-store.js';
import type { BootstrapResult } from './tenancy/provision.js';
import { hasTenants } from './tenancy/tenancy-store.js';

export const kBootstrapKeysFile = 'bootstrap-keys.json';
const kDrainTimeoutMs = 10_000;
/** How often each velocity key is checked for a day without events (a part of the keys at a time). */
const kVelocitySweepIntervalMs = 10 * 60_000;
/** How often the last use of keys, counted in memory, is written (and at every stop). */
const kKeyUseFlushIntervalMs = 60_000;
/** How often expired list items and deleted lists' items are swept, and the list change log pruned. */
const kListSweepIntervalMs = 60_000;
/** How often audit records past AUDIT_RETENTION_DAYS are purged (and once at start). */
const kAuditPurgeIntervalMs = 60 * 60_000;
const kDayMs = 86_400_000;

/**
 * A start that cannot go on, for a reason the operator must fix (the data dir or the port in use,
 * a database of a newer build): the command line prints the message as one line and exits 1.
 */
export class StartupError extends Error {}

/** The start failed because another process holds the data dir (a server, or a command running the server's parts). */
export class DataDirInUseError extends StartupError {}

export interface ServiceOptions {
  /** ACCESS_LOG on: one line per request. */
  readonly accessLog?: AccessLog | null;
  /**
   * false: the state and the writer without the HTTP front end (no port is probed or bound), the
   * background scorer or webhook deliveries. The command line's `accounts erase` on a data dir no
   * server runs on: the start does the erasures waiting, and the command stops it again.
   */
  readonly listen?: boolean;
  /** That command's request, done even though the command cannot say it waits while the start loads. */
  readonly operatorRequest?: number;
}

export interface RunningService {
  /** 0 when started with `listen: false`. */
  readonly port: number;
  readonly bootstrap: BootstrapResult | null;
  /** SIGTERM: stop listening, finish requests in flight, flush the writer, close the database. */
  shutdown(): Promise<void>;
}

export async function startService(config: Config, log: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  announceThread('http');
  const now = Date.now;
  // Before anything is opened or made (a first start's keys): a busy port, or an address that is
  // not this machine's, is reported at once. With port 0 (the system picks a free port) the probe
  // still tries the address. (Tests: port_taken_after_check skips the check, as if another process
  // took the port after it, so the listen itself fails.)
  const listen = options.listen ?? true;
  if (listen && !hasFault(config, 'port_taken_after_check')) {
    const reason = await addressUnavailable(config.host, config.port);
    if (reason !== null) throw new StartupError(`cannot listen on ${config.host}:${config.port}: ${reason}`);
  }
  try {
    secureDataDir(config.dataDir);
  } catch (error) {
    if (error instanceof DataDirError) throw new StartupError(error.message);
    throw error;
  }
  // One server per data dir, held until the process ends (store/data-dir-lock.ts).
  let lock: DataDirLock;
  try {
    lock = acquireDataDirLock(config.dataDir);
  } catch (error) {
    if (error instanceof DataDirLockedError) throw new DataDirInUseError(error.message);
    throw error;
  }
  // Setting up (schema, first-start bootstrap, install secret) uses a connection of its own that
  // is closed before the writer thread opens the one connection that writes while serving.
  let setupDb: Db;
  try {
    setupDb = openDatabase(config.dataDir, { busyTimeoutMs: config.sqliteBusyTimeoutMs });
  } catch (error) {
    lock.release();
    if (error instanceof SqliteBuildError) throw new StartupError(error.message);
    throw busyAsInUse(error, config.dataDir);
  }
  let sealed: string | null;
  let bootstrap: BootstrapResult | null;
  let secret: Buffer;
  let schema: number;
  try {
    // The seal of the start snapshot, claimed before anything is written — migrations included,
    // which then run with no guard trigger in place (scoring/start-snapshot.ts).
    sealed = claimSnapshot(setupDb);
    migrate(setupDb);
    // Before the state loads from the tables: a link must be stored in both directions (accounts/link-halves.ts).
    const mended = mendLinkHalves(setupDb);
    if (mended.written + mended.removed > 0) {
      log.warn('links stored in one direction only were mended: a bulk write had stopped between its parts', { rows_written: mended.written, rows_removed: mended.removed });
    }
    // Imported for a first start only: a preset's install loads the rules compiler, which serving
    // does not need on this thread (a publish compiles in the compiler thread).
    bootstrap = hasTenants(setupDb) ? null : (await import('./tenancy/provision.js')).bootstrapIfEmpty(setupDb, now());
    if (bootstrap !== null) writeBootstrapKeys(config.dataDir, bootstrap);
    secret = installSecret(setupDb);
    schema = setupDb.pragma('user_version', { simple: true }) as number;
  } catch (error) {
    setupDb.close();
    lock.release();
    if (error instanceof SchemaTooNewError) throw new StartupError(`${config.dataDir}: ${error.message}`);
    throw busyAsInUse(error, config.dataDir);
  }
  setupDb.close();
  const readDb = openDatabase(config.dataDir, { readonly: true });
  const checkpointer = new Checkpointer(config.dataDir);

  const writer: AppWriter = new Writer(kWriterThreadScript, { dataDir: config.dataDir, busyTimeoutMs: config.sqliteBusyTimeoutMs });
  await writer.ready();
  const keys = new KeyRegistry(readDb, now);
  keys.start();
  const rulesets = new LiveRulesets(readDb);
  rulesets.start();
  const faults = kFaults.filter((fault) => hasFault(config, fault));
  const outcomes = new OutcomeCounts();
  // The rule workers catch up with every list change committed before now (lists/lists-clock.ts).
  const listsClock = new ListsClock();
  listsClock.advance(listClock(readDb));
  const pool = new RulesPool(
    { dataDir: config.dataDir, faults, listsClock: listsClock.buffer, loaded: new SharedArrayBuffer(4) },
    { threads: config.workers, maxHeapMb: config.workerMaxHeapMb, taskTimeoutMs: config.workerTaskTimeoutMs, log, onTally: (tally) => outcomes.add(tally) },
  );
  // Keys of the in-memory state (velocity windows, event ids): keyed hashes under the install secret.
  const hasher = new KeyHasher(secret);
  // The velocity windows and the event ids: from the snapshot the last clean stop wrote, or from
  // the event log on a thread of their own while this one loads the accounts (scoring/start-loads.ts).
  const snapshot = takeStartSnapshot(config.dataDir, sealed, schema);
  if (!snapshot.ok && snapshot.reason !== 'no snapshot') log.info('the start snapshot is not used; loading from the database', { reason: snapshot.reason });
  const fromLog = snapshot.ok ? loadsFromSnapshot(snapshot.parts, hasher, now(), snapshot.ms) : startLoads(config.dataDir, secret, hasher, now());
  const deliverer = new WebhookDeliverer(readDb, writer, {
    retryBaseMs: config.webhookRetryBaseMs,
    retryMaxDelayMs: config.webhookRetryMaxDelayMs,
    retryHours: config.webhookRetryHours,
    timeoutMs: config.webhookTimeoutMs,
  }, log, now);
  // Accounts, signal values and links in memory, from the tables (accounts/hot-accounts.ts).
  let loaded;
  let logLoads: StartLoads;
  try {
    loaded = snapshot.ok ? HotAccounts.fromSnapshot(readDb, hasher, snapshot.parts.accounts) : null;
    // (Not expected: the seal guards the stamp too.)
    if (snapshot.ok && loaded === null) log.warn('the start snapshot is not of the derived stamp stored; loading the accounts from the tables');
    loaded ??= HotAccounts.load(readDb, hasher, secret, fromLog.linkRows);
    logLoads = await fromLog.result;
  } catch (error) {
    fromLog.cancel();
    if (error instanceof StateLoadError) throw new StartupError(error.message);
    throw error;
  }
  const velocity = logLoads.velocity;
  // A part of the keys at a time, each key every kVelocitySweepIntervalMs (VelocityWindows.sweepNext).
  const velocitySweep = setInterval(() => velocity.sweepNext(now()), kVelocitySweepIntervalMs / VelocityWindows.sweepSteps);
  velocitySweep.unref();
  const hotAccounts = loaded.accounts;
  // The rows that follow from scored events, written in bulk; those the replay made go first.
  const unfoldedCases = new UnfoldedCases();
  const derived = new DerivedFlusher(
    hotAccounts, unfoldedCases, writer, log, { flushMs: config.derivedFlushMs, caseEventsWaitMs: config.caseEventsWaitMs },
    { failWrites: hasFault(config, 'derived_rows_fail'), failFolds: hasFault(config, 'case_folds_fail') },
  );
  // And every case and case event a crash left unwritten, so that nothing from before the start needs to be shown on top.
  await derived.flush(kBacklogPartRows, true);
  // Unless that write failed: those left are shown from memory until a later one succeeds.
  const externalIdOf = readDb.prepare('SELECT external_account_id FROM accounts WHERE account_id = ?').pluck();
  unfoldedCases.restore(await writer.call('waitingCases'), (accountId) => (externalIdOf.get(accountId) as string | undefined) ?? null);
  derived.start();
  const gate = new AccountGate();
  const latch = new FaultLatch(hasFault(config, 'hold_points') ? config.dataDir : null);
  // Tests stop a start here, loaded but not listening, to signal it (test/cli/serve-signals.test.ts).
  if (hasFault(config, 'start_held')) await new FaultLatch(config.dataDir).hold('start');
  const scorer = new Scorer({ pool, writer, accounts: hotAccounts, unfoldedCases, hashes: new KeyedHashCache(secret, hasher), log, velocity, gate, latch, now, onWebhookQueued: (projectId) => deliverer.poke(projectId) });
  // Each environment's async events have their own queue and bound; sandbox yields while live events wait.
  const liveScorer = new AsyncScorer(config.asyncQueueLimit, log, new PendingEvents(readDb), config.asyncRetryDelayMs);
  const asyncScorers: AsyncScorers = {
    live: liveScorer,
    sandbox: new AsyncScorer(config.asyncQueueLimit, log, new PendingEvents(readDb), config.asyncRetryDelayMs, liveScorer),
  };
  const bothScorers = [asyncScorers.live, asyncScorers.sandbox];
  // Events set aside for want of a ruleset are tried as soon as one is published, not at their pause's end.
  rulesets.onChange(() => {
    for (const asyncScorer of bothScorers) asyncScorer.retrySetAsideNow();
  });
  const accounts = new AccountsService({
    readDb, writer, hotAccounts, derived, velocity, gate, checkpointer, latch, secret, log, now, listsClock, asyncScorers, unfoldedCases, webhooks: deliverer, failErasureReads: hasFault(config, 'erasure_read_fails'),
  });
  const operatorErasures = new OperatorErasures(readDb, writer, accounts, log, now, { ownRequest: options.operatorRequest ?? null });
  const cases = new CasesService(
    readDb, writer, unfoldedCases, now, (accountId) => hotAccounts.refresh(accountId),
    (tenantId, environment, projectId, id) => accounts.accountNamed({ tenantId, environment, projectId }, id),
    () => scorer.casesSettledBefore(),
  );
  const rulesCompiler = new RulesCompiler();
  const rules = new RulesService({ readDb, writer, compiler: rulesCompiler, liveRulesets: rulesets, now });
  const lists = new ListsService({ readDb, writer, compiler: rulesCompiler, clock: listsClock, now });
  const backtests = new BacktestService({ dataDir: config.dataDir, readDb, writer, compiler: rulesCompiler, latch, log, now });
  await backtests.recover();
  const ruleStats = new RuleStatsService(config.dataDir, readDb, now);
  const eventReader = new EventReader(readDb, logLoads.eventIds);
  const door = { max: config.maxEventsInFlight, overloadAt: config.overloadEventsInFlight, afterMs: config.overloadAfterMs };
  const events = new EventService({ reader: eventReader, writer, rulesets, scorer, asyncScorers, gate, door });
  const labels = new LabelsService({ readDb, writer, reader: eventReader, now, onAccountChanged: (accountId) => hotAccounts.refresh(accountId) });
  const pendingSeqs = await writer.call('pendingSeqsByEnvironment');
  const pending = asyncScorers.live.loadPending(pendingSeqs.live) + asyncScorers.sandbox.loadPending(pendingSeqs.sandbox);
  // The operator's erasures that waited for a server, before anything else runs: the erased
  // account's pending events are never scored, its queued webhooks leave without it.
  await operatorErasures.runWaiting();
  if (listen) {
    void latch.hold('async-scorer').then(() => {
      for (const asyncScorer of bothScorers) asyncScorer.start((job) => events.scorePending(job));
    });
    deliverer.start();
  }
  const deliveries = new DeliveriesService(readDb, writer, () => deliverer.poke(), now);
  // Key use is counted in memory by the registry and written now and then, never per request.
  const flushKeyUses = async (): Promise<void> => {
    const uses = keys.takeUses();
    if (uses.length === 0) return;
    try {
      await writer.call('recordKeyUse', uses);
    } catch (error) {
      log.warn('the last use of keys could not be recorded', { keys: uses.length, error });
    }
  };
  const keyUseFlush = setInterval(() => void flushKeyUses(), kKeyUseFlushIntervalMs);
  keyUseFlush.unref();
  // Background upkeep through the writer: expired list items, deleted lists, the list change log,
  // and audit records past retention; each in rounds, so no round holds the writer for long.
  let stopping = false;
  const sweepLists = async (): Promise<void> => {
    try {
      for (let more = true; more && !stopping; ) {
        const swept = await writer.call('sweepLists', now());
        listsClock.advance(swept.seq);
        more = swept.more;
      }
    } catch (error) {
      if (!stopping) log.warn('the list sweep failed; it runs again in a minute', { error });
    }
  };
  const purgeAuditTrail = async (): Promise<void> => {
    try {
      const before = now() - config.auditRetentionDays * kDayMs;
      while (!stopping && (await writer.call('purgeAudit', before)) === kAuditPurgeBatch);
    } catch (error) {
      if (!stopping) log.warn('the audit purge failed; it runs again in an hour', { error });
    }
  };
  const listSweep = setInterval(() => void sweepLists(), kListSweepIntervalMs);
  listSweep.unref();
  const auditPurge = setInterval(() => void purgeAuditTrail(), kAuditPurgeIntervalMs);
  auditPurge.unref();
  void purgeAuditTrail();
  log.info('store ready', { accounts: loaded.counts.accounts, account_signals: loaded.counts.signals, account_links: loaded.counts.links, events_replayed: loaded.counts.replayed, accounts_load_ms: Math.round(loaded.counts.ms), tables_read_ahead_ms: Math.round(loaded.counts.readAheadMs), links_from_start_thread: loaded.counts.linksFromStartThread, velocity_events_rebuilt: logLoads.velocityEventsRebuilt, velocity_rebuild_ms: Math.round(logLoads.velocityMs), event_ids: logLoads.eventIds.size, event_ids_load_ms: Math.round(logLoads.eventIdsMs), event_ids_from_log: logLoads.eventIdsFromLog, from_snapshot: logLoads.fromSnapshot, pending_async_events: pending, pid: process.pid });
  if (config.faultInjection !== 'none') log.warn('fault injection is on: this server is for tests only', { faults: config.faultInjection });
  for (const warning of settingWarnings(config)) log.warn('settings contradict each other', { detail: warning });

  const metrics = new Metrics();
  metrics.gauge('fraud_scorer_writer_queue_depth', 'Writes waiting for the next group commit.', () => writer.queueDepth);
  metrics.counter('fraud_scorer_writer_commits_total', 'Transactions the single writer committed (group commits: one per batch, and one per call of a batch that had to be run call by call).', () => writer.commits);
  metrics.counter('fraud_scorer_writer_writes_total', 'Writes committed by the single writer.', () => writer.writes);
  metrics.counter('fraud_scorer_writer_lock_waits_total', 'Writer transactions that found the write lock held (the checkpointer starting the WAL over, the command line) and waited.', () => writer.lockWaits);
  metrics.gauge('fraud_scorer_derived_rows_waiting', 'Rows that follow from scored events (counts, signals, links) not yet written in bulk.', () => hotAccounts.waitingRows);
  metrics.counter('fraud_scorer_derived_batches_total', 'Writes (one transaction each, at most 250 rows) of rows that follow from scored events.', () => derived.batches);
  metrics.counter('fraud_scorer_derived_batch_failures_total', 'Such writes that failed, and writes of cases that failed (tried again at the next flush).', () => derived.failures);
  metrics.gauge('fraud_scorer_cases_unfolded', 'Cases opened, or with events that joined them, committed but not yet written into the case\'s row (GET /v1/cases shows them already).', () => unfoldedCases.size);
  metrics.counter('fraud_scorer_case_folds_total', 'Writes (one transaction each, at most 250 cases) of new cases and of events into their open cases.', () => derived.caseFolds);
  const sumOfScorers = (read: (asyncScorer: AsyncScorer) => number) => () => bothScorers.reduce((sum, asyncScorer) => sum + read(asyncScorer), 0);
  metrics.gauge('fraud_scorer_async_queue_depth', 'Async events accepted and not yet scored (both environments).', sumOfScorers((scorer) => scorer.depth));
  metrics.labeledGauge('fraud_scorer_async_queue_depth_by_environment', 'Async events accepted and not yet scored, by environment (each has its own queue, bounded by ASYNC_QUEUE_LIMIT).', ['environment'], () => [
    [{ environment: 'live' }, asyncScorers.live.depth],
    [{ environment: 'sandbox' }, asyncScorers.sandbox.depth],
  ]);
  metrics.labeledGauge('fraud_scorer_async_queue_counted_by_environment', 'What each environment\'s ASYNC_QUEUE_LIMIT compares with: its async events waiting, being scored or written, not those set aside (bounded per project).', ['environment'], () => [
    [{ environment: 'live' }, asyncScorers.live.queued],
    [{ environment: 'sandbox' }, asyncScorers.sandbox.queued],
  ]);
  metrics.counter('fraud_scorer_async_scored_total', 'Async events scored in the background (not those a sync request for the same event scored first).', sumOfScorers((scorer) => scorer.scored));
  metrics.gauge('fraud_scorer_async_set_aside', 'Async events that could not be scored yet (no published ruleset, over the evaluation budget), waiting to be tried again.', sumOfScorers((scorer) => scorer.setAside));
  metrics.gauge('fraud_scorer_rule_pool_queue', 'Events waiting for a rule worker.', () => pool.queueSize);
  metrics.counter('fraud_scorer_rule_pool_batches_total', 'Batches sent to the rule workers.', () => pool.batches);
  metrics.counter('fraud_scorer_rule_pool_worker_failures_total', 'Rule-worker tasks that ended their thread (died or overran).', () => pool.workerFailures);
  metrics.gauge('fraud_scorer_webhook_outbox_depth', 'Decision webhooks not yet delivered (nor abandoned).', () => deliverer.pending);
  metrics.counter('fraud_scorer_webhook_deliveries_total', 'Decision webhooks delivered.', () => deliverer.delivered);
  metrics.counter('fraud_scorer_webhook_failures_total', 'Failed decision webhook attempts.', () => deliverer.failures);
  metrics.gauge('fraud_scorer_velocity_keys', 'Keys held by the in-memory velocity windows.', () => velocity.size);
  const stateParts = (): Array<[string, number, Bytes]> => {
    const stats = hotAccounts.stateStats;
    return [
      ['accounts', stats.accounts, stats.bytes.accounts], ['signal_values', stats.values, stats.bytes.values], ['signal_holders', stats.holders, stats.bytes.holders],
      ['links', stats.links, stats.bytes.links], ['event_ids', logLoads.eventIds.size, logLoads.eventIds.bytes], ['velocity_keys', velocity.size, velocity.bytes],
    ];
  };
  metrics.labeledGauge('fraud_scorer_state_entries', 'Entries held in memory, by kind (accounts, signal values and holders, links, event ids, velocity keys).', ['kind'],
    () => stateParts().map(([kind, entries]) => [{ kind }, entries] as const));
  metrics.labeledGauge('fraud_scorer_state_bytes', 'Bytes allocated for them (typed arrays, room to grow included), by kind.', ['kind'],
    () => stateParts().map(([kind, , bytes]) => [{ kind }, bytes.held] as const));
  metrics.gauge('fraud_scorer_events_in_flight', 'POST /v1/events admitted and not yet answered.', () => events.admitted);
  metrics.gauge('fraud_scorer_sandbox_events_in_flight', 'Sandbox events of those in flight: at most half of OVERLOAD_EVENTS_IN_FLIGHT, and none admitted while overloaded.', () => events.sandboxAdmitted);
  metrics.gauge('fraud_scorer_events_in_flight_limit', 'MAX_EVENTS_IN_FLIGHT: past it, POST /v1/events answers 503.', () => config.maxEventsInFlight);
  metrics.gauge(
    'fraud_scorer_events_overloaded',
    '1 while POST /v1/events answers 503 past OVERLOAD_EVENTS_IN_FLIGHT: in flight have stayed at or above it for OVERLOAD_AFTER_MS.',
    () => (events.overloaded ? 1 : 0),
  );
  metrics.counter('fraud_scorer_events_refused_total', 'POST /v1/events refused at the door with 503 (past MAX_EVENTS_IN_FLIGHT, or past OVERLOAD_EVENTS_IN_FLIGHT while overloaded, or past the sandbox share).', () => events.refused);
  metrics.counter('fraud_scorer_events_dropped_total', 'Sync events not scored because their client had gone.', () => scorer.dropped);
  metrics.labeledHistogram(
    'fraud_scorer_scoring_stage_seconds',
    'Time scored events waited for each hop: rules (handed to the rule workers until the result is back, batching included) and commit (handed to the writer until its commit is acknowledged).',
    'stage',
    () => Object.entries(scorer.stageTimes),
  );
  metrics.gauge('fraud_scorer_async_queue_limit', 'Bound of each environment\'s async queue (ASYNC_QUEUE_LIMIT): past it, that environment\'s async events get 503.', () => config.asyncQueueLimit);
  metrics.counter('fraud_scorer_rule_worker_restarts_total', 'Rule workers started to replace one that died.', () => pool.restarts);
  metrics.labeledCounter('fraud_scorer_decisions_total', 'Events scored, by project and decision.', ['project_id', 'decision'], () => outcomes.decisions());
  metrics.labeledCounter('fraud_scorer_rule_hits_total', 'Matches of published rules, by project, rule id and status (active or shadow).', ['project_id', 'rule_id', 'status'], () => outcomes.ruleHits());

  let draining = false;
  // One probe at a time, however often /healthz is asked.
  let probing = false;
  const probeStorage = (): void => {
    if (probing) return;
    probing = true;
    writer.call('probeWrite', now()).catch(() => undefined).finally(() => (probing = false));
  };
  const routes = buildRouteTable({
    health: createHealthHandler({ startedAt: now(), version: kVersion, isDraining: () => draining, storageFailure: () => writer.storageFailure, probeStorage }, now),
    metrics: createMetricsHandler(metrics),
    submitEvent: createSubmitEventHandler(events),
    admitEvent: createSubmitEventAdmission(events),
    readScore: createReadScoreHandler(events),
    accountLinks: createLinksHandler(accounts),
    eraseAccount: createEraseHandler(accounts),
    listCases: createListCasesHandler(cases),
    readCase: createReadCaseHandler(cases),
    changeCase: createChangeCaseHandler(cases),
    fpCollect: createCollectHandler({ installSecret: secret, writer }),
    fpAgent: createAgentHandler(loadAgentScript()),
    audit: createAuditHandler(readDb),
    ...createRulesHandlers(rules),
    ...createListsHandlers(lists),
    ...createLabelsHandlers(labels),
    ...createAnalysisHandlers(backtests, ruleStats, now),
    ...createWebhookHandlers(deliveries),
  });
  const server = new HttpServer({
    host: config.host,
    port: config.port,
    trustProxy: config.trustProxy,
    rateLimits: {
      windowSeconds: config.rateLimitWindowSeconds,
      perRoute: config.rateLimitPerRoute,
      fpPerKey: config.rateLimitFpPerKey,
      fpPerKeyAndAddress: config.rateLimitFpPerKeyAndAddress,
      failedKeyLookups: config.rateLimitFailedKeyLookups,
    },
    routes,
    keys,
    metrics,
    log,
    now,
    rateLimiterReady: hasFault(config, 'rate_limiter_unready') ? () => false : () => true,
    accessLog: options.accessLog ?? null,
  });
  metrics.gauge('fraud_scorer_http_in_flight', 'Requests received and not yet answered.', () => server.inFlight);

  /** The start snapshot and its seal; a failure costs the next start its speed, nothing else. */
  const writeSnapshotAtStop = (): void => {
    const started = performance.now();
    const accountsParts = hotAccounts.snapshotParts();
    if (accountsParts === null) {
      log.info('no start snapshot: rows of scored events are not all written; the next start loads the tables and replays the log');
      return;
    }
    try {
      const bytes = saveStartSnapshot(config.dataDir, { accounts: accountsParts, velocity: velocity.parts(), eventIds: logLoads.eventIds.parts() }, schema, now());
      log.info('start snapshot written', { bytes, ms: Math.round(performance.now() - started) });
    } catch (error) {
      log.warn('the start snapshot could not be written; the next start loads from the database', { error });
    }
  };
  let shutdownPromise: Promise<void> | null = null;
  const shutdown = (): Promise<void> => {
    shutdownPromise ??= (async () => {
      draining = true;
      await server.drain(kDrainTimeoutMs);
      // Requests still unanswered are closed without an answer (their access log lines say 499).
      if (server.inFlight > 0) log.warn('the drain gave up: requests still unanswered are closed without an answer', { requests: server.inFlight, after_ms: kDrainTimeoutMs });
      server.close();
      // An erasure under way finishes: the command line waits for its answer.
      await operatorErasures.stop();
      clearInterval(keyUseFlush);
      clearInterval(listSweep);
      clearInterval(auditPurge);
      stopping = true;
      await flushKeyUses();
      // Pending async events stay pending in the store; the next start scores them.
      await Promise.all(bothScorers.map((asyncScorer) => asyncScorer.pause()));
      await deliverer.stop();
      await pool.close();
      // Every event is scored: the last rows that follow from them, before the writer closes.
      await derived.stop();
      // Before the writer closes: a backtest stopped here is marked failed.
      await backtests.stop();
      await ruleStats.close();
      await rulesCompiler.close();
      clearInterval(velocitySweep);
      keys.stop();
      rulesets.stop();
      await writer.close();
      await checkpointer.stop();
      readDb.close();
      checkpointer.closeDatabaseFile();
      // Nothing writes any more: the state the next start would rebuild goes to the snapshot —
      // unless a handler was still running when the drain gave up (an erasure half done, say; its
      // client may have gone, or close() ended its connection, so it is not counted in flight).
      if (server.handlersRunning === 0) writeSnapshotAtStop();
      else log.info('no start snapshot: a request was still being handled when the drain gave up; the next start loads the tables and replays the log', { handlers_running: server.handlersRunning });
      // Last: no connection is left, so the WAL is emptied and removed (nothing lingers in it).
      closeCleanly(config.dataDir);
      lock.release();
    })();
    return shutdownPromise;
  };
  let port = 0;
  try {
    await pool.ready();
    if (listen) {
      operatorErasures.start();
      port = await server.listen();
    }
  } catch (error) {
    // Nothing was served: stop what was started, so that the process can end at once.
    await shutdown();
    // A first start made its keys before it failed: they are printed only by a start that serves.
    const keys = bootstrap === null ? '' : `; this first start made the tenant and its keys: they are in ${join(config.dataDir, kBootstrapKeysFile)} (not printed again)`;
    if (error instanceof ListenError) throw new StartupError(`${error.message}${keys}`);
    throw error;
  }
  return { port, bootstrap, shutdown };
}

/**
 * The setup's writes found the database locked beyond the busy timeout (another process wrote it:
 * a command line, the last writes of a server or command that was stopping): the data dir is in
 * use, as when its lock is held, and nothing was started. Any other error is as it was.
 */
function busyAsInUse(error: unknown, dataDir: string): unknown {
  if (!isBusyError(error)) return error;
  return new DataDirInUseError(`the database of ${dataDir} is busy: another process is writing it (${(error as Error).message}); try again`);
}

/** The bootstrap keys, readable only by the owner (mode 0600), written once. */
function writeBootstrapKeys(dataDir: string, bootstrap: BootstrapResult): void {
  const content = {
    tenant_id: bootstrap.tenant.tenant_id,
    live_project_id: bootstrap.live.project_id,
    sandbox_project_id: bootstrap.sandbox.project_id,
    keys: Object.fromEntries(bootstrap.keys.map((entry) => [entry.name, { key: entry.key, key_id: entry.info.key_id, project_id: entry.info.project_id, scopes: entry.info.scopes }])),
  };
  const path = join(dataDir, kBootstrapKeysFile);
  writeFileSync(path, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  giveToDataDirOwner(path);
  chmodSync(path, 0o600); // `mode` applies only when the file is created

}
