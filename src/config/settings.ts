// Every operator setting in one table (DESIGN §5): flag, environment variable, type, default.
// Settings come from flags, then the environment, then the defaults; the resolved object is
// checked against each setting's range or choices and frozen before anything else starts.
import { availableParallelism } from 'node:os';

interface SettingDefinition {
  readonly flag: string;
  readonly env: string;
  readonly type: 'string' | 'integer' | 'boolean';
  readonly default: string | number | boolean;
  readonly minimum?: number;
  readonly maximum?: number;
  /** For strings: the only values accepted. */
  readonly choices?: readonly string[];
  readonly description: string;
}

/**
 * Faults the test-suite can switch on to exercise failure answers that have no other trigger on
 * demand. rate_limiter_unready: the limiter reports not ready (503 RATE_LIMIT_UNAVAILABLE).
 * hold_points: the pipeline stops at named points until the test releases them
 * (shared/fault-latch.ts): an event with `extras.fault_hold: "<name>"` before its result is stored,
 * and the background scorer before it starts (`async-scorer`); with `extras.fault_hold_before: "<name>"`
 * an event waits before its scoring starts (to let its client go away first).
 * rule_worker_oom, rule_worker_hang: a rule worker that meets an event whose body contains that
 * word as a string runs out of memory, or loops until its task is aborted (pool/worker.ts).
 * derived_rows_fail: every bulk write of derived rows fails (accounts/derived-flush.ts), so they
 * stay in memory and an erasure must find the account's latest events in the log.
 * case_folds_fail: every bulk write of new cases and case events fails (the same flusher), so they
 * are answered from memory, those a crash left included.
 * erasure_read_fails: an erasure fails while it reads its account's stored events, as it would if a
 * module could not be loaded (accounts/accounts-service.ts): it must change nothing.
 * start_held: the start waits at the hold point 'start' (a signal taken during the start).
 */
export const kFaults = ['rate_limiter_unready', 'hold_points', 'rule_worker_oom', 'rule_worker_hang', 'derived_rows_fail', 'case_folds_fail', 'port_taken_after_check', 'erasure_read_fails', 'start_held'] as const;
export type Fault = (typeof kFaults)[number];

