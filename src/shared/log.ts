// JSON lines on stderr: one object per event, easy to ship and grep. Keys and bodies are never
// logged; callers pass identifiers (request id, key id, project id) only.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
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
