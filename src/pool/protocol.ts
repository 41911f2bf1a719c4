// The messages between the main thread and the rule-evaluation workers. Plain data only: class
// identity does not survive postMessage, so errors travel as values with the interface's code.
import type { Environment } from '../auth/api-keys.js';
import type { Decision, Thresholds } from '../scoring/score-result.js';
import type { StoredIdentifier } from '../signals/stored-identifiers.js';
import type { VelocitySignals } from '../signals/velocity.js';
import type { Tally } from './outcome-tally.js';

export interface WorkerSetup {
  /** The data dir: workers open the database read-only for ruleset sources and stored signals. */
  readonly dataDir: string;
  /** The install secret (base64) for keyed hashes of signal values. */
  readonly installSecret: string;
  /** Test-suite faults (config FAULT_INJECTION) the worker simulates; empty in production. */
  readonly faults: readonly string[];
  /** The lists clock (lists/lists-clock.ts), shared with the HTTP thread. */
  readonly listsClock: SharedArrayBuffer;
}

/** What the worker must compute besides the rules (bit flags, so the message stays small). */
export const enum Needs {
  None = 0,
  /** The ruleset reads `links`. */
  Links = 1,
  /** The ruleset reads `account`. */
  Account = 2,
  /** The event has an account: its signal values are hashed and masked for storage. */
  StoredIdentifiers = 4,
}

export interface EvaluateItem {
  readonly projectId: string;
  readonly tenantId: string;
  /** Accounts, signals and links belong to the tenant's environment (DESIGN §8). */
  readonly environment: Environment;
  readonly eventId: string;
  readonly version: number;
  /** The policy published with this version. */
  readonly policy: Thresholds;
  /**
   * The validated event body as received (JSON text). Sent as text because copying a string to the
   * worker costs the HTTP thread far less than cloning the parsed object; the worker parses it.
   */
  readonly payload: string;
  readonly accountId: string | null;
  /** Computed on the main thread (in-memory windows); null when the ruleset does not read it. */
  readonly velocity: VelocitySignals | null;
  readonly needs: number;
  /** Epoch ms: the `now` rules see. */
  readonly now: number;
  /** The request that brought the event (x-request-id), for the log; null for a restarted async event. */
  readonly requestId: string | null;
}

export interface EvaluateTask {
  readonly items: readonly EvaluateItem[];
}

export type { StoredIdentifier } from '../signals/stored-identifiers.js';

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
      readonly identifiers: readonly StoredIdentifier[];
    }
  /**
   * COMPILED_RULES_UNAVAILABLE: the ruleset cannot be loaded, the event spent its whole evaluation
   * budget (`overBudget`), or its worker died on it; INTERNAL_ERROR: the signals could not be read.
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
