// The messages between the main thread and the rule-evaluation workers. Plain data only: class
// identity does not survive postMessage, so errors travel as values with the interface's code.
// EvaluateItem and ItemResult are one event as each side uses it; EvaluateTask and
// EvaluateTaskResult are a batch as it travels (below).
import { encodePackedSignals, kPackedSignalsLength, packSignals, unpackSignals } from '../scoring/recorded-signals.js';
import type { Decision, Thresholds } from '../scoring/score-result.js';
import type { PhoneAnalysis } from '../signals/phone.js';
import type { AccountSignals, LinkSignals } from '../signals/state-signals.js';
import type { VelocitySignals } from '../signals/velocity.js';
import type { Tally } from './outcome-tally.js';

export interface WorkerSetup {
  /** The data dir: workers open the database read-only for ruleset sources and lists. */
  readonly dataDir: string;
  /** Test-suite faults (config FAULT_INJECTION) the worker simulates; empty in production. */
  readonly faults: readonly string[];
  /** The lists clock (lists/lists-clock.ts), shared with the HTTP thread. */
  readonly listsClock: SharedArrayBuffer;
  /** One Int32: workers whose module has loaded (each adds 1; RulesPool.ready waits for them). */
  readonly loaded: SharedArrayBuffer;
}

export interface EvaluateItem {
  readonly projectId: string;
  readonly eventId: string;
  readonly version: number;
  /** The policy published with this version. */
  readonly policy: Thresholds;
  /**
   * The validated event body as received (JSON text). Sent as text because copying a string to the
   * worker costs the HTTP thread far less than cloning the parsed object; the worker parses it.
   */
  readonly payload: string;
  /** user.phone analysed on the main thread when it hashed the event's values; null: the worker does it. */
  readonly phone: PhoneAnalysis | null;
  /** What the rules read from the service's state, found on the main thread (in memory); null when the ruleset does not read it. */
  readonly velocity: VelocitySignals | null;
  readonly links: LinkSignals | null;
  readonly account: AccountSignals | null;
  /** Epoch ms: the `now` rules see. */
  readonly now: number;
  /** The request that brought the event (x-request-id), for the log; null for a restarted async event. */
  readonly requestId: string | null;
}

export type EnrichmentStatus = 'ok' | 'unconfigured' | 'error' | 'unparseable';

export type ItemResult =
  | {
      readonly ok: true;
      readonly decision: Decision;
      readonly riskScore: number;
      /** The result as GET /v1/scores answers it, JSON text (scoring/score-result.ts). */
      readonly storedJson: string;
      /** Active rules that met a wrong-typed value (the response's degraded). */
      readonly degraded: readonly string[];
      /** The compact stored form of the result (scoring/result-layout.ts). */
      readonly compactResult: string;
      /** The compact stored form of the shadow rule outcomes, for analysts. */
      readonly compactShadow: string;
      /** The velocity, links and account signals the rules were given (scoring/recorded-signals.ts). */
      readonly recordedSignals: string;
      /** Rule evaluation time only (the interface's latency_ms). */
      readonly evalMs: number;
    }
  /**
   * COMPILED_RULES_UNAVAILABLE: the ruleset cannot be loaded, the event spent its whole evaluation
   * budget (`overBudget`), or its worker died on it; INTERNAL_ERROR: the event or a list could not be read.
   */
  | {
      readonly ok: false;
      readonly code: 'COMPILED_RULES_UNAVAILABLE' | 'INTERNAL_ERROR';
      readonly message: string;
      readonly overBudget?: boolean;
    };

// On the wire a batch travels as columns: an array of strings per text field and every number in
// one Float64Array. Cloning objects makes V8 write and read each property's name for every event
// (~10 µs per event across the two threads, bench/pool/batching.bench.ts); columns cost a fraction.

/** Where an event's signals begin among its numbers: after version, now, the two thresholds and the phone. */
const kSignalsAt = 5;
/** Numbers per event in EvaluateTask.numbers: version, now, the two thresholds, the phone, then the signals. */
const kItemNumbers = kSignalsAt + kPackedSignalsLength;
const kPhonePresent = 1;
const kPhoneParseable = 2;
const kPhoneValid = 4;
const kPhoneUnparseable = 8;

export interface EvaluateTask {
  readonly projectIds: readonly string[];
  readonly eventIds: readonly string[];
  readonly payloads: readonly string[];
  readonly requestIds: ReadonlyArray<string | null>;
  /** Per event: the phone's country and type (null when absent or not analysed). */
  readonly phoneStrings: ReadonlyArray<string | null>;
  /** kItemNumbers per event; the phone's flags are NaN when the worker analyses it. */
  readonly numbers: Float64Array;
}

export function encodeTask(items: readonly EvaluateItem[]): EvaluateTask {
  const numbers = new Float64Array(items.length * kItemNumbers);
  const phoneStrings: Array<string | null> = new Array(items.length * 2);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const at = i * kItemNumbers;
    numbers[at] = item.version;
    numbers[at + 1] = item.now;
    numbers[at + 2] = item.policy.review_threshold;
    numbers[at + 3] = item.policy.block_threshold;
    const phone = item.phone;
    numbers[at + 4] = phone === null ? NaN
      : (phone.signals.present ? kPhonePresent : 0) | (phone.signals.parseable ? kPhoneParseable : 0) | (phone.signals.valid ? kPhoneValid : 0)
        | (phone.status === 'unparseable' ? kPhoneUnparseable : 0);
    phoneStrings[i * 2] = phone?.signals.country ?? null;
    phoneStrings[i * 2 + 1] = phone?.signals.type ?? null;
    packSignals(item.velocity, item.links, item.account, numbers, at + kSignalsAt);
  }
  return {
    projectIds: items.map((item) => item.projectId),
    eventIds: items.map((item) => item.eventId),
    payloads: items.map((item) => item.payload),
    requestIds: items.map((item) => item.requestId),
    phoneStrings,
    numbers,
  };
}