export const kSettings = {
  host: { flag: 'host', env: 'HOST', type: 'string', default: '127.0.0.1', description: 'Address to listen on.' },
  port: {
    flag: 'port', env: 'PORT', type: 'integer', default: 8080, minimum: 0, maximum: 65535,
    description: 'Port to listen on (0 picks a free port and prints it).',
  },
  dataDir: {
    flag: 'data-dir', env: 'DATA_DIR', type: 'string', default: './data',
    description: 'Folder holding the database and bootstrap-keys.json.',
  },
  workers: {
    flag: 'workers', env: 'WORKERS', type: 'integer', default: 0, minimum: 0, maximum: 64,
    description: 'Rule-evaluation worker threads (0: one less than the CPU count, at least 1).',
  },
  workerMaxHeapMb: {
    flag: 'worker-max-heap-mb', env: 'WORKER_MAX_HEAP_MB', type: 'integer', default: 512, minimum: 16, maximum: 16_384,
    description: 'Heap limit of each rule-evaluation thread, in MiB; a thread past it is replaced and only its event fails.',
  },
  workerTaskTimeoutMs: {
    flag: 'worker-task-timeout-ms', env: 'WORKER_TASK_TIMEOUT_MS', type: 'integer', default: 30_000, minimum: 100, maximum: 600_000,
    description: 'A batch of events not evaluated within this (plus 1 s per event) ends its rule thread; its events are retried one by one.',
  },
  rateLimitWindowSeconds: {
    flag: 'rate-limit-window-seconds', env: 'RATE_LIMIT_WINDOW_SECONDS', type: 'integer', default: 60,
    minimum: 1, maximum: 86_400, description: 'Length of the fixed rate-limit window.',
  },
  rateLimitPerRoute: {
    flag: 'rate-limit-per-route', env: 'RATE_LIMIT_PER_ROUTE', type: 'integer', default: 1000, minimum: 1,
    maximum: 100_000_000, description: 'Requests per key and per method and route, per window.',
  },
  rateLimitFpPerKey: {
    flag: 'rate-limit-fp-per-key', env: 'RATE_LIMIT_FP_PER_KEY', type: 'integer', default: 10_000, minimum: 1,
    maximum: 100_000_000, description: 'POST /v1/fp/collect requests per key, per window.',
  },
  rateLimitFpPerKeyAndAddress: {
    flag: 'rate-limit-fp-per-key-and-address', env: 'RATE_LIMIT_FP_PER_KEY_AND_ADDRESS', type: 'integer',
    default: 60, minimum: 1, maximum: 100_000_000,
    description: 'POST /v1/fp/collect requests per key and caller address (an IPv6 address by its /64), per window.',
  },
  rateLimitFailedKeyLookups: {
    flag: 'rate-limit-failed-key-lookups', env: 'RATE_LIMIT_FAILED_KEY_LOOKUPS', type: 'integer', default: 60,
    minimum: 1, maximum: 100_000_000,
    description: 'Failed lookups of well-formed keys per caller address (an IPv6 address by its /64), per window.',
  },
  asyncQueueLimit: {
    flag: 'async-queue-limit', env: 'ASYNC_QUEUE_LIMIT', type: 'integer', default: 1_000_000, minimum: 1, maximum: 10_000_000,
    description: 'Async events accepted but not yet scored, per environment (live and sandbox have a queue each); past it, async answers 503 ASYNC_UNAVAILABLE. Events that cannot be scored yet (no published ruleset) are bounded per project by it instead.',
  },
  asyncRetryDelayMs: {
    flag: 'async-retry-delay-ms', env: 'ASYNC_RETRY_DELAY_MS', type: 'integer', default: 1000, minimum: 10, maximum: 600_000,
    description: 'First pause before an async event that could not be scored (no published ruleset yet) is tried again; it doubles per attempt up to 10 minutes. A publish tries them all at once.',
  },
  maxEventsInFlight: {
    flag: 'max-events-in-flight', env: 'MAX_EVENTS_IN_FLIGHT', type: 'integer', default: 512, minimum: 1, maximum: 1_000_000,
    description: 'POST /v1/events being scored or stored at once, at most; past it, 503 at once with Retry-After (overload is refused at the door).',
  },
  overloadEventsInFlight: {
    flag: 'overload-events-in-flight', env: 'OVERLOAD_EVENTS_IN_FLIGHT', type: 'integer', default: 64, minimum: 1, maximum: 1_000_000,
    description: 'POST /v1/events in flight that the server should not stay at: once as many have been in flight for OVERLOAD_AFTER_MS, past it 503 at once. Sandbox events hold at most half of it.',
  },
  overloadAfterMs: {
    flag: 'overload-after-ms', env: 'OVERLOAD_AFTER_MS', type: 'integer', default: 150, minimum: 0, maximum: 60_000,
    description: 'How long OVERLOAD_EVENTS_IN_FLIGHT may be passed before it refuses (and how long below it ends that); 0: at once.',
  },
  derivedFlushMs: {
    flag: 'derived-flush-ms', env: 'DERIVED_FLUSH_MS', type: 'integer', default: 5000, minimum: 10, maximum: 3_600_000,
    description: 'How often the rows that follow from scored events (account counts and event seqs, signals, links; new cases and the events that join open cases) are written, in bulk; a crash loses none (they are rebuilt from the events at start). Longer: fewer WAL bytes per event, tables further behind, more events replayed after a crash.',
  },
  caseEventsWaitMs: {
    flag: 'case-events-wait-ms', env: 'CASE_EVENTS_WAIT_MS', type: 'integer', default: 30000, minimum: 0, maximum: 3_600_000,
    description: 'How long the events that join an open case whose row is written wait in memory before they are written into it, all of the case\'s at once, with the first bulk write after (new cases are written with the next one; GET /v1/cases shows both at once). Longer: fewer WAL bytes for cases that keep getting events, more of the log read at a start after a crash. 0: with every bulk write.',
  },
  webhookRetryBaseMs: {
    flag: 'webhook-retry-base-ms', env: 'WEBHOOK_RETRY_BASE_MS', type: 'integer', default: 5000, minimum: 1, maximum: 3_600_000,
    description: 'First decision-webhook retry delay; doubles per attempt, with jitter.',
  },
  webhookRetryMaxDelayMs: {
    flag: 'webhook-retry-max-delay-ms', env: 'WEBHOOK_RETRY_MAX_DELAY_MS', type: 'integer', default: 3_600_000, minimum: 1,
    maximum: 86_400_000, description: 'Longest delay between two webhook retries.',
  },
  webhookRetryHours: {
    flag: 'webhook-retry-hours', env: 'WEBHOOK_RETRY_HOURS', type: 'integer', default: 72, minimum: 1, maximum: 720,
    description: 'Webhook retries stop this long after the decision.',
  },
  webhookTimeoutMs: {
    flag: 'webhook-timeout-ms', env: 'WEBHOOK_TIMEOUT_MS', type: 'integer', default: 10_000, minimum: 100, maximum: 120_000,
    description: 'How long a webhook receiver may take to answer.',
  },
  sqliteBusyTimeoutMs: {
    flag: 'sqlite-busy-timeout-ms', env: 'SQLITE_BUSY_TIMEOUT_MS', type: 'integer', default: 2000, minimum: 0, maximum: 60_000,
    description: 'How long the writer waits for a lock held by another process (a backup, the CLI).',
  },
  auditRetentionDays: {
    flag: 'audit-retention-days', env: 'AUDIT_RETENTION_DAYS', type: 'integer', default: 400, minimum: 1, maximum: 36_500,
    description: 'Audit records older than this many days are deleted by a background purge (hourly, and at start).',
  },
  logLevel: {
    flag: 'log-level', env: 'LOG_LEVEL', type: 'string', default: 'info', choices: ['debug', 'info', 'warn', 'error'],
    description: 'Least severe log lines written (JSON lines on stderr): debug, info, warn or error.',
  },
  accessLog: {
    flag: 'access-log', env: 'ACCESS_LOG', type: 'boolean', default: false,
    description: 'on: one JSON line per request on stderr (time, request id, method, route, status, duration, key id).',
  },
  faultInjection: {
    flag: 'fault-injection', env: 'FAULT_INJECTION', type: 'string', default: 'none',
    description: `Testing only: comma list of faults to simulate (${kFaults.join(', ')}). Never set in production.`,
  },
  trustProxy: {
    flag: 'trust-proxy', env: 'TRUST_PROXY', type: 'boolean', default: false,
    description: 'off: the caller address is the socket peer; on: the last hop of X-Forwarded-For.',
  },
} as const satisfies Record<string, SettingDefinition>;

