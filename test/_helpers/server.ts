// Starts the real server (the compiled command line) on a free loopback port with a fresh data dir,
// and talks to it over real HTTP. Every HTTP test goes through here.
import Database from 'better-sqlite3';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { kServerNodeFlags } from '../../src/cli/node-flags.js';

export const kCliPath = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface BootstrapKeys {
  readonly tenant_id: string;
  readonly live_project_id: string;
  readonly sandbox_project_id: string;
  readonly keys: {
    readonly live_secret: { key: string; key_id: string };
    readonly sandbox_secret: { key: string; key_id: string };
    readonly live_publishable: { key: string; key_id: string };
  };
}

export interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly bootstrap: BootstrapKeys;
  readonly child: ChildProcess;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait for the exit; resolves with the exit code and signal. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Wait for an exit the test caused some other way (another signal), sending nothing. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL and wait: a crash, as far as the store can tell. */
  kill(): Promise<void>;
}

export interface StartOptions {
  /** Reuse a data dir (restart tests); a fresh temp dir otherwise. */
  readonly dataDir?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly args?: readonly string[];
  /** Node's own flags; by default those npm start passes (src/cli/node-flags.ts). */
  readonly nodeArgs?: readonly string[];
  /** Keep the data dir after stop (for restart tests); it is removed otherwise. */
  readonly keepDataDir?: boolean;
}

const madeDataDirs: string[] = [];
const liveServers = new Set<ChildProcess>();
// Test processes make their data dirs under the OS temp dir; none outlives the test file, and
// neither does a server a test left running (a failed or timed-out test does not stop its own).
process.once('exit', () => {
  for (const child of liveServers) child.kill('SIGKILL');
  for (const dir of madeDataDirs) rmSync(dir, { recursive: true, force: true });
});

export function makeDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-test-'));
  madeDataDirs.push(dir);
  return dir;
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? makeDataDir();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? kServerNodeFlags), kCliPath, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  liveServers.add(child);
  // 'close', not 'exit': a test that reads the output once the server has exited must see all of
  // it, and 'exit' can come before the pipes are read to their end.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      liveServers.delete(child);
      resolve({ code, signal });
    }),
  );

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Do not leave a server behind that might still come up.
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${output}`));
    }, 120_000); // generous: a loaded CI machine may be slow to start a server
    const check = (): void => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });

  // Read on first use: a server started on a data dir that already held a database (a restart, a
  // restored backup) made no bootstrap keys, and a test of that does not ask for them.
  let bootstrap: BootstrapKeys | null = null;
  const readBootstrap = (): BootstrapKeys =>
    (bootstrap ??= JSON.parse(readFileSync(join(dataDir, 'bootstrap-keys.json'), 'utf8')) as BootstrapKeys);
  if (options.dataDir === undefined) readBootstrap(); // a fresh data dir must have made them
  let cleaned = false;
  const cleanup = (): void => {
    if (cleaned || options.keepDataDir || options.dataDir !== undefined) return;
    cleaned = true;
    rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    get bootstrap() {
      return readBootstrap();
    },
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const result = await exited;
      cleanup();
      return result;
    },
    exited: () => exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * One server for every test of a file: started before the first test, stopped after the last.
 * Read `server` (and `key`, its live secret key) inside tests, once the server runs.
 */
export function serverForFile(test: { before(run: () => Promise<void>): void; after: { always(run: () => Promise<void>): void } }, options: StartOptions = {}): { readonly server: TestServer; readonly key: string } {
  let running: TestServer | null = null;
  test.before(async () => {
    running = await startServer(options);
  });
  test.after.always(async () => {
    await running?.stop();
  });
  return {
    get server(): TestServer {
      if (running === null) throw new Error('the file\'s server is not running yet');
      return running;
    },
    get key(): string {
      return this.server.bootstrap.keys.live_secret.key;
    },
  };
}

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { status: 0 | 1; data: T; errors: Array<{ code: string; message: string; parameter: string }> };
  readonly text: string;
}

/**
 * Test requests each get a connection of their own. A pooled keep-alive connection can sit idle
 * while the test process is blocked (a synchronous CLI run beside a test running concurrently) for
 * longer than the server keeps idle connections, and the next request on it then fails with
 * "other side closed": a race of the test client, not of the server. Floods that send thousands
 * of requests ask for `keepAlive` (fresh connections would run out of local ports).
 */
const kFreshConnections = new Agent({ pipelining: 0, connectTimeout: 120_000 });
const kKeepAlive = new Agent({ connectTimeout: 120_000 });

export interface RequestOptions {
  /** Reuse pooled connections (for floods of requests; see kFreshConnections). */
  readonly keepAlive?: boolean;
  readonly key?: string | null;
  readonly body?: unknown;
  /** Sent as is (not JSON-encoded). */
  readonly rawBody?: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One request over real HTTP; the body is JSON-encoded unless rawBody is given. */
export async function api<T = any>(server: { url: string }, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Uint8Array | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const init = { method, headers, body, dispatcher: options.keepAlive ? kKeepAlive : kFreshConnections } as RequestInit;
  let response: Response;
  try {
    response = await fetch(`${server.url}${path}`, init);
  } catch (error) {
    // A connection that was never made carried no request: trying again cannot change anything
    // twice. Anything else is reported with its cause (fetch's own message is only "fetch failed").
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code !== 'ECONNREFUSED' && cause?.code !== 'UND_ERR_CONNECT_TIMEOUT') {
      throw new Error(`${method} ${path}: ${(error as Error).message} (${cause?.code ?? 'no code'}: ${cause?.message ?? 'no cause'})`);
    }
    response = await fetch(`${server.url}${path}`, init);
  }
  const text = await response.text();
  let parsed: ApiResponse<T>['body'];
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { status: 0, data: null as T, errors: [] };
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The command line, without blocking this process meanwhile: for tests whose own servers (webhook
 * receivers) must keep answering while the command runs.
 */
export function runCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [kCliPath, ...args], { encoding: 'utf8', env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}


/** How many events with this event_id the data dir's database holds (read-only look). */
export function storedEventCount(dataDir: string, eventId: string): number {
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM events WHERE event_id = ?').get(eventId) as { n: number }).n;
  } finally {
    db.close();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `condition` until it holds. The bound is generous on purpose: it only stops a test that
 * would otherwise hang, and must never be what a slow, loaded CI machine trips over. Tests wait for
 * conditions, never for a stretch of wall-clock time.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, what: string, boundMs = 60_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${boundMs} ms`);
    await sleep(20);
  }
}
