// serve's signal handlers are in place before it prints that it listens: a supervisor (or a test)
// that sends SIGTERM the moment it reads the line gets the clean stop (drain, flush, close).
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kServerNodeFlags } from '../../src/cli/node-flags.js';
import { kCliPath, startServer, waitFor } from '../_helpers/server.js';

test('a SIGTERM sent as soon as the listening line is read is a clean stop, exit code 0 (ten times)', async (t) => {
  const first = await startServer({ keepDataDir: true });
  t.deepEqual(await first.stop(), { code: 0, signal: null }, first.output());
  // Before the fix, about one stop in two here was SIGTERM's default action: signal SIGTERM, no stop.
  // A failed round shows what the server printed: CI once saw a SIGABRT here, never reproduced.
  for (let round = 0; round < 10; round++) {
    const server = await startServer({ dataDir: first.dataDir, keepDataDir: true });
    const exit = await server.stop();
    t.deepEqual(exit, { code: 0, signal: null }, `round ${round}; the server printed:\n${server.output()}`);
  }
});

test('SIGHUP (a closed terminal, a "reload") is a clean stop too: drained, the WAL emptied, the start snapshot written', async (t) => {
  const server = await startServer({ keepDataDir: true });
  t.teardown(() => rmSync(server.dataDir, { recursive: true, force: true }));
  server.child.kill('SIGHUP');
  // Not stop(): its SIGTERM could reach the server first, and the drain would then be SIGTERM's.
  t.deepEqual(await server.exited(), { code: 0, signal: null }, server.output());
  t.regex(server.output(), /"message":"draining","signal":"SIGHUP"/);
  t.false(existsSync(join(server.dataDir, 'fraud-scorer.db-wal')), 'the WAL is emptied into the database');
  t.true(existsSync(join(server.dataDir, 'start-snapshot')));
});

test('a SIGTERM during the start is kept: once started, the server stops cleanly (drained, the WAL emptied, the start snapshot written)', async (t) => {
  const first = await startServer({ keepDataDir: true });
  t.deepEqual(await first.stop(), { code: 0, signal: null }, first.output());
  const dataDir = first.dataDir;
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  rmSync(join(dataDir, 'start-snapshot'), { force: true });
  // The start waits, loaded and not listening, at a test-only hold point until released.
  const child = spawn(process.execPath, [...kServerNodeFlags, kCliPath, 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, FAULT_INJECTION: 'start_held' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await waitFor(() => existsSync(join(dataDir, 'fault-held-start')), 'the start to be held');
  child.kill('SIGTERM');
  await waitFor(() => output.includes('stop asked for during the start'), 'the server to take the signal');
  writeFileSync(join(dataDir, 'fault-release-start'), '');
  t.deepEqual(await exited, { code: 0, signal: null }, output);
  t.regex(output, /"message":"draining","signal":"SIGTERM"/);
  t.notRegex(output, /listening on/, 'it never said it listens');
  t.false(existsSync(join(dataDir, 'fraud-scorer.db-wal')), 'the WAL is emptied into the database');
  t.true(existsSync(join(dataDir, 'start-snapshot')));
});