export type SettingName = keyof typeof kSettings;

type ValueOf<D> = D extends { type: 'integer' } ? number : D extends { type: 'boolean' } ? boolean : string;
export type Config = { readonly [K in SettingName]: ValueOf<(typeof kSettings)[K]> };

/** Flag values as node:util parseArgs returns them (every setting flag takes a string). */
export type SettingFlags = Partial<Record<string, string | boolean | undefined>>;

export class ConfigError extends Error {}

function faultList(value: string): string[] {
  return value === 'none' ? [] : value.split(',').map((fault) => fault.trim()).filter((fault) => fault !== '');
}

export function hasFault(config: Config, fault: Fault): boolean {
  return faultList(config.faultInjection).includes(fault);
}

const kBooleanWords: Record<string, boolean> = { on: true, true: true, '1': true, yes: true, off: false, false: false, '0': false, no: false };

/**
 * What is wrong with a converted value (in the words a JSON schema validator would use), or null.
 * convert() already gave it its type; this checks its range and choices.
 */
function settingProblem(value: unknown, setting: SettingDefinition): string | null {
  if (setting.type === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be integer';
    if (setting.minimum !== undefined && value < setting.minimum) return `must be >= ${setting.minimum}`;
    if (setting.maximum !== undefined && value > setting.maximum) return `must be <= ${setting.maximum}`;
    return null;
  }
  if (setting.type === 'boolean') return typeof value === 'boolean' ? null : 'must be boolean';
  if (typeof value !== 'string' || value === '') return 'must be a non-empty string';
  if (setting.choices !== undefined && !setting.choices.includes(value)) return `must be one of ${setting.choices.join(', ')}`;
  return null;
}

