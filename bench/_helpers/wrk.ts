// Closed-loop load with wrk (Debian package `wrk`): a C load generator, so that on a two-core
// machine the generator takes as little CPU from the server as possible. autocannon, in Node,
// costs several times more per request and caps what can be measured (bench/README.md).
import { spawnSync } from 'node:child_process';
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

export function runWrk(options: WrkOptions): LoadFigures {
  const script = fileURLToPath(new URL(`../../../bench/http/${options.script}`, import.meta.url));
  const result = spawnSync('wrk', ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '-s', script, options.url], {
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`wrk failed: ${result.stderr}`);
  const out = result.stdout;
  const latencies: Record<string, number> = {};
  for (const match of out.matchAll(kLatency)) latencies[match[1]!] = toMs(Number(match[2]), match[3]!);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50Ms: latencies['50'] ?? NaN,
    p99Ms: latencies['99'] ?? NaN,
    non2xx,
    errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    statusCodes: {},
  };
}
