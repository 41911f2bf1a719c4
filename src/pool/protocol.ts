// The messages between the main thread and the rule-evaluation workers. Plain data only: class
// identity does not survive postMessage, so errors travel as values with the interface's code.
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

export interface EvaluateTask {
  readonly items: readonly EvaluateItem[];
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

export interface EvaluateTaskResult {
  readonly results: ItemResult[];
  /** Decisions and rule matches of the batch, for /metrics (pool/outcome-tally.ts). */
  readonly tally?: Tally;
}
