// fraud-scorer accounts erase: the operator's erasure (docs/accounts.md, "The operator's erasure").
// An account that several live projects used is answered 403 by the API and erased only here, in
// every project; through the running server, or with none running through its parts started in
// the command's own process. The id given leaves no trace in the data dir's files.
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { minimalEvent } from '../_helpers/events.js';
import { heldAt } from '../_helpers/faults.js';
import { api, makeDataDir, runCli, startServer, type TestServer } from '../_helpers/server.js';

const unique = (): string => randomUUID().slice(0, 8);

async function send(server: TestServer, key: string, external: string): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: external, user: { email: `${external}@example.com`, country: 'DE' } }) });
  if (response.status !== 200) throw new Error(`event refused: ${response.text}`);
  return response.body.data;
}

async function secondLiveProject(server: TestServer): Promise<{ projectId: string; key: string }> {
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', `second ${unique()}`, '--json'])).stdout);
  const key = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
  return { projectId: project.project_id, key };
}

/** The request rows the command line left (none once it read its answer). */
function requestRows(dataDir: string): number {
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT count(*) FROM operator_erasures').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** The files of the data dir that hold `value`'s bytes. */
function filesHolding(dataDir: string, value: string): string[] {
  return readdirSync(dataDir)
    .filter((name) => statSync(join(dataDir, name)).isFile())
    .filter((name) => {
      try {
        return readFileSync(join(dataDir, name)).includes(Buffer.from(value, 'utf8'));
      } catch {
        return false; // removed meanwhile (a -wal at a checkpoint)
      }
    });
}

const erase = (dataDir: string, ...args: string[]) => runCli(['accounts', 'erase', '--data-dir', dataDir, ...args]);

test('accounts erase --help says what it erases and that only the operator erases a shared account', async (t) => {
  const result = await runCli(['accounts', 'erase', '--help']);
  t.is(result.code, 0);
  t.regex(result.stdout, /ACCOUNT_SHARED_ACROSS_PROJECTS/);
  t.regex(result.stdout, /--project/);
});

test('wrong arguments are usage errors that ask nothing of the server', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const cases: Array<[string[], RegExp]> = [
    [['someone'], /--project is required/],
    [['--project', 'live'], /give one account/],
    [['--project', 'live', 'one', 'two'], /give one account/],
    [['--project', 'prj_unknown', 'someone'], /no such project: prj_unknown/],
    [['--project', 'live', '--bogus', 'someone'], /bogus/],
  ];
  for (const [args, message] of cases) {
    const result = await erase(server.dataDir, ...args);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, message);
  }
  t.is(requestRows(server.dataDir), 0);
});

test('an account two live projects used: the API answers 403 and refuses across_projects; the operator erases it in both, through the running server', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const live = server.bootstrap.keys.live_secret.key;
  const second = await secondLiveProject(server);
  const external = `shared-${unique()}`;
  const first = await send(server, live, external);
  await send(server, second.key, external);

  const refused = await api(server, 'DELETE', `/v1/accounts/${external}`, { key: live });
  t.is(refused.status, 403);
  t.is(refused.body.errors[0]?.code, 'ACCOUNT_SHARED_ACROSS_PROJECTS');
  t.is(refused.body.errors[0]?.parameter, 'id');
  t.regex(refused.body.errors[0]?.message, /fraud-scorer accounts erase/);
  // The parameter of earlier builds lets no key erase what other projects hold; =false asks for
  // what every DELETE does, so it is 403 too.
  for (const query of ['across_projects=true', 'across_projects=TRUE', 'across_projects=1', 'across_projects=false&across_projects=false']) {
    const gone = await api(server, 'DELETE', `/v1/accounts/${external}?${query}`, { key: second.key });
    t.is(gone.status, 400, query);
    t.is(gone.body.errors[0]?.code, 'VALIDATION_ERROR');
    t.is(gone.body.errors[0]?.parameter, 'across_projects');
  }
  const asBefore = await api(server, 'DELETE', `/v1/accounts/${external}?across_projects=false`, { key: second.key });
  t.is(asBefore.status, 403);
  t.is(asBefore.body.errors[0]?.code, 'ACCOUNT_SHARED_ACROSS_PROJECTS');
  const links = (key: string) => api(server, 'GET', `/v1/accounts/${external}/links`, { key });
  t.is((await links(live)).status, 200, 'nothing was erased by the refusals');
  t.is((await links(second.key)).status, 200);

  const erased = await erase(server.dataDir, '--project', second.projectId, '--json', external);
  t.is(erased.code, 0, erased.stderr);
  const summary = JSON.parse(erased.stdout);
  t.is(summary.account_public_id, first.account_public_id);
  t.is(summary.erased.events, 2);
  t.false(summary.already_erased);
  t.is((await links(live)).status, 404);
  t.is((await links(second.key)).status, 404);
  // Each project whose data went has the erasure in its trail, by the command line; the project
  // not named says which one was.
  const trail = async (key: string) =>
    (await api(server, 'GET', `/v1/audit?action=account.erase&target=${encodeURIComponent(`account:${first.account_public_id as string}`)}`, { key })).body.data.records;
  const named = await trail(second.key);
  t.is(named.length, 1);
  t.is(named[0].actor, 'cli');
  t.is(named[0].summary.by_project, undefined);
  const other = await trail(live);
  t.is(other.length, 1);
  t.is(other[0].actor, 'cli');
  t.is(other[0].summary.by_project, second.projectId);
  t.like(other[0].summary, { events: 2, across_projects: true });
  t.is(requestRows(server.dataDir), 0, 'the command took its answer away');
  t.deepEqual(filesHolding(server.dataDir, external), [], 'the id given is in no file');

  // Again, by the acc_ id: answered as erased before; an unknown account is exit 1.
  const again = await erase(server.dataDir, '--project', 'live', first.account_public_id);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, new RegExp(`${first.account_public_id as string} was erased before`));
  const nobody = `nobody-${unique()}`;
  const unknown = await erase(server.dataDir, '--project', 'live', nobody);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no account "nobody-.*" in project prj_/);
  t.is(requestRows(server.dataDir), 0);
  t.deepEqual(filesHolding(server.dataDir, nobody), [], 'an id that named nothing is in no file either');
});

