// JSON lines on stderr: one object per event, easy to ship and grep. Keys and bodies are never
// logged; callers pass identifiers (request id, key id, project id) only.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const kLogLevels: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const kLevels: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(minimum: LogLevel = 'info', write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const floor = kLevels[minimum];
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (kLevels[level] < floor) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level, message, ...fields };
    if (fields?.error instanceof Error) entry.error = { name: fields.error.name, message: fields.error.message, stack: fields.error.stack };
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}

/** One request of the access log (ACCESS_LOG=on). The key itself never appears, only its id. */
export interface AccessEntry {
  readonly request_id: string;
  /** As sent (HEAD, OPTIONS included). */
  readonly method: string;
  /** The route pattern (`/v1/scores/:event_id`), never the concrete path; 'unmatched' without a route. */
  readonly route: string;
  /** 499 when the client went away before the answer. */
  readonly status: number;
  readonly duration_ms: number;
  readonly key_id: string | null;
}

export type AccessLog = (entry: AccessEntry) => void;

/** The access log: one JSON line per request, whatever LOG_LEVEL says (it is switched on by itself). */
export function createAccessLog(write: (line: string) => void = (line) => process.stderr.write(line)): AccessLog {
  return (entry) => write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', message: 'request', ...entry })}\n`);
}

/**
 * At most `perWindow` lines per key in each window of `windowMs`; the rest are counted, not
 * written. Under overload thousands of requests a second can be refused, and writing a line for
 * each (stderr to a pipe is synchronous) would make the refusals themselves slow. Pure: the clock
 * is passed in.
 */
export class LogBudget {
  readonly #perWindow: number;
  readonly #windowMs: number;
  readonly #windows = new Map<string, { start: number; used: number; leftOut: number }>();

  constructor(perWindow: number, windowMs: number) {
    this.#perWindow = perWindow;
    this.#windowMs = windowMs;
  }

  /** null: leave this line out; else write it, with the number of lines left out since the last. */
  take(key: string, now: number): number | null {
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = { start: now, used: 0, leftOut: 0 };
      this.#windows.set(key, window);
    } else if (now - window.start >= this.#windowMs) {
      window.start = now;
      window.used = 0;
    }
    if (window.used >= this.#perWindow) {
      window.leftOut++;
      return null;
    }
    window.used++;
    const leftOut = window.leftOut;
    window.leftOut = 0;
    return leftOut;
  }
}
