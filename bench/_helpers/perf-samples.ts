// Reading a `perf record -g` file (via `perf script`): self time per symbol, and time per thread
// and area. A sample's area is the first frame, from the leaf up, that names one: a JSON.parse
// that triggers a scavenge is GC, SQLite's pwrite into the kernel is SQLite, our JavaScript is
// named by its directory (src/scoring, src/validation…); a leaf nobody claims is `kernel (other)`
// or `V8/Node runtime (other)`.
import { spawnSync } from 'node:child_process';

const kAreas: ReadonlyArray<readonly [string, RegExp]> = [
  ['V8 GC', /Scavenger|MarkCompact|Heap::|ConcurrentMarking|Sweeper|MinorMarkSweep|GCTracer|MarkingVisitor|Evacuat|CppHeap/],
  ['V8 JIT', /compiler::|maglev::|Maglev|OptimizingCompileDispatcher|Compiler::Compile|baseline::|BytecodeGenerator/],
  ['SQLite', /sqlite3|better_sqlite3|better-sqlite3/],
  ['phone (libphonenumber)', /libphonenumber/],
  ['HMAC / crypto', /Hmac|HMAC|sha256|SHA256|EVP_|ossl_|node::crypto/],
  ['JSON parse / stringify', /JsonParser|JsonStringifier|Builtin_Json|JsonStringify/],
  ['messaging (postMessage, piscina)', /ValueSerializer|ValueDeserializer|MessagePort|node::worker::|\/piscina\//],
  ['ajv', /\/ajv\//],
  ['uWS', /uWS|uws_linux|us_socket|us_loop|us_internal|bsd_/],
  ['prom-client', /\/prom-client\//],
  ['libuv / event loop', /uv__|uv_run|epoll/],
];
const kOurCode = /\/dist\/((?:src|compiler)\/[^/ ]+)/;

export interface PerfSummary {
  readonly samples: number;
  /** Leaf symbol (with its library) → samples. */
  readonly symbols: Map<string, number>;
  /** Thread id → area → samples. */
  readonly threadAreas: Map<number, Map<string, number>>;
}

function areaOf(frames: readonly string[]): string {
  for (const frame of frames) {
    for (const [area, pattern] of kAreas) if (pattern.test(frame)) return area;
    const ours = kOurCode.exec(frame);
    if (ours) return `JS ${ours[1]!.replace(/\.js$/, '')}`;
  }
  return frames[0]?.includes('[kernel.kallsyms]') ? 'kernel (other)' : 'V8/Node runtime (other)';
}

/** "sym (/usr/lib/x/libfoo.so)" → "sym [libfoo.so]"; JIT frames [JIT]; script URLs from dist/ on. */
function shortFrame(frame: string): string {
  return frame
    .replace(/ \(\/tmp\/perf-\d+\.map\)$/, ' [JIT]')
    .replace(/ \((?:[^()]*\/)?([^/()]+)\)$/, ' [$1]')
    .replace(/file:\/\/\/\S*?\/(dist|node_modules)\//, '$1/');
}

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Reads `perfData` with `perf script`. */
export function readPerfSamples(perfData: string): PerfSummary {
  const result = spawnSync('perf', ['script', '-i', perfData, '-F', 'tid,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.status !== 0) throw new Error(`perf script failed: ${result.stderr}`);
  const symbols = new Map<string, number>();
  const threadAreas = new Map<number, Map<string, number>>();
  let samples = 0;
  for (const block of result.stdout.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    const tid = Number(lines[0]?.trim());
    if (lines.length < 2 || !Number.isInteger(tid)) continue;
    // "<ip> <symbol> (<library>)"
    const frames = lines.slice(1).map((line) => line.trim().replace(/^[0-9a-f]+ /, ''));
    samples++;
    bump(symbols, shortFrame(frames[0]!));
    let areas = threadAreas.get(tid);
    if (areas === undefined) threadAreas.set(tid, (areas = new Map()));
    bump(areas, areaOf(frames));
  }
  return { samples, symbols, threadAreas };
}