test('with no server running, the command erases through the server\'s parts in its own process and leaves the data dir to the next start', async (t) => {
  const dataDir = makeDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startServer({ dataDir });
  const live = server.bootstrap.keys.live_secret.key;
  const external = `offline-${unique()}`;
  const kept = `kept-${unique()}`;
  const first = await send(server, live, external);
  await send(server, live, kept);
  await server.stop();

  const erased = await erase(dataDir, '--project', 'live', external);
  t.is(erased.code, 0, erased.stderr);
  t.regex(erased.stdout, new RegExp(`^erased ${first.account_public_id as string} at .*: events 1, pending_events 0`));
  t.is(requestRows(dataDir), 0);
  t.deepEqual(filesHolding(dataDir, external), []);

  server = await startServer({ dataDir });
  t.teardown(() => server.stop());
  t.is((await api(server, 'GET', `/v1/accounts/${external}/links`, { key: live })).status, 404);
  t.is((await api(server, 'GET', `/v1/accounts/${kept}/links`, { key: live })).status, 200, 'the other account is still there');
  // What erasure keeps of an event (docs/accounts.md): its score result, without the account.
  const score = await api(server, 'GET', `/v1/scores/${first.event_id as string}`, { key: live });
  t.is(score.body.data?.state, 'scored', score.text);
});

test('a request that a crashed server had taken is answered INTERRUPTED by the next start, which then serves', async (t) => {
  const dataDir = makeDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startServer({ dataDir });
  const projectId = server.bootstrap.live_project_id;
  await server.stop();
  // What a crash between taking and answering leaves: taken, the id gone, no answer.
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  db.prepare('INSERT INTO operator_erasures (project_id, account_ref, requested_at, alive_at, taken_at) VALUES (?, NULL, 1, 1, 2)').run(projectId);
  db.close();

  server = await startServer({ dataDir });
  t.teardown(() => server.stop());
  const read = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  t.teardown(() => read.close());
  const row = read.prepare('SELECT answered_at, answer FROM operator_erasures').get() as { answered_at: number | null; answer: string | null };
  t.not(row.answered_at, null, 'answered before the start took requests');
  t.like(JSON.parse(row.answer!), { ok: false, code: 'INTERRUPTED' });
});

test('with no server running, the account\'s async events that waited are erased, not scored first', async (t) => {
  const dataDir = makeDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // The background scorer held at start (test-only hold point): the events stay pending.
  let server = await startServer({ dataDir, env: { FAULT_INJECTION: 'hold_points' } });
  await heldAt(server, 'async-scorer');
  const live = server.bootstrap.keys.live_secret.key;
  const external = `queued-${unique()}`;
  const accepted: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await api(server, 'POST', '/v1/events', { key: live, body: { ...minimalEvent({ external_account_id: external }), async: true } });
    t.is(response.status, 202, response.text);
    accepted.push(response.body.data.event_id);
  }
  await server.stop();

  const erased = await erase(dataDir, '--project', 'live', '--json', external);
  t.is(erased.code, 0, erased.stderr);
  t.like(JSON.parse(erased.stdout), { account_public_id: null, erased: { events: 3, pending_events: 3 } });
  server = await startServer({ dataDir });
  t.teardown(() => server.stop());
  for (const eventId of accepted) {
    t.is((await api(server, 'GET', `/v1/scores/${eventId}`, { key: live })).body.data?.state, 'erased');
  }
});

