// An open-loop HTTP/1.1 load generator: request i is due at start + i / rate whatever the server
// does, so a slow server meets the full offered load (wrk has no rate mode; autocannon's
// overallRate only paces connections that are free, a closed loop with a cap). Latency is measured
// from the moment a request was due, so time spent waiting for a free connection counts
// (no coordinated omission).
//
// Raw sockets (node:net) with keep-alive, one request at a time per connection, at most
// `maxConnections`; a due request waits for a free connection. Responses are parsed only as far as
// the status line, Content-Length and, for non-2xx answers, the body. This costs the load
// generator a fraction of what node:http or autocannon cost per request, on a machine whose two
// cores the server shares. Every request has a deadline (`timeoutMs` after it was due): past it,
// the client hangs up (the socket is destroyed), as a payment backend with a timeout would.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { eventMix } from './event-mix.js';

export interface OpenLoopOptions {
  readonly url: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: () => string;
  /** Requests per second offered. */
  readonly rate: number;
  readonly seconds: number;
  readonly timeoutMs: number;
  readonly maxConnections: number;
}

/** Status of a request that timed out after it was sent (the client hung up). */
export const kTimedOut = 0;
/** Status of a request that timed out waiting for a free connection (never sent). */
export const kNeverSent = -1;
/** Status of a request whose connection failed (reset, refused). */
export const kConnectionError = -2;

export interface OpenLoopResult {
  /** When each request was due, ms after the start. */
  readonly dueMs: Float64Array;
  /** Due → response complete (or → timeout), ms. */
  readonly latencyMs: Float64Array;
  /** HTTP status, or kTimedOut, kNeverSent, kConnectionError. */
  readonly status: Int16Array;
  /** For non-2xx answers: the body is the failure envelope { status: 0, data: null, errors: [...] } and Retry-After is set. */
  readonly refusedInEnvelope: Uint8Array;
  /** Connections opened over the run. */
  readonly connectionsOpened: number;
  /** CPU of this process (the generator) per request, µs. */
  readonly clientCpuUsPerRequest: number;
  /**
   * The generator's own stalls: [ms after the start, length ms] of each gap over 10 ms between two
   * of its 1-ms ticks (its GC, or the CPU taken from it). Answers that arrive during one are timed
   * late: a slow window that lines up with a stall is the generator's, not the server's.
   */
  readonly clientStalls: ReadonlyArray<readonly [number, number]>;
}

const kClientStallMs = 10;

interface Connection {
  readonly socket: Socket;
  /** Index of the request in flight, or -1. */
  current: number;
  connected: boolean;
  pending: Buffer | null;
  /** What has arrived of the current response. */
  received: Buffer | null;
}

function isFailureEnvelope(head: string, body: Buffer): boolean {
  if (!/\r\nretry-after:/i.test(head)) return false;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { status?: unknown; data?: unknown; errors?: unknown };
    return parsed.status === 0 && parsed.data === null && Array.isArray(parsed.errors) && parsed.errors.length > 0;
  } catch {
    return false;
  }
}

