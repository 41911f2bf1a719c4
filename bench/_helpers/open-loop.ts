// An open-loop HTTP/1.1 load generator: request i is due at start + i / rate whatever the server
// does, so a slow server meets the full offered load (wrk has no rate mode; autocannon's
// overallRate only paces connections that are free, a closed loop with a cap). Latency is measured
// from the moment a request was due, so time spent waiting for a free connection counts
// (no coordinated omission).
//
// The loop itself is C (open-loop.c, built here with the system's cc on first use): the generator
// shares the machine's two cores with the server, and the same loop in Node (raw sockets, a 1-ms
// timer) cost more CPU per request (16–18 µs at 2.5× capacity against 11–12) and sent each
// millisecond's requests in one bunch, timing answers up to a tick late (bench/README.md, step
// 39). Keep-alive connections, one request at a time on each, at most `maxConnections`; a due
// request waits for a free connection. Every request has a deadline (`timeoutMs` after it was
// due): past it, the client hangs up (the socket is closed), as a payment backend with a timeout
// would.
//
// The bodies are made here, before the run: `body()` is called for up to kTemplates requests,
// which the run sends in turn, each with an event id of its own (the template's `event_id`, 36
// characters, replaced by one unique to the run and the request).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventMix } from './event-mix.js';

/** Distinct bodies per run; requests past it reuse them in turn with new event ids. */
const kTemplates = 65_536;
const kSource = fileURLToPath(new URL('../../../bench/_helpers/open-loop.c', import.meta.url));

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
  /** Distinct bodies made for the run (kTemplates): a mix whose values must stay new (harsh) needs one per request. */
  readonly templates?: number;
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
  /** CPU of the generator's process per request, µs. */
  readonly clientCpuUsPerRequest: number;
  /**
   * The generator's own stalls: [ms after the start, length ms] of each gap over 10 ms between two
   * turns of its loop, which wakes at least every 5 ms (the CPU taken from it). Answers that
   * arrive during one are timed late: a slow window that lines up with a stall is the
   * generator's, not the server's.
   */
  readonly clientStalls: ReadonlyArray<readonly [number, number]>;
}

/** The generator's binary, built from open-loop.c into the temp dir once per version of the source. */
function generatorBinary(): string {
  const source = readFileSync(kSource);
  const binary = join(tmpdir(), `fraud-scorer-open-loop-${createHash('sha256').update(source).digest('hex').slice(0, 16)}`);
  if (existsSync(binary)) return binary;
  const building = `${binary}.${process.pid}`;
  execFileSync('cc', ['-O2', '-std=gnu11', '-o', building, kSource], { stdio: 'inherit' });
  renameSync(building, binary);
  return binary;
}

/** The requests file of open-loop.c: u32 count, then per request u32 length, i32 id offset, bytes. */
function requestTemplates(options: OpenLoopOptions, total: number, host: string): Buffer {
  const headerLines = Object.entries({ host, 'content-type': 'application/json', ...options.headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const count = Math.max(1, Math.min(total, options.templates ?? kTemplates));
  const parts: Buffer[] = [Buffer.alloc(4)];
  parts[0]!.writeUInt32LE(count);
  for (let i = 0; i < count; i++) {
    const body = options.body();
    const request = Buffer.from(`POST ${options.path} HTTP/1.1\r\n${headerLines}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const id = /"event_id":"([0-9a-f-]{36})"/.exec(body);
    if (id === null) throw new Error('open-loop bodies need an "event_id" of 36 characters (each request gets its own)');
    const prefix = request.indexOf(`"event_id":"${id[1]}"`);
    const head = Buffer.alloc(8);
    head.writeUInt32LE(request.length, 0);
    head.writeInt32LE(prefix + '"event_id":"'.length, 4);
    parts.push(head, request);
  }
  return Buffer.concat(parts);
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { hostname, port } = new URL(options.url);
  const total = Math.floor(options.rate * options.seconds);
  const binary = generatorBinary();
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-open-loop-'));
  try {
    const requests = join(dir, 'requests');
    const out = join(dir, 'out');
    writeFileSync(requests, requestTemplates(options, total, `${hostname}:${port}`));
    const address = hostname === 'localhost' ? '127.0.0.1' : hostname;
    const args = [address, port, String(options.rate), String(options.seconds), String(options.timeoutMs), String(options.maxConnections), requests, out];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(binary, args, { stdio: ['ignore', 'inherit', 'inherit'] });
      child.on('error', reject);
      child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`open-loop generator ended with ${signal ?? `code ${code}`}`))));
    });
    return readResult(readFileSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readResult(data: Buffer): OpenLoopResult {
  let at = 0;
  const int32 = (): number => {
    const value = data.readInt32LE(at);
    at += 4;
    return value;
  };
  const copy = <T>(make: (buffer: ArrayBuffer) => T, bytes: number): T => {
    const buffer = new ArrayBuffer(bytes);
    new Uint8Array(buffer).set(data.subarray(at, at + bytes));
    at += bytes;
    return make(buffer);
  };
  const total = int32();
  const dueMs = copy((b) => new Float64Array(b), total * 8);
  const latencyMs = copy((b) => new Float64Array(b), total * 8);
  const status = copy((b) => new Int16Array(b), total * 2);
  const refusedInEnvelope = copy((b) => new Uint8Array(b), total);
  const connectionsOpened = int32();
  const clientCpuUsPerRequest = data.readDoubleLE(at);
  at += 8;
  const stallCount = int32();
  const stalls = copy((b) => new Float64Array(b), stallCount * 16);
  const clientStalls: Array<readonly [number, number]> = [];
  for (let i = 0; i < stallCount; i++) clientStalls.push([stalls[2 * i]!, stalls[2 * i + 1]!]);
  return { dueMs, latencyMs, status, refusedInEnvelope, connectionsOpened, clientCpuUsPerRequest, clientStalls };
}

/**
 * The realistic mix (sync, seed 7) offered to a server at `rate` events/s: call the result with
 * a number of seconds for each run of the load (the same sequence of bodies goes on across runs).
 * `harsh`: the harsh mix, a body made for every request (~700 bytes each in the generator) so that
 * every device and card stays new.
 */
export function realisticLoad(server: { readonly url: string; readonly liveKey: string }, rate: number, options: { harsh?: boolean } = {}): (seconds: number) => Promise<OpenLoopResult> {
  const body = eventMix(7, options);
  return (seconds) => runOpenLoop({
    url: server.url, path: '/v1/events', headers: { authorization: `Bearer ${server.liveKey}`, 'content-type': 'application/json' },
    body, rate, seconds, timeoutMs: 2000, maxConnections: 1024, templates: options.harsh ? Number.MAX_SAFE_INTEGER : undefined,
  });
}

/** The q-quantile (0..1) of `values`, NaN when empty. */
export function quantile(values: readonly number[] | Float64Array, q: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