test('two commands at once with no server running: each erases its account, neither waits for the other\'s server', async (t) => {
  const dataDir = makeDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startServer({ dataDir });
  const live = server.bootstrap.keys.live_secret.key;
  const externals = [`first-${unique()}`, `second-${unique()}`];
  for (const external of externals) await send(server, live, external);
  await server.stop();

  const results = await Promise.all(externals.map((external) => erase(dataDir, '--project', 'live', external)));
  for (const result of results) t.is(result.code, 0, result.stderr);
  server = await startServer({ dataDir });
  t.teardown(() => server.stop());
  for (const external of externals) t.is((await api(server, 'GET', `/v1/accounts/${external}/links`, { key: live })).status, 404);
});

test('a setting the server would refuse fails the command before it asks anything; a request nobody waits for any more is not done', async (t) => {
  const dataDir = makeDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server = await startServer({ dataDir });
  const live = server.bootstrap.keys.live_secret.key;
  const projectId = server.bootstrap.live_project_id;
  const external = `stays-${unique()}`;
  await send(server, live, external);
  await server.stop();

  const refused = await runCli(['accounts', 'erase', '--data-dir', dataDir, '--project', 'live', external], { WORKERS: 'many' });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /WORKERS/);
  t.is(requestRows(dataDir), 0, 'nothing is left for a later start to do');
  // PORT and HOST are not read: the command listens on nothing.
  t.is((await runCli(['accounts', 'erase', '--data-dir', dataDir, '--project', 'live', `nobody-${unique()}`], { PORT: 'none' })).code, 1);
  t.is(requestRows(dataDir), 0);

  // Requests whose command stopped saying it waits (it was killed, its terminal closed): not done;
  // answered EXPIRED once older than any command waits, left alone until then.
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  const insert = db.prepare('INSERT INTO operator_erasures (project_id, account_ref, requested_at, alive_at) VALUES (?, ?, ?, ?)');
  const old = Number(insert.run(projectId, external, Date.now() - 10 * 60_000, Date.now() - 10 * 60_000).lastInsertRowid);
  const young = Number(insert.run(projectId, external, Date.now() - 30_000, Date.now() - 30_000).lastInsertRowid);
  db.close();
  server = await startServer({ dataDir });
  t.teardown(() => server.stop());
  t.is((await api(server, 'GET', `/v1/accounts/${external}/links`, { key: live })).status, 200, 'not erased');
  const read = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  t.teardown(() => read.close());
  const row = (id: number) => read.prepare('SELECT account_ref, taken_at, answer FROM operator_erasures WHERE request_id = ?').get(id) as { account_ref: string | null; taken_at: number | null; answer: string | null };
  t.is(row(old).account_ref, null);
  t.like(JSON.parse(row(old).answer!), { ok: false, code: 'EXPIRED' });
  t.like(row(young), { taken_at: null, answer: null }, 'a young request whose command is silent waits, untaken');
});

test('with no server running, a start of the server\'s parts that fails ends the command at once, with the start\'s reason, and leaves nothing to do', async (t) => {
  const dataDir = makeDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir });
  const live = server.bootstrap.keys.live_secret.key;
  const first = await send(server, live, `broken-${unique()}`);
  await server.stop();
  // State the start cannot load (what serve refuses with exit 1): a signal of a type no build knows.
  rmSync(join(dataDir, 'start-snapshot'), { force: true });
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  db.pragma('ignore_check_constraints = ON');
  db.prepare("INSERT INTO account_signals (first_seen_s, account_id, signal_type, signal_hash, tenant_id, environment, masked, last_seen) SELECT 1, account_id, 'retina', 'h', tenant_id, environment, 'm', 1 FROM accounts LIMIT 1").run();
  db.close();

  const failed = await erase(dataDir, '--project', 'live', first.account_public_id);
  t.is(failed.code, 1, failed.stderr);
  t.regex(failed.stderr, /the server's parts could not start, nothing was erased: .*signal/);
  t.is(requestRows(dataDir), 0);
});
