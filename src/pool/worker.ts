// A piscina worker: prepares each event's signals and runs it through its project's compiled
// ruleset. What the rules read from the service's state comes with the event (pool/protocol.ts).
//
// Each (project, version) is built once from its stored source and kept in a bounded cache
// (scoring/loaded-rulesets.ts). The result comes back twice: as JSON text for the answer, joined
// from per-entry fragments, and in the compact form that is stored (scoring/result-layout.ts).
import Database from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import { databasePath } from '../store/database.js';
import { countOutcome, newTally } from './outcome-tally.js';
import { prepareEvent } from './prepare-event.js';
import { LoadedRulesets } from '../scoring/loaded-rulesets.js';
import { decide, storedResultJson } from '../scoring/score-result.js';
import { encodeResults, itemOf, recordedSignalsOf, taskSize, type EvaluateTask, type EvaluateTaskResult, type ItemResult, type WorkerSetup } from './protocol.js';
import { announceThread } from '../shared/threads.js';
import { ListsClock } from '../lists/lists-clock.js';
import { userCountry, WorkerLists } from '../lists/worker-lists.js';
import { FaultLatch } from '../shared/fault-latch.js';

announceThread('rules');

const kOverBudgetMessage =
  'The published rules need more work on this event than one event may use (docs/rules.md, "Limits"); it was not scored and nothing was stored.';

const setup = workerData as WorkerSetup;
const db = new Database(databasePath(setup.dataDir), { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const rulesets = new LoadedRulesets(db);
const lists = new WorkerLists(db, new ListsClock(setup.listsClock));
const latch = setup.faults.includes('hold_points') ? new FaultLatch(setup.dataDir) : null;

/**
 * FAULT_INJECTION rule_worker_oom / rule_worker_hang (tests only): an event whose body contains the
 * fault's name as a string exhausts this thread's heap, or never returns, as a runaway rule would
 * if the compiler's guards had a hole. Lets the tests show that only that event fails.
 * FAULT_INJECTION hold_points: an event with `"rule_worker_hold": "<name>"` holds its batch in this
 * thread at the hold point <name> until the test lets it go (shared/fault-latch.ts).
 */
function simulateFault(payload: string): void {
  if (latch !== null) {
    const name = /"rule_worker_hold":"([a-z0-9_-]{1,64})"/.exec(payload)?.[1];
    if (name !== undefined) latch.holdSync(name);
  }
  if (setup.faults.includes('rule_worker_oom') && payload.includes('"rule_worker_oom"')) {
    const hoard: number[][] = [];
    for (;;) hoard.push(new Array<number>(1 << 20).fill(hoard.length));
  }
  if (setup.faults.includes('rule_worker_hang') && payload.includes('"rule_worker_hang"')) {
    for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  }
}

export default function evaluateBatch(task: EvaluateTask): EvaluateTaskResult {
  const count = taskSize(task);
  const results: ItemResult[] = new Array(count);
  const tally = newTally();
  for (let i = 0; i < count; i++) {
    const item = itemOf(task, i);
    if (setup.faults.length > 0) simulateFault(item.payload);
    const ruleset = rulesets.get(item.projectId, item.version);
    if (typeof ruleset === 'string') {
      results[i] = { ok: false, code: 'COMPILED_RULES_UNAVAILABLE', message: ruleset };
      continue;
    }
    const prepared = prepareEvent(item);
    const listView = lists.forEvent(item.projectId, item.now, userCountry(prepared.event));
    const started = performance.now();
    const outcome = ruleset.evaluate({ event: prepared.event, signals: prepared.signals, now: item.now, lists: listView });
    const evalMs = performance.now() - started;
    if (listView.failure !== null) {
      // A list could not be read: no verdict from rules that could not see it.
      results[i] = { ok: false, code: 'INTERNAL_ERROR', message: `lists could not be read: ${listView.failure}` };
      continue;
    }
    if (outcome.over_budget) {
      // Some rules could not finish: no partial verdict. The same event on the same ruleset will
      // always do this (the budget counts work, not time), so it is not retried here.
      results[i] = { ok: false, code: 'COMPILED_RULES_UNAVAILABLE', message: kOverBudgetMessage, overBudget: true };
      continue;
    }
    const { decision, risk_score: riskScore } = decide(outcome, item.policy);
    const { layout } = ruleset;
    countOutcome(tally, item.projectId, decision, outcome);
    results[i] = {
      ok: true,
      decision,
      riskScore,
      storedJson: storedResultJson({
        eventId: item.eventId,
        decision,
        riskScore,
        maxPossible: outcome.max_possible,
        breakdownJson: layout.breakdownJson(outcome.breakdown),
        flags: outcome.flags,
        actions: outcome.actions,
        trustOverride: outcome.trust_override,
        hardBlockHit: outcome.hard_block_hit,
        enrichment: prepared.enrichment,
        rulesetVersion: item.version,
      }),
      compactResult: layout.compact(outcome, prepared.enrichment),
      compactShadow: layout.compactShadow(outcome.shadow),
      recordedSignals: recordedSignalsOf(task, i),
      degraded: outcome.degraded,
      evalMs,
    };
  }
  return encodeResults(results, tally);
}

// Loaded: the HTTP thread waits for every worker to get here before it listens (RulesPool.ready).
// Counted once the code that loads this module has returned, not while the module evaluates:
// piscina loads it with require() (Node's require of an ES module), which after evaluating it
// still builds the module's CommonJS facade, and a worker terminated in between — a stop right
// after the start — aborted the whole process ("Assertion failed: facade->InstantiateModule(...)",
// Node 20, test/cli/serve-signals.test.ts in CI). The require is synchronous and runs in a promise
// callback: a microtask queued now runs after it returns. (Not a macrotask: piscina's worker then
// blocks its event loop in Atomics.wait until a task comes.)
queueMicrotask(() => Atomics.add(new Int32Array(setup.loaded), 0, 1));
