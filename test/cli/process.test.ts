// The server as an operator runs it, through real processes: one server per port and per data
// dir, a failed start that ends at once with one line, and `npm start` passing signals through
// (no orphan holding the port).
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { chmodSync, closeSync, existsSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { api, kCliPath, makeDataDir, startServer, waitFor } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';

const kRepository = fileURLToPath(new URL('../../..', import.meta.url));

interface Finished {
  readonly code: number | null;
  readonly output: string;
}

/**
 * Runs `fraud-scorer serve` that is expected to refuse to start. If it comes up instead, it is
 * stopped and the test fails, rather than the test hanging on a server that never exits.
 */
async function failedStart(args: readonly string[], host = '127.0.0.1'): Promise<Finished> {
  const child = spawn(process.execPath, [kCliPath, 'serve', '--host', host, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => {
    // 'close', not 'exit': 'exit' can come before the pipes are read to their end, and the
    // refusal line would be missing from the output (it was, in one CI run).
    child.once('close', (exitCode) => resolve(exitCode));
    void waitFor(() => output.includes('listening on') || child.exitCode !== null, 'the second server to exit or listen').then(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
  });
  return { code, output };
}

/** The refusal: exit status 1, and the one line on stderr with no stack trace. */
function assertOneLineRefusal(t: import('ava').ExecutionContext, finished: Finished, pattern: RegExp): void {
  t.is(finished.code, 1, finished.output);
  const refusal = finished.output.split('\n').filter((line) => line.startsWith('fraud-scorer serve:'));
  t.is(refusal.length, 1, finished.output);
  t.regex(refusal[0]!, pattern);
  t.false(/^\s+at /m.test(finished.output), 'no stack trace');
  t.false(finished.output.includes('listening on'));
}

test('a second server on the same port exits 1 with one line; the first keeps every request', async (t) => {
  const first = await startServer();
  t.teardown(() => first.stop());
  const dataDir = makeDataDir();
  const second = await failedStart(['--port', String(first.port), '--data-dir', dataDir]);
  assertOneLineRefusal(t, second, new RegExp(`^fraud-scorer serve: cannot listen on 127\\.0\\.0\\.1:${first.port}: another process is listening there$`));
  // Found before the store was opened: no database, no keys made.
  t.false(existsSync(join(dataDir, 'fraud-scorer.db')));
  t.false(existsSync(join(dataDir, 'bootstrap-keys.json')));
  // Had both listened, the kernel would share connections between them, and the second server
  // does not know the first one's key.
  const statuses = await Promise.all(Array.from({ length: 20 }, () => api(first, 'POST', '/v1/events', { key: first.bootstrap.keys.live_secret.key, body: minimalEvent() }).then((r) => r.status)));
  t.deepEqual([...new Set(statuses)], [200]);
});

test('a port held by another program: exit 1 at once, one line, no stack, nothing made; taken after the check, the listen fails the same way', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const port = (holder.address() as { port: number }).port;
  const dataDir = makeDataDir();
  // Refused before anything is opened or made.
  const early = await failedStart(['--port', String(port), '--data-dir', dataDir]);
  assertOneLineRefusal(t, early, new RegExp(`^fraud-scorer serve: cannot listen on 127\\.0\\.0\\.1:${port}: another process is listening there$`));
  t.false(existsSync(join(dataDir, 'fraud-scorer.db')));
  // The port taken after that check (the fault skips it): the listen fails once the store is up. A
  // first start: the keys it made are in their file, and the line says so (they are not printed again).
  const late = await failedStart(['--port', String(port), '--data-dir', dataDir, '--fault-injection', 'port_taken_after_check']);
  assertOneLineRefusal(t, late, new RegExp(`^fraud-scorer serve: cannot listen on 127\\.0\\.0\\.1:${port}: another process is listening there; this first start made the tenant and its keys: they are in .*bootstrap-keys\\.json \\(not printed again\\)$`));
  t.true(existsSync(join(dataDir, 'bootstrap-keys.json')));
  const again = await failedStart(['--port', String(port), '--data-dir', dataDir, '--fault-injection', 'port_taken_after_check']);
  assertOneLineRefusal(t, again, new RegExp(`^fraud-scorer serve: cannot listen on 127\\.0\\.0\\.1:${port}: another process is listening there$`));
});

test('an address that is not this machine\'s: exit 1 at once, one line, nothing made, also with port 0', async (t) => {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
  for (const port of ['0', '18081']) {
    const dataDir = makeDataDir();
    const refused = await failedStart(['--port', port, '--data-dir', dataDir], '192.0.2.1');
    assertOneLineRefusal(t, refused, new RegExp(`^fraud-scorer serve: cannot listen on 192\\.0\\.2\\.1:${port}: the address is not one of this machine's$`));
    t.false(existsSync(join(dataDir, 'fraud-scorer.db')), `port ${port}: no database`);
    t.false(existsSync(join(dataDir, 'bootstrap-keys.json')), `port ${port}: no keys`);
  }
});

test('a data dir that is a file: exit 1 at once, one line, the file untouched', async (t) => {
  const file = join(makeDataDir(), 'not-a-dir');
  writeFileSync(file, 'mine', { mode: 0o644 });
  chmodSync(file, 0o644);
  const refused = await failedStart(['--port', '0', '--data-dir', file]);
  assertOneLineRefusal(t, refused, /^fraud-scorer serve: the data dir .*not-a-dir is not a directory; give a directory \(it is made if it does not exist\)$/);
  t.is(readFileSync(file, 'utf8'), 'mine');
  t.is(statSync(file).mode & 0o777, 0o644, 'its mode unchanged');
});

test('a command whose answer cannot be written (a full disk) fails in one line, not with a stack; a reader that closes early is no failure', async (t) => {
  const full = openSync('/dev/full', 'w');
  t.teardown(() => closeSync(full));
  const child = spawn(process.execPath, [kCliPath, 'keys', '--help'], { stdio: ['ignore', full, 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  t.is(code, 1);
  t.is(stderr, 'fraud-scorer: the answer could not be written: ENOSPC: no space left on device, write\n');
  // A reader gone before the answer is written: EPIPE, status 0 and nothing on stderr.
  const early = spawn(process.execPath, [kCliPath, 'keys', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  early.stdout!.destroy();
  let earlyErr = '';
  early.stderr!.setEncoding('utf8').on('data', (chunk: string) => (earlyErr += chunk));
  t.is(await new Promise<number | null>((resolve) => early.once('close', resolve)), 0);
  t.is(earlyErr, '');
});

test('a data dir that cannot be made (under a file): exit 1 at once, one line, not a stack', async (t) => {
  const file = join(makeDataDir(), 'a-file');
  writeFileSync(file, 'mine');
  const refused = await failedStart(['--port', '0', '--data-dir', join(file, 'data')]);
  assertOneLineRefusal(t, refused, /^fraud-scorer serve: the data dir .*a-file\/data could not be made or secured: ENOTDIR: not a directory, mkdir .*$/);
  t.is(readFileSync(file, 'utf8'), 'mine');
});

test('a folder that holds other files and no database is not taken for a data dir: exit 1, one line, nothing in it changed', async (t) => {
  const folder = makeDataDir();
  const notes = join(folder, 'notes.txt');
  writeFileSync(notes, 'mine');
  chmodSync(folder, 0o755);
  chmodSync(notes, 0o644);
  const refused = await failedStart(['--port', '0', '--data-dir', folder]);
  assertOneLineRefusal(t, refused, /^fraud-scorer serve: the data dir .* holds other files and no fraud-scorer\.db; give a new or empty folder, or a data dir of fraud-scorer \(every file in one is made private\)$/);
  t.is(statSync(notes).mode & 0o777, 0o644, 'the file keeps its mode');
  t.is(statSync(folder).mode & 0o777, 0o755, 'the folder keeps its mode');
  t.false(existsSync(join(folder, 'fraud-scorer.db')));
});

test('a WAL without its database is not a data dir to start over in: refused, the WAL kept; a database that is a folder: refused', async (t) => {
  const folder = makeDataDir();
  writeFileSync(join(folder, 'fraud-scorer.db-wal'), 'commits');
  const refused = await failedStart(['--port', '0', '--data-dir', folder]);
  assertOneLineRefusal(t, refused, /^fraud-scorer serve: the data dir .* holds other files and no fraud-scorer\.db;/);
  t.is(readFileSync(join(folder, 'fraud-scorer.db-wal'), 'utf8'), 'commits');
  const other = makeDataDir();
  mkdirSync(join(other, 'fraud-scorer.db'));
  const notAFile = await failedStart(['--port', '0', '--data-dir', other]);
  assertOneLineRefusal(t, notAFile, /^fraud-scorer serve: .*fraud-scorer\.db is not a file; the data dir holds the database as a file of that name$/);
});

test('a database linked into another data dir is refused: the one-server lock is the data dir\'s, and a second server would write it beside the first', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const second = makeDataDir();
  symlinkSync(join(server.dataDir, 'fraud-scorer.db'), join(second, 'fraud-scorer.db'));
  const refused = await failedStart(['--port', '0', '--data-dir', second]);
  assertOneLineRefusal(t, refused, /^fraud-scorer serve: .*fraud-scorer\.db is a symbolic link; the data dir holds the database itself \(to keep it elsewhere, point DATA_DIR at a data dir there\)$/);
  t.is((await api(server, 'GET', '/healthz')).status, 200, 'the first server goes on');
});

test('a database with another hard link is refused: two data dirs would each have a WAL of one file', async (t) => {
  const server = await startServer({ keepDataDir: true });
  await server.stop();
  const second = makeDataDir();
  linkSync(join(server.dataDir, 'fraud-scorer.db'), join(second, 'fraud-scorer.db'));
  for (const dataDir of [server.dataDir, second]) {
    const refused = await failedStart(['--port', '0', '--data-dir', dataDir]);
    assertOneLineRefusal(t, refused, /^fraud-scorer serve: .*fraud-scorer\.db has other hard links \(made by ln or cp -l\): remove them; the data dir holds the database alone, and copies are made with fraud-scorer backup$/);
  }
});

test('DATA_DIR with a space at its end is refused (exit 2), not a new install in a folder named with the space', async (t) => {
  const parent = makeDataDir();
  const child = spawn(process.execPath, [kCliPath, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATA_DIR: `${join(parent, 'data')} ` } });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => {
    child.once('close', resolve);
    // Started after all (the refusal missing): stopped, and the test fails.
    void waitFor(() => output.includes('listening on') || child.exitCode !== null, 'the server to exit or listen').then(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
  });
  t.is(code, 2, output);
  t.regex(output, /DATA_DIR: ".*data " has white space around it; remove it/);
  t.deepEqual(readdirSync(parent), [], 'no folder made');
});

test('a folder holding only lost+found (a file system of its own) is a new data dir', async (t) => {
  const folder = makeDataDir();
  mkdirSync(join(folder, 'lost+found'));
  const server = await startServer({ dataDir: folder });
  t.teardown(() => server.stop());
  t.is((await api(server, 'GET', '/healthz')).status, 200);
});

test('a data dir where the kernel makes nothing (under /proc): exit 1 at once, one line', async (t) => {
  // Node's recursive mkdir loops forever there (it answers ENOENT under a parent that exists).
  const refused = await failedStart(['--port', '0', '--data-dir', `/proc/fraud-scorer-${process.pid}/data`]);
  assertOneLineRefusal(t, refused, /^fraud-scorer serve: the data dir \/proc\/fraud-scorer-\d+\/data could not be made or secured: ENOENT: no such file or directory, mkdir .*$/);
});

test('a second server on the same data dir exits 1 with one line; after the first is killed, a new one starts', async (t) => {
  const dataDir = makeDataDir();
  const first = await startServer({ dataDir });
  t.teardown(() => first.kill());
  const second = await failedStart(['--port', '0', '--data-dir', dataDir]);
  assertOneLineRefusal(t, second, /^fraud-scorer serve: the data dir .* is in use by another fraud-scorer process, a server or a command running the server's parts \(it holds .*server\.lock\)$/);
  t.is((await api(first, 'GET', '/healthz')).status, 200);
  // SIGKILL: no clean stop. The lock is the kernel's, so it goes with the process.
  await first.kill();
  const third = await startServer({ dataDir });
  t.teardown(() => third.stop());
  t.is((await api(third, 'POST', '/v1/events', { key: first.bootstrap.keys.live_secret.key, body: minimalEvent() })).status, 200);
});

// ---- npm start ------------------------------------------------------------------------------

interface NpmStart {
  readonly npm: ChildProcess;
  readonly serverPid: number;
  readonly url: string;
  output(): string;
  exited: Promise<void>;
}

/** `npm start` in the checkout, on a free port and a fresh data dir, in its own process group. */
async function npmStart(): Promise<NpmStart> {
  // npm's own entry when the tests run under npm (npm test), else the npm on PATH.
  const execPath = process.env.npm_execpath;
  const [command, args] = execPath !== undefined && execPath.endsWith('.js') ? [process.execPath, [execPath, 'start']] : ['npm', ['start']];
  const npm = spawn(command, args, {
    cwd: kRepository,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATA_DIR: makeDataDir(), npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  const listening = await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output) ?? (npm.exitCode !== null ? [] : null), 'npm start to listen');
  if (listening.length === 0) throw new Error(`npm start exited:\n${output}`);
  const pid = Number(/"pid":(\d+)/.exec(output)![1]);
  return { npm, serverPid: pid, url: listening[1]!, output: () => output, exited };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const npmSignal = test.macro(async (t, stop: (started: NpmStart) => void, drained: boolean) => {
  const started = await npmStart();
  t.teardown(() => {
    if (isRunning(started.serverPid)) process.kill(started.serverPid, 'SIGKILL');
  });
  t.not(started.serverPid, started.npm.pid, 'the server is its own process');
  t.is((await fetch(`${started.url}/healthz`)).status, 200);
  stop(started);
  await started.exited;
  await waitFor(() => !isRunning(started.serverPid), 'the server to exit');
  if (drained) await waitFor(() => started.output().includes('"message":"stopped"'), 'the server to log its drained stop');
  await t.throwsAsync(fetch(`${started.url}/healthz`), undefined, 'nothing listens on the port any more');
});

test('npm start: SIGTERM to npm reaches the server, which drains and exits', npmSignal, (started) => started.npm.kill('SIGTERM'), true);
test('npm start: Ctrl-C (SIGINT to the process group) stops npm and the server', npmSignal, (started) => process.kill(-started.npm.pid!, 'SIGINT'), true);
test('npm start: npm killed outright (SIGKILL) leaves no orphan; the server drains on its own', npmSignal, (started) => started.npm.kill('SIGKILL'), true);

test('a start that fails after its threads are up (a write the database refuses) exits 1 with the cause, and releases the data dir', async (t) => {
  const first = await startServer({ keepDataDir: true });
  const project = first.bootstrap.live_project_id;
  t.deepEqual(await first.stop(), { code: 0, signal: null });
  // The start marks a backtest left running as failed, through the writer thread: a trigger refuses it.
  const db = new Database(join(first.dataDir, 'fraud-scorer.db'));
  db.prepare(`INSERT INTO backtests (backtest_id, project_id, state, candidate, policy, range_from, range_to, event_limit, requested_by, created_at)
    VALUES ('bt_left_running', ?, 'running', '{}', '{}', 0, 1, 1, 'key_test', 0)`).run(project);
  db.exec(`CREATE TRIGGER refuse_at_start BEFORE UPDATE ON backtests BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
  db.close();
  const failed = await startServer({ dataDir: first.dataDir }).then(async (server) => `started: ${await server.stop().then(() => server.output())}`, (error: Error) => error.message);
  t.regex(failed, /server exited with 1 before listening/);
  t.regex(failed, /fraud-scorer serve: the start failed: .*refused by the test/);
  // The lock went with the process: with the trigger gone, the next start serves.
  const repaired = new Database(join(first.dataDir, 'fraud-scorer.db'));
  repaired.exec('DROP TRIGGER refuse_at_start');
  repaired.close();
  const next = await startServer({ dataDir: first.dataDir });
  t.deepEqual(await next.stop(), { code: 0, signal: null });
});