export function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { hostname, port } = new URL(options.url);
  const total = Math.floor(options.rate * options.seconds);
  const dueMs = new Float64Array(total);
  const latencyMs = new Float64Array(total);
  const status = new Int16Array(total);
  const refusedInEnvelope = new Uint8Array(total);
  const headerLines = Object.entries({ host: `${hostname}:${port}`, 'content-type': 'application/json', ...options.headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const idle: Connection[] = [];
  const busy = new Set<Connection>();
  const queue: number[] = [];
  let queueHead = 0;
  let scheduled = 0;
  let finished = 0;
  let opened = 0;
  let lastSweep = 0;
  let lastTick = 0;
  const clientStalls: Array<[number, number]> = [];
  const cpuBefore = process.cpuUsage();
  const start = performance.now();

  return new Promise((resolve) => {
    const finish = (index: number, code: number): void => {
      latencyMs[index] = performance.now() - start - dueMs[index]!;
      status[index] = code;
      finished++;
    };

    const release = (connection: Connection, keep: boolean): void => {
      busy.delete(connection);
      connection.current = -1;
      connection.received = null;
      if (keep) idle.push(connection);
      else connection.socket.destroy();
    };

    const onData = (connection: Connection, chunk: Buffer): void => {
      if (connection.current < 0) return;
      const data = connection.received === null ? chunk : Buffer.concat([connection.received, chunk]);
      connection.received = data;
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = data.toString('latin1', 0, headEnd);
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (data.length < headEnd + 4 + length) return;
      const index = connection.current;
      // An answer past the deadline that the 10 ms sweep has not caught yet: the client had gone.
      const code = performance.now() - start - dueMs[index]! >= options.timeoutMs ? kTimedOut : Number(head.slice(9, 12));
      if (code !== kTimedOut && (code < 200 || code > 299)) refusedInEnvelope[index] = isFailureEnvelope(head, data.subarray(headEnd + 4, headEnd + 4 + length)) ? 1 : 0;
      finish(index, code);
      release(connection, !/\r\nconnection:\s*close/i.test(head));
    };

    const open = (): Connection => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.setNoDelay(true);
      const connection: Connection = { socket, current: -1, connected: false, pending: null, received: null };
      opened++;
      socket.on('connect', () => {
        connection.connected = true;
        if (connection.pending !== null) socket.write(connection.pending);
        connection.pending = null;
      });
      socket.on('data', (chunk: Buffer) => onData(connection, chunk));
      socket.on('error', () => undefined); // 'close' follows
      socket.on('close', () => {
        if (connection.current >= 0) finish(connection.current, kConnectionError);
        busy.delete(connection);
        connection.current = -1;
        const at = idle.indexOf(connection);
        if (at >= 0) idle.splice(at, 1);
      });
      return connection;
    };

    const send = (index: number): void => {
      const connection = idle.pop() ?? open();
      const body = options.body();
      const request = Buffer.from(`POST ${options.path} HTTP/1.1\r\n${headerLines}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      connection.current = index;
      busy.add(connection);
      if (connection.connected) connection.socket.write(request);
      else connection.pending = request;
    };

    const tick = (): void => {
      const now = performance.now() - start;
      if (now - lastTick > kClientStallMs) clientStalls.push([lastTick, now - lastTick]);
      lastTick = now;
      const due = Math.min(total, Math.floor((now / 1000) * options.rate));
      for (; scheduled < due; scheduled++) {
        dueMs[scheduled] = (scheduled * 1000) / options.rate;
        queue.push(scheduled);
      }
      // Hang up on requests past their deadline (checked every 10 ms: a deadline is seconds).
      if (now - lastSweep >= 10) {
        lastSweep = now;
        for (const connection of busy) {
          if (now - dueMs[connection.current]! < options.timeoutMs) continue;
          finish(connection.current, kTimedOut);
          release(connection, false);
        }
      }
      while (queueHead < queue.length) {
        const index = queue[queueHead]!;
        if (now - dueMs[index]! >= options.timeoutMs) finish(index, kNeverSent);
        else if (idle.length > 0 || busy.size < options.maxConnections) send(index);
        else break;
        queueHead++;
      }
      if (queueHead > 65_536) {
        queue.splice(0, queueHead);
        queueHead = 0;
      }
      if (finished < total) {
        setTimeout(tick, 1);
        return;
      }
      for (const connection of idle) connection.socket.destroy();
      const cpu = process.cpuUsage(cpuBefore);
      resolve({ dueMs, latencyMs, status, refusedInEnvelope, connectionsOpened: opened, clientCpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, total), clientStalls });
    };
    tick();
  });
}

/**
 * The realistic mix (sync, seed 7) offered to a server at `rate` events/s: call the result with
 * a number of seconds for each run of the load (the same sequence of bodies goes on across runs).
 */
export function realisticLoad(server: { readonly url: string; readonly liveKey: string }, rate: number): (seconds: number) => Promise<OpenLoopResult> {
  const body = eventMix(7);
  return (seconds) => runOpenLoop({
    url: server.url, path: '/v1/events', headers: { authorization: `Bearer ${server.liveKey}`, 'content-type': 'application/json' },
    body, rate, seconds, timeoutMs: 2000, maxConnections: 1024,
  });
}

/** The q-quantile (0..1) of `values`, NaN when empty. */
export function quantile(values: readonly number[] | Float64Array, q: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