export function taskSize(task: EvaluateTask): number {
  return task.projectIds.length;
}

/** Event `i` of a task, as the worker uses it. The phone comes back without e164 and masked (the worker does not use them). */
export function itemOf(task: EvaluateTask, i: number): EvaluateItem {
  const n = task.numbers;
  const at = i * kItemNumbers;
  const phoneFlags = n[at + 4]!;
  const phone: PhoneAnalysis | null = Number.isNaN(phoneFlags) ? null : {
    signals: {
      present: (phoneFlags & kPhonePresent) !== 0,
      parseable: (phoneFlags & kPhoneParseable) !== 0,
      valid: (phoneFlags & kPhoneValid) !== 0,
      country: task.phoneStrings[i * 2]!,
      type: task.phoneStrings[i * 2 + 1]!,
    },
    e164: null,
    masked: null,
    status: (phoneFlags & kPhoneUnparseable) !== 0 ? 'unparseable' : 'ok',
  };
  const signals = unpackSignals(n, at + kSignalsAt);
  return {
    projectId: task.projectIds[i]!,
    eventId: task.eventIds[i]!,
    version: n[at]!,
    policy: { review_threshold: n[at + 2]!, block_threshold: n[at + 3]! },
    payload: task.payloads[i]!,
    phone,
    velocity: signals.velocity ?? null,
    links: signals.links ?? null,
    account: signals.account ?? null,
    now: n[at + 1]!,
    requestId: task.requestIds[i]!,
  };
}

/** The stored form (encodeRecordedSignals) of the signals event `i` of a task brought, from its numbers. */
export function recordedSignalsOf(task: EvaluateTask, i: number): string {
  return encodePackedSignals(task.numbers, i * kItemNumbers + kSignalsAt);
}

type ItemFailure = Extract<ItemResult, { ok: false }>;

/** The results of a task, in columns as EvaluateTask; a failed event has null in the text columns. */
export interface EvaluateTaskResult {
  readonly decisions: ReadonlyArray<Decision | null>;
  readonly storedJson: ReadonlyArray<string | null>;
  readonly compactResults: ReadonlyArray<string | null>;
  readonly compactShadows: ReadonlyArray<string | null>;
  readonly recordedSignals: ReadonlyArray<string | null>;
  /** Rule ids joined by ',' (rule ids are [a-z0-9_]: compiler/limits.ts). */
  readonly degraded: ReadonlyArray<string | null>;
  /** Per event: risk score, evaluation ms. */
  readonly numbers: Float64Array;
  /** The events that failed, by index (rare). */
  readonly failures: ReadonlyArray<{ readonly index: number; readonly failure: ItemFailure }>;
  /** Decisions and rule matches of the batch, for /metrics (pool/outcome-tally.ts). */
  readonly tally?: Tally;
}

export function encodeResults(results: readonly ItemResult[], tally: Tally | undefined): EvaluateTaskResult {
  const count = results.length;
  const decisions: Array<Decision | null> = new Array(count);
  const storedJson: Array<string | null> = new Array(count);
  const compactResults: Array<string | null> = new Array(count);
  const compactShadows: Array<string | null> = new Array(count);
  const recordedSignals: Array<string | null> = new Array(count);
  const degraded: Array<string | null> = new Array(count);
  const numbers = new Float64Array(count * 2);
  const failures: Array<{ index: number; failure: ItemFailure }> = [];
  for (let i = 0; i < count; i++) {
    const result = results[i]!;
    if (!result.ok) {
      failures.push({ index: i, failure: result });
      decisions[i] = storedJson[i] = compactResults[i] = compactShadows[i] = recordedSignals[i] = degraded[i] = null;
      continue;
    }
    decisions[i] = result.decision;
    storedJson[i] = result.storedJson;
    compactResults[i] = result.compactResult;
    compactShadows[i] = result.compactShadow;
    recordedSignals[i] = result.recordedSignals;
    degraded[i] = result.degraded.join(',');
    numbers[i * 2] = result.riskScore;
    numbers[i * 2 + 1] = result.evalMs;
  }
  const encoded = { decisions, storedJson, compactResults, compactShadows, recordedSignals, degraded, numbers, failures };
  return tally === undefined ? encoded : { ...encoded, tally };
}

const kNoneDegraded: readonly string[] = Object.freeze([]);

/** The result of event `i`, as the main thread uses it. */
export function resultOf(results: EvaluateTaskResult, i: number): ItemResult {
  const decision = results.decisions[i];
  if (decision === null || decision === undefined) {
    const failed = results.failures.find((entry) => entry.index === i);
    return failed?.failure ?? { ok: false, code: 'INTERNAL_ERROR', message: `the rule worker sent no result for event ${i} of the batch` };
  }
  const degraded = results.degraded[i]!;
  return {
    ok: true,
    decision,
    riskScore: results.numbers[i * 2]!,
    storedJson: results.storedJson[i]!,
    degraded: degraded === '' ? kNoneDegraded : degraded.split(','),
    compactResult: results.compactResults[i]!,
    compactShadow: results.compactShadows[i]!,
    recordedSignals: results.recordedSignals[i]!,
    evalMs: results.numbers[i * 2 + 1]!,
  };
}
