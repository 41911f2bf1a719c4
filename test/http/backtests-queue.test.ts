// One backtest at a time (docs/backtests.md, "One at a time"): while a project's backtest runs, a
// second of the same project gets 429 with Retry-After and the RateLimit headers and stores
// nothing; another project's waits in the queue; a backtest the server was stopped on is failed
// at the next start. The running backtest is held at the test-only hold point `backtest`
// (FAULT_INJECTION=hold_points, src/shared/fault-latch.ts): no test waits for time to pass.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { heldAt, release } from '../_helpers/faults.js';
import { minimalEvent } from '../_helpers/events.js';
import { newProject, readStore } from '../_helpers/rules.js';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';

const kHold = { FAULT_INJECTION: 'hold_points' };

/** A server with the hold points on; its background scorer (held at start with them) let go. */
async function holdingServer(options: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  const server = await startServer({ ...options, env: kHold });
  await heldAt(server, 'async-scorer');
  release(server, 'async-scorer');
  return server;
}

function body(): Record<string, unknown> {
  return { version: 1, from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };
}

async function state(server: TestServer, key: string, id: string): Promise<any> {
  return (await api(server, 'GET', `/v1/rules/backtests/${id}`, { key })).body.data;
}

test('a second backtest of a project is refused with 429 while the first runs; another project\'s waits in the queue', async (t) => {
  const server = await holdingServer();
  t.teardown(() => server.stop());
  const first = await newProject(server);
  const second = await newProject(server);
  for (let i = 0; i < 5; i++) t.is((await api(server, 'POST', '/v1/events', { key: first.key, body: minimalEvent() })).status, 200);

  const running = await api(server, 'POST', '/v1/rules/backtests', { key: first.key, body: body() });
  t.is(running.status, 202, running.text);
  const runningId = running.body.data.backtest_id as string;
  await heldAt(server, 'backtest');
  t.like(await state(server, first.key, runningId), { state: 'running', progress: { events_scanned: 0, fraction: 0, backtests_ahead: 0 }, report: null });

  const stored = (): unknown => readStore(server, (db) => db.prepare('SELECT backtest_id, state FROM backtests ORDER BY created_at').all());
  const before = stored();
  const refused = await api(server, 'POST', '/v1/rules/backtests', { key: first.key, body: body() });
  t.is(refused.status, 429, refused.text);
  t.like(refused.body.errors[0], { code: 'RATE_LIMIT_EXCEEDED', parameter: '' });
  t.true(refused.body.errors[0].message.includes(runningId));
  t.regex(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  t.is(refused.headers.get('ratelimit-limit'), '1');
  t.is(refused.headers.get('ratelimit-remaining'), '0');
  t.is(refused.headers.get('ratelimit-reset'), refused.headers.get('retry-after'));
  t.deepEqual(stored(), before, 'a refused backtest stores nothing');

  const queued = await api(server, 'POST', '/v1/rules/backtests', { key: second.key, body: body() });
  t.is(queued.status, 202, queued.text);
  const queuedId = queued.body.data.backtest_id as string;
  t.like(queued.body.data, { state: 'queued', started_at: null, progress: { events_scanned: 0, backtests_ahead: 1 } });

  release(server, 'backtest');
  const done = await waitFor(async () => ((await state(server, first.key, runningId)).state === 'done' ? state(server, first.key, runningId) : null), 'the first backtest');
  t.like(done.report, { events_scanned: 5, events_replayed: 5, unchanged: { decision_and_score: 5 } });
  // The queued one runs next, and is held at the same point.
  await heldAt(server, 'backtest');
  t.is((await state(server, second.key, queuedId)).state, 'running');
  release(server, 'backtest');
  await waitFor(async () => (await state(server, second.key, queuedId)).state === 'done', 'the queued backtest');

  // Done: the first project may start its next one.
  const next = await api(server, 'POST', '/v1/rules/backtests', { key: first.key, body: body() });
  t.is(next.status, 202, next.text);
  await heldAt(server, 'backtest');
  release(server, 'backtest');
  await waitFor(async () => (await state(server, first.key, next.body.data.backtest_id)).state === 'done', 'the next backtest');
});

test('a backtest running when the server stops is failed, and says so, after the restart', async (t) => {
  const server = await holdingServer({ keepDataDir: true });
  const project = await newProject(server);
  const started = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: body() });
  t.is(started.status, 202, started.text);
  await heldAt(server, 'backtest');
  await server.kill();

  const restarted = await holdingServer({ dataDir: server.dataDir });
  t.teardown(() => restarted.stop());
  const failed = await state(restarted, project.key, started.body.data.backtest_id);
  t.like(failed, { state: 'failed', report: null, progress: null, error: 'The server stopped before the backtest finished; start it again.' });
  t.truthy(failed.finished_at);
  // And the project is free to start another.
  const again = await api(restarted, 'POST', '/v1/rules/backtests', { key: project.key, body: body() });
  t.is(again.status, 202, again.text);
  await heldAt(restarted, 'backtest');
  release(restarted, 'backtest');
  await waitFor(async () => (await state(restarted, project.key, again.body.data.backtest_id)).state === 'done', 'the backtest after the restart');
});

test('at most 16 backtests wait, counting requests that arrive together: of three sent at once for the last place, one is queued and two get 429', async (t) => {
  const server = await holdingServer();
  t.teardown(() => server.stop());
  const projects: Array<{ key: string }> = [];
  for (let i = 0; i < 19; i++) projects.push(await newProject(server));
  const start = (key: string) => api(server, 'POST', '/v1/rules/backtests', { key, body: body() });
  t.is((await start(projects[0]!.key)).status, 202);
  await heldAt(server, 'backtest');
  for (let i = 1; i <= 15; i++) t.is((await start(projects[i]!.key)).status, 202, `project ${i}`);
  const together = await Promise.all([16, 17, 18].map((i) => start(projects[i]!.key)));
  t.deepEqual(together.map((response) => response.status).sort(), [202, 429, 429], together.map((response) => response.text).join('\n'));
  for (const refused of together.filter((response) => response.status === 429)) t.is(refused.body.errors[0]?.code, 'RATE_LIMIT_EXCEEDED');
  t.is(readStore(server, (db) => (db.prepare("SELECT count(*) AS n FROM backtests WHERE state = 'queued'").get() as { n: number }).n), 16, 'sixteen wait');
});

test('a backtest whose report cannot be stored is failed, and says so, rather than left running', async (t) => {
  const server = await holdingServer();
  t.teardown(() => server.stop());
  const project = await newProject(server);
  t.is((await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent() })).status, 200);
  const started = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: body() });
  t.is(started.status, 202, started.text);
  await heldAt(server, 'backtest');
  // The report's write is refused (as a full disk would refuse it); marking it failed is not.
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  db.exec(`CREATE TRIGGER refuse_report BEFORE UPDATE OF report ON backtests WHEN NEW.report IS NOT NULL BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
  db.close();
  release(server, 'backtest');
  const failed = await waitFor(async () => {
    const read = await state(server, project.key, started.body.data.backtest_id);
    return read.state === 'failed' ? read : null;
  }, 'the backtest marked failed');
  t.regex(failed.error, /The report could not be stored .*refused by the test/);
  t.is(failed.report, null);
  // The project may start the next one.
  t.is((await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: body() })).status, 202);
});