/** Resolves every setting (flag, then environment, then default), validates, and freezes. */
export function loadConfig(flags: SettingFlags, env: NodeJS.ProcessEnv): Config {
  const resolved: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(kSettings) as Array<[SettingName, SettingDefinition]>) {
    const flagValue = flags[setting.flag];
    // An empty flag (`--data-dir "$DIR"` with DIR unset) is a mistake, not a wish for the default:
    // taken as unset, it would pass over the environment too, and `--data-dir ""` would make a new
    // database in ./data with new keys. (An empty environment variable counts as unset, as usual.)
    if (flagValue === '') throw new ConfigError(`--${setting.flag}: empty value; give a value, or leave the flag out to use ${setting.env} or the default`);
    const raw = typeof flagValue === 'string' ? flagValue : env[setting.env];
    const source = typeof flagValue === 'string' ? `--${setting.flag}` : setting.env;
    resolved[name] = raw === undefined || raw === '' ? setting.default : convert(raw, setting, source);
  }
  for (const [name, setting] of Object.entries(kSettings) as Array<[SettingName, SettingDefinition]>) {
    const problem = settingProblem(resolved[name], setting);
    if (problem !== null) throw new ConfigError(`${setting.env} / --${setting.flag}: ${problem}`);
  }
  for (const fault of faultList(resolved.faultInjection as string)) {
    if (!(kFaults as readonly string[]).includes(fault)) {
      throw new ConfigError(`FAULT_INJECTION / --fault-injection: unknown fault ${JSON.stringify(fault)}; known: ${kFaults.join(', ')}`);
    }
  }
  const headerProblem = maxHeaderBytesProblem(env.UWS_HTTP_MAX_HEADERS_SIZE);
  if (headerProblem !== null) throw new ConfigError(`UWS_HTTP_MAX_HEADERS_SIZE: ${headerProblem}`);
  if (resolved.workers === 0) resolved.workers = Math.max(1, availableParallelism() - 1);
  return Object.freeze(resolved) as Config;
}

/**
 * Settings each in range that contradict each other: the server runs (the outcome is defined), but
 * one of them has no effect, which the operator should hear of at the start (main.ts logs them).
 */
export function settingWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.overloadEventsInFlight > config.maxEventsInFlight) {
    warnings.push(`OVERLOAD_EVENTS_IN_FLIGHT (${config.overloadEventsInFlight}) is above MAX_EVENTS_IN_FLIGHT (${config.maxEventsInFlight}): never reached, so overload is refused only at ${config.maxEventsInFlight}`);
  }
  if (config.webhookRetryBaseMs > config.webhookRetryMaxDelayMs) {
    warnings.push(`WEBHOOK_RETRY_BASE_MS (${config.webhookRetryBaseMs}) is above WEBHOOK_RETRY_MAX_DELAY_MS (${config.webhookRetryMaxDelayMs}): every webhook retry, the first too, waits half of it to all of it (no doubling)`);
  }
  return warnings;
}

/** The request headers' limit uWebSockets.js reads from the environment itself (src/http/uws-limits.ts), whose C parser takes junk as 0: every request 431. */
const kMaxHeaderBytesRange = [1024, 1_048_576] as const;

function maxHeaderBytesProblem(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (!/^\d+$/.test(raw.trim())) return `expected a number of bytes, got ${JSON.stringify(raw)}`;
  const bytes = Number(raw.trim());
  const [low, high] = kMaxHeaderBytesRange;
  return bytes < low || bytes > high ? `must be between ${low} and ${high} bytes` : null;
}

function convert(raw: string, setting: SettingDefinition, source: string): unknown {
  if (setting.type === 'string') {
    // `DATA_DIR="/srv/data "` (an env file keeps the space) would start a new install beside the
    // real one, with new keys: refused, as no path, address or word here starts or ends with one.
    if (raw !== raw.trim()) throw new ConfigError(`${source}: ${JSON.stringify(raw)} has white space around it; remove it`);
    return raw;
  }
  if (setting.type === 'boolean') {
    const value = kBooleanWords[raw.trim().toLowerCase()];
    if (value === undefined) throw new ConfigError(`${source}: expected on or off, got ${JSON.stringify(raw)}`);
    return value;
  }
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${source}: expected an integer, got ${JSON.stringify(raw)}`);
  return Number(raw.trim());
}

/** Help lines for the settings, shared by `serve --help` and the README. */
export function describeSettings(): string {
  return Object.values(kSettings as Record<string, SettingDefinition>)
    .map((s) => `  --${s.flag.padEnd(36)} ${s.env.padEnd(36)} default ${showDefault(s.default).padEnd(10)} ${s.description}`)
    .join('\n');
}

/** A default as the operator writes it: booleans as on/off, the words the settings take. */
function showDefault(value: string | number | boolean): string {
  return typeof value === 'boolean' ? (value ? 'on' : 'off') : String(value);
}
