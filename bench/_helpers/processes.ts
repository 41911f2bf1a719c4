// Starting the things a benchmark measures as separate processes on loopback, and stopping them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kServerNodeFlags } from '../../src/cli/node-flags.js';

const kCli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/**
 * BENCH_NODE_ARGS: flags for the server's node, for every bench that starts it. They come after
 * npm start's (src/cli/node-flags.ts), and V8 takes the last of a flag given twice, so
 * `--allocation-site-pretenuring` measures the server without one of them.
 */
export const kBenchNodeArgs: readonly string[] = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');

export interface Started {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

export interface StartedServer extends Started {
  readonly dataDir: string;
  readonly liveKey: string;
  /** OS thread id → role, from the lines FS_ANNOUNCE_THREADS=1 makes each thread write (src/shared/threads.ts). */
  readonly threads: ReadonlyMap<number, string>;
}

/** Collects the `{"message":"thread",…}` lines of a child's stderr. */
function threadAnnouncements(child: ChildProcess): Map<number, string> {
  const threads = new Map<number, string>();
  let partial = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{"message":"thread"')) continue;
      const { role, tid } = JSON.parse(line) as { role: string; tid: number };
      threads.set(tid, role);
    }
  });
  return threads;
}

function waitForPort(child: ChildProcess, pattern: RegExp): Promise<number> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close': the pipes read to their end, so the error shows the server's last lines.
    child.once('close', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
}

function stopper(child: ChildProcess, cleanup: () => void = () => undefined): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        cleanup();
        resolve();
        return;
      }
      child.once('exit', () => {
        cleanup();
        resolve();
      });
      child.kill('SIGTERM');
    });
}

/** The real server, from the compiled command line, on a fresh data dir. */
export async function startFraudScorer(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<StartedServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fraud-scorer-bench-'));
  return startFraudScorerOn(dataDir, null, env, nodeArgs);
}

/**
 * The real server on `dataDir`, which it removes when stopped. `liveKey` null: the data dir is new,
 * and the server's first start writes the key to bootstrap-keys.json; otherwise the caller made the
 * database (bench/_helpers/store.ts) and knows its key.
 */
export async function startFraudScorerOn(dataDir: string, liveKey: string | null, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<StartedServer> {
  // As npm start runs it (src/cli/node-flags.ts), then the bench's own flags.
  const child = spawn(process.execPath, [...kServerNodeFlags, ...kBenchNodeArgs, ...nodeArgs, kCli, 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, RATE_LIMIT_PER_ROUTE: '100000000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const threads = threadAnnouncements(child);
  const port = await waitForPort(child, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const key = liveKey ?? JSON.parse(readFileSync(join(dataDir, 'bootstrap-keys.json'), 'utf8')).keys.live_secret.key;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    dataDir,
    liveKey: key,
    threads,
    stop: stopper(child, () => rmSync(dataDir, { recursive: true, force: true })),
  };
}

/** A bare uWebSockets.js process doing the same JSON work as a route (bench/http/bare-uws.ts). */
export async function startBareUws(): Promise<Started> {
  const script = fileURLToPath(new URL('../http/bare-uws.js', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitForPort(child, /bare uws on (\d+)/);
  return { url: `http://127.0.0.1:${port}`, port, child, stop: stopper(child) };
}
