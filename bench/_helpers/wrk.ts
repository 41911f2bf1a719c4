// Closed-loop load with wrk (Debian package `wrk`): a C load generator, so that on a two-core
// machine the generator takes as little CPU from the server as possible. autocannon, in Node,
// costs several times more per request and caps what can be measured (bench/README.md).
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadFigures } from './load.js';

export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

export interface WrkOptions {
  readonly url: string;
  /** A Lua script from bench/http/ (file name only). */
  readonly script: string;
  readonly env?: Record<string, string>;
  readonly connections: number;
  readonly seconds: number;
}

const kLatency = /^\s+(50|99)%\s+([\d.]+)(us|ms|s)$/gm;

function toMs(value: number, unit: string): number {
  return unit === 'us' ? value / 1000 : unit === 's' ? value * 1000 : value;
}

/** Runs wrk to the end. Asynchronous, so that this process keeps reading its servers' output. */
export async function runWrk(options: WrkOptions): Promise<LoadFigures> {
  const script = fileURLToPath(new URL(`../../../bench/http/${options.script}`, import.meta.url));
  const child = spawn('wrk', ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '-s', script, options.url], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (status !== 0) throw new Error(`wrk failed: ${stderr}`);
  const latencies: Record<string, number> = {};
  for (const match of out.matchAll(kLatency)) latencies[match[1]!] = toMs(Number(match[2]), match[3]!);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(out);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50Ms: latencies['50'] ?? NaN,
    p99Ms: latencies['99'] ?? NaN,
    non2xx,
    errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    statusCodes: {},
    requests: Number(total?.[1] ?? 0),
    seconds: total ? (total[3] === 'm' ? Number(total[2]) * 60 : toMs(Number(total[2]), total[3]!) / 1000) : options.seconds,
  };
}
