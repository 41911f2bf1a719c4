// The command line: help on every command and action, --version, the first-start bootstrap, keys
// and projects, and the rule that only serve creates a database.
import test from 'ava';
import Database from 'better-sqlite3';
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, kCliPath, makeDataDir, runCli, startServer, waitFor } from '../_helpers/server.js';
import { kFaults } from '../../src/config/settings.js';
import { minimalEvent } from '../_helpers/events.js';

const kPackage = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string };
const kLockModule = fileURLToPath(new URL('../../src/store/data-dir-lock.js', import.meta.url));

/** A data dir with a database, made the only way there is: a server started on it once. */
async function servedDataDir(): Promise<string> {
  const dataDir = makeDataDir();
  const server = await startServer({ dataDir });
  await server.stop();
  return dataDir;
}

const kHelpRuns = [
  ['--help'], ['serve', '--help'], ['backup', '--help'],
  ['keys', '--help'], ['keys', 'create', '--help'], ['keys', 'list', '--help'], ['keys', 'revoke', '--help'],
  ['projects', '--help'], ['projects', 'create', '--help'], ['projects', 'list', '--help'],
  ['tenants', '--help'], ['tenants', 'create', '--help'], ['tenants', 'list', '--help'],
  ['webhook', '--help'], ['webhook', 'set', '--help'], ['webhook', 'show', '--help'], ['webhook', 'remove', '--help'],
  ['accounts', '--help'], ['accounts', 'erase', '--help'],
  ['webhook', 'rotate-secret', '--help'], ['webhook', 'deliveries', '--help'], ['webhook', 'redeliver', '--help'],
];

for (const args of kHelpRuns) {
  test(`fraud-scorer ${args.join(' ')} prints help`, async (t) => {
    const result = (await runCli(args));
    t.is(result.code, 0, result.stderr);
    t.regex(result.stdout, /Usage:/);
  });
}

test('every command the top-level help lists has help of its own, and names every action it takes', async (t) => {
  const listed = [...(await runCli(['--help'])).stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((match) => match[1]!);
  t.deepEqual(listed.sort(), ['accounts', 'backup', 'keys', 'projects', 'serve', 'tenants', 'webhook']);
  for (const command of listed) {
    const help = (await runCli([command, '--help'])).stdout;
    for (const run of kHelpRuns.filter((args) => args[0] === command && args.length === 3)) {
      t.regex(help, new RegExp(`fraud-scorer ${command} ${run[1]} `), `${command} --help names ${run[1]}`);
    }
  }
});

test('--version prints the package version', async (t) => {
  const result = (await runCli(['--version']));
  t.is(result.code, 0);
  t.is(result.stdout.trim(), `fraud-scorer ${kPackage.version}`);
});

test('serve --help lists every setting with its environment variable', async (t) => {
  const help = (await runCli(['serve', '--help'])).stdout;
  for (const env of ['HOST', 'PORT', 'DATA_DIR', 'WORKERS', 'RATE_LIMIT_WINDOW_SECONDS', 'RATE_LIMIT_PER_ROUTE', 'RATE_LIMIT_FP_PER_KEY', 'RATE_LIMIT_FP_PER_KEY_AND_ADDRESS', 'RATE_LIMIT_FAILED_KEY_LOOKUPS', 'TRUST_PROXY', 'ASYNC_QUEUE_LIMIT', 'ASYNC_RETRY_DELAY_MS', 'MAX_EVENTS_IN_FLIGHT', 'OVERLOAD_EVENTS_IN_FLIGHT', 'OVERLOAD_AFTER_MS', 'DERIVED_FLUSH_MS', 'LOG_LEVEL', 'ACCESS_LOG', 'UWS_HTTP_MAX_HEADERS_SIZE']) {
    t.true(help.includes(env), env);
  }
});

test('serve --help names every fault of FAULT_INJECTION', async (t) => {
  const help = (await runCli(['serve', '--help'])).stdout;
  for (const fault of kFaults) t.true(help.includes(fault), fault);
});

test('--help given twice still prints help', async (t) => {
  const help = await runCli(['serve', '-h', '--help']);
  t.is(help.code, 0, help.stderr);
  t.regex(help.stdout, /Usage/);
});

test('a flag given twice is a usage error (exit 2) naming it, for serve and the other commands: nothing runs', async (t) => {
  for (const args of [['serve', '--port', '0', '--port', '0'], ['keys', 'list', '--data-dir', '/nowhere', '--data-dir', '/nowhere'], ['backup', '--to', 'a.db', '--to', 'b.db']]) {
    const result = await runCli(args);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, /--(port|data-dir|to) is given more than once; give it once/);
  }
});

test('unknown commands, actions and flags are usage errors (exit 2)', async (t) => {
  t.is((await runCli(['frobnicate'])).code, 2);
  t.is((await runCli(['constructor'])).code, 2);
  t.is((await runCli(['keys', 'frobnicate'])).code, 2);
  t.is((await runCli(['keys', 'create', '--nope'])).code, 2);
  const badSetting = (await runCli(['serve', '--port', 'eighty']));
  t.is(badSetting.code, 2);
  t.regex(badSetting.stderr, /--port/);
  t.is((await runCli(['serve'], { RATE_LIMIT_PER_ROUTE: '0' })).code, 2);
  for (const value of ['abc', '0', '2000000']) {
    const badHeaders = await runCli(['serve'], { UWS_HTTP_MAX_HEADERS_SIZE: value });
    t.is(badHeaders.code, 2, `UWS_HTTP_MAX_HEADERS_SIZE=${value}`);
    t.regex(badHeaders.stderr, /UWS_HTTP_MAX_HEADERS_SIZE/);
  }
  for (const value of ['9', '3600001', '250ms']) {
    const badFlush = await runCli(['serve'], { DERIVED_FLUSH_MS: value });
    t.is(badFlush.code, 2, `DERIVED_FLUSH_MS=${value}`);
    t.regex(badFlush.stderr, /DERIVED_FLUSH_MS/);
  }
  for (const [env, value] of [['OVERLOAD_EVENTS_IN_FLIGHT', '0'], ['OVERLOAD_AFTER_MS', '-1'], ['OVERLOAD_AFTER_MS', '60001'], ['OVERLOAD_AFTER_MS', '50ms'],
    ['CASE_EVENTS_WAIT_MS', '-1'], ['CASE_EVENTS_WAIT_MS', '3600001'], ['CASE_EVENTS_WAIT_MS', '30s'],
    ['ASYNC_RETRY_DELAY_MS', '9'], ['ASYNC_RETRY_DELAY_MS', '600001'], ['ASYNC_RETRY_DELAY_MS', '1s']] as const) {
    const bad = await runCli(['serve'], { [env]: value });
    t.is(bad.code, 2, `${env}=${value}`);
    t.regex(bad.stderr, new RegExp(env));
  }
  const badLevel = (await runCli(['serve'], { LOG_LEVEL: 'chatty' }));
  t.is(badLevel.code, 2);
  t.regex(badLevel.stderr, /LOG_LEVEL.*debug, info, warn, error/);
});

test('webhook deliveries says when there is no message, rather than printing nothing', async (t) => {
  const dataDir = await servedDataDir();
  const none = await runCli(['webhook', 'deliveries', '--project', 'live', '--data-dir', dataDir]);
  t.is(none.code, 0, none.stderr);
  t.is(none.stdout, 'no messages\n');
  const noneFailed = await runCli(['webhook', 'deliveries', '--project', 'live', '--status', 'abandoned', '--data-dir', dataDir]);
  t.is(noneFailed.stdout, 'no abandoned messages\n');
  const json = await runCli(['webhook', 'deliveries', '--project', 'live', '--json', '--data-dir', dataDir]);
  t.deepEqual(JSON.parse(json.stdout), []);
});

// Each command other than serve, with arguments that would otherwise do something.
const kDataCommands: ReadonlyArray<readonly string[]> = [
  ['keys', 'list'],
  ['keys', 'create', '--project', 'live', '--kind', 'secret'],
  ['keys', 'revoke', '--key-id', 'key_nope'],
  ['projects', 'list'],
  ['projects', 'create', '--name', 'shop'],
  ['tenants', 'list'],
  ['tenants', 'create', '--name', 'acme'],
  ['webhook', 'set', '--project', 'live', '--url', 'https://hooks.example/x'],
  ['webhook', 'show', '--project', 'live'],
  ['webhook', 'remove', '--project', 'live'],
  ['webhook', 'rotate-secret', '--project', 'live'],
  ['webhook', 'deliveries', '--project', 'live'],
  ['webhook', 'redeliver', '--project', 'live', '--all-abandoned'],
];

for (const args of kDataCommands) {
  test(`${args.join(' ')} refuses a data dir without a database and creates nothing`, async (t) => {
    const parent = makeDataDir();
    const missing = join(parent, 'dta');
    const absent = (await runCli([...args, '--data-dir', missing]));
    t.is(absent.code, 1, absent.stderr);
    t.regex(absent.stderr, /there is no database at .*dta.*only fraud-scorer serve creates/);
    t.is(absent.stderr.trim().split('\n').length, 1, 'one line');
    t.false(existsSync(missing), 'no data dir created');

    const empty = join(parent, 'empty');
    mkdirSync(empty);
    const fromEnv = (await runCli(args, { DATA_DIR: empty }));
    t.is(fromEnv.code, 1, fromEnv.stderr);
    t.deepEqual(readdirSync(empty), [], 'no database created');
  });
}

test('a file that is not a fraud-scorer database is refused, not set up', async (t) => {
  const dataDir = makeDataDir();
  writeFileSync(join(dataDir, 'fraud-scorer.db'), '');
  const result = (await runCli(['keys', 'list', '--data-dir', dataDir]));
  t.is(result.code, 1);
  t.regex(result.stderr, /not a fraud-scorer database/);
  t.is(statSync(join(dataDir, 'fraud-scorer.db')).size, 0);
});

test('the first start creates a tenant, its projects and three keys, prints them once and saves them 0600', async (t) => {
  const dataDir = makeDataDir();
  const server = await startServer({ dataDir });
  const file = join(dataDir, 'bootstrap-keys.json');
  t.is(statSync(file).mode & 0o777, 0o600);
  t.is(statSync(dataDir).mode & 0o777, 0o700);
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  t.regex(saved.keys.live_secret.key, /^ak_live_[A-Za-z0-9]{22}$/);
  t.regex(saved.keys.sandbox_secret.key, /^ak_sandbox_[A-Za-z0-9]{22}$/);
  t.regex(saved.keys.live_publishable.key, /^pk_live_[A-Za-z0-9]{22}$/);
  t.deepEqual(saved.keys.live_publishable.scopes, ['fp:write']);
  t.true(server.output().includes(saved.keys.live_secret.key));
  const health = await api(server, 'GET', '/healthz');
  t.is(health.body.data.version, kPackage.version);
  await server.stop();
  const again = await startServer({ dataDir });
  t.false(again.output().includes(saved.keys.live_secret.key), 'printed only once');
  await again.stop();
  const projects = JSON.parse((await runCli(['projects', 'list', '--data-dir', dataDir, '--json'])).stdout);
  t.is(projects.length, 2);
  t.deepEqual(projects.map((p: { environment: string }) => p.environment).sort(), ['live', 'sandbox']);
});

test('keys create --json prints one JSON object; list and revoke work; bad arguments are refused', async (t) => {
  const dataDir = await servedDataDir();
  const created = (await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'events:write,scores:read', '--json']));
  t.is(created.code, 0, created.stderr);
  t.is(created.stdout.trim().split('\n').length, 1);
  const key = JSON.parse(created.stdout);
  t.regex(key.key, /^ak_live_[A-Za-z0-9]{22}$/);
  t.regex(key.key_id, /^key_/);
  t.regex(key.project_id, /^prj_/);
  t.is(key.environment, 'live');
  t.deepEqual(key.scopes, ['events:write', 'scores:read']);

  const sandbox = JSON.parse((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'sandbox', '--kind', 'publishable', '--json'])).stdout);
  t.regex(sandbox.key, /^pk_sandbox_/);
  t.deepEqual(sandbox.scopes, ['fp:write']);

  t.is((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'publishable', '--scopes', 'events:write'])).code, 2);
  t.is((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'events:wrte'])).code, 2);
  t.is((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'prj_nope', '--kind', 'secret'])).code, 2);
  t.is((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'master'])).code, 2);
  t.is((await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'publishable', '--origins', 'not-an-origin'])).code, 2);

  const listed = JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as Array<{ key_id: string; revoked_at: number | null }>;
  t.is(listed.length, 5, 'three bootstrap keys and two new ones');
  t.false(JSON.stringify(listed).includes(key.key));
  // One key per command: extra ids are refused (exit 2), not ignored, and nothing is revoked.
  for (const args of [[key.key_id, listed[0]!.key_id], ['--key-id', key.key_id, listed[0]!.key_id]]) {
    const extra = await runCli(['keys', 'revoke', '--data-dir', dataDir, ...args]);
    t.is(extra.code, 2, extra.stderr);
    t.regex(extra.stderr, /one key per command/);
  }
  t.true((JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as Array<{ revoked_at: number | null }>).every((k) => k.revoked_at === null));
  t.is((await runCli(['keys', 'revoke', '--data-dir', dataDir, '--key-id', key.key_id])).code, 0);
  const unknown = (await runCli(['keys', 'revoke', '--data-dir', dataDir, '--key-id', 'key_nope']));
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no such key/);
  const after = JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as Array<{ key_id: string; revoked_at: number | null }>;
  t.truthy(after.find((k) => k.key_id === key.key_id)!.revoked_at);
});

test('keys list shows when each key was created and last used (written by the server at the latest when it stops)', async (t) => {
  const dataDir = makeDataDir();
  const server = await startServer({ dataDir });
  t.teardown(() => server.stop());
  const used = server.bootstrap.keys.live_secret;
  const before = Date.now();
  for (let i = 0; i < 5; i++) t.is((await api(server, 'POST', '/v1/events', { key: used.key, body: minimalEvent() })).status, 200);
  await server.stop();

  const listed = JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as Array<{ key_id: string; created_at: number; last_used_at: number | null }>;
  const entry = listed.find((k) => k.key_id === used.key_id)!;
  t.true(entry.last_used_at !== null && entry.last_used_at >= before);
  t.true(entry.created_at <= entry.last_used_at!);
  t.is(listed.find((k) => k.key_id === server.bootstrap.keys.sandbox_secret.key_id)!.last_used_at, null);

  const text = (await runCli(['keys', 'list', '--data-dir', dataDir])).stdout.split('\n');
  const usedLine = text.find((line) => line.startsWith(used.key_id))!;
  t.regex(usedLine, /created \d{4}-\d{2}-\d{2}T[\d:.]+Z {2}last used \d{4}-\d{2}-\d{2}T/);
  t.regex(text.find((line) => line.startsWith(server.bootstrap.keys.sandbox_secret.key_id))!, /last used never/);
});

test('projects create adds a live project with the preset published; --preset none adds an empty one', async (t) => {
  const dataDir = await servedDataDir();
  t.is((await runCli(['tenants', 'create', '--data-dir', dataDir, '--name', 'acme'])).code, 0);
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'shop', '--json'])).stdout);
  t.is(project.environment, 'live');
  t.is(project.preset, 'default');
  const empty = (await runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'bare', '--preset', 'none', '--json']));
  t.is(empty.code, 0, empty.stderr);
  t.is((await runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'x', '--preset', 'nope'])).code, 2);
  t.is((await runCli(['projects', 'create', '--data-dir', dataDir])).code, 2);
  const listed = JSON.parse((await runCli(['projects', 'list', '--data-dir', dataDir, '--json'])).stdout);
  t.is(listed.length, 6, 'bootstrap live and sandbox, acme live and sandbox, shop, bare');
  const unknownTenant = await runCli(['projects', 'list', '--data-dir', dataDir, '--tenant', 'ten_nope']);
  t.is(unknownTenant.code, 2, 'an unknown tenant is an error, not an empty list');
  t.regex(unknownTenant.stderr, /no such tenant: ten_nope/);
});

/** SQL that takes a database back to before its newest migration, by that migration's version. */
const kUndoNewestMigration: Record<number, string> = {
  8: 'DROP TABLE api_key_usage; ALTER TABLE webhooks DROP COLUMN previous_secret; ALTER TABLE webhooks DROP COLUMN previous_secret_until; ALTER TABLE webhook_outbox DROP COLUMN retry_from',
  9: 'DROP TABLE lists; DROP TABLE list_items; DROP TABLE list_changes; DROP TABLE list_clock; DROP TABLE rule_lists; DROP TABLE event_labels; DROP TABLE audit_log; DROP INDEX case_events_by_event; ALTER TABLE rulesets DROP COLUMN lists',
  10: 'ALTER TABLE events DROP COLUMN signals',
  11: 'DROP TABLE backtests',
  12: 'CREATE UNIQUE INDEX events_by_event_id ON events (project_id, event_id)',
  13: 'DROP TABLE derived_stamp; ALTER TABLE events DROP COLUMN scored_order; ALTER TABLE accounts DROP COLUMN counted_order',
  14: 'CREATE INDEX case_events_by_event ON case_events (event_id); ALTER TABLE events DROP COLUMN case_id',
  15: `CREATE TABLE old_signals (tenant_id TEXT NOT NULL, environment TEXT NOT NULL, signal_type TEXT NOT NULL, signal_hash TEXT NOT NULL, account_id TEXT NOT NULL,
       masked TEXT NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, PRIMARY KEY (tenant_id, environment, signal_type, signal_hash, account_id)) WITHOUT ROWID;
       INSERT INTO old_signals SELECT tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen FROM account_signals;
       DROP TABLE account_signals; ALTER TABLE old_signals RENAME TO account_signals`,
  16: `ALTER TABLE account_links ADD COLUMN entry TEXT`,
  17: `CREATE INDEX events_by_account ON events (account_id) WHERE account_id IS NOT NULL; DROP TABLE account_event_seqs;
       ALTER TABLE accounts DROP COLUMN event_seqs; ALTER TABLE accounts DROP COLUMN seq_chunks`,
  18: `CREATE TABLE case_events (case_id TEXT NOT NULL, event_id TEXT NOT NULL, added_at INTEGER NOT NULL, PRIMARY KEY (case_id, event_id)) WITHOUT ROWID;
       DROP TABLE case_event_seqs; ALTER TABLE cases DROP COLUMN event_seqs; ALTER TABLE cases DROP COLUMN seq_chunks`,
  // (The stop's guard triggers name the table in their bodies only: they work again once it is back.)
  19: 'DROP TABLE start_snapshot',
  20: 'DROP TABLE event_id_runs',
  21: 'DROP VIEW event_payloads',
  22: "CREATE INDEX events_pending ON events (seq) WHERE state = 'pending'",
  23: 'ALTER TABLE derived_stamp DROP COLUMN parts_open',
  24: 'DROP INDEX webhook_outbox_due; CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at IS NULL AND abandoned_at IS NULL',
  25: 'ALTER TABLE webhook_outbox DROP COLUMN window_attempts',
  26: `CREATE TABLE old_signals (account_id TEXT NOT NULL, signal_type TEXT NOT NULL, signal_hash TEXT NOT NULL, tenant_id TEXT NOT NULL, environment TEXT NOT NULL,
       masked TEXT NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, PRIMARY KEY (account_id, signal_type, signal_hash)) WITHOUT ROWID;
       INSERT INTO old_signals SELECT account_id, signal_type, signal_hash, tenant_id, environment, masked, first_seen_s * 1000, last_seen FROM account_signals;
       DROP TABLE account_signals; ALTER TABLE old_signals RENAME TO account_signals`,
  27: 'ALTER TABLE derived_stamp DROP COLUMN pending_from_seq',
  28: '', // the view as migration 28 makes it is the view as migration 21 now makes it
  29: 'DROP TABLE operator_erasures',
};

test('the command line migrates an older schema only while no server holds the data dir', async (t) => {
  const dataDir = await servedDataDir();
  // Make the database look as an older build left it: without the newest migration.
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  const newest = (db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v;
  db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(newest);
  const undo = kUndoNewestMigration[newest];
  if (undo === undefined) throw new Error(`the test does not know how to undo migration ${newest}: add it to kUndoNewestMigration`);
  db.exec(undo);
  db.close();

  // A server of that older build holds the lock (this process takes it the way serve does).
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `import(${JSON.stringify(kLockModule)}).then((m) => { globalThis.held = m.acquireDataDirLock(${JSON.stringify(dataDir)}); console.log('locked'); setInterval(() => {}, 1000); })`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let held = '';
  holder.stdout!.setEncoding('utf8').on('data', (chunk: string) => (held += chunk));
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  await waitFor(() => held.includes('locked'), 'the lock holder');
  const refused = (await runCli(['keys', 'list', '--data-dir', dataDir]));
  t.is(refused.code, 1);
  t.regex(refused.stderr, new RegExp(`needs schema migrations ${newest} .*a server of an older build is running`));
  holder.kill('SIGKILL');
  await exited;

  const migrated = (await runCli(['keys', 'list', '--data-dir', dataDir, '--json']));
  t.is(migrated.code, 0, migrated.stderr);
  const after = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  t.truthy(after.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(newest));
  after.close();
});

test('keys create whose key cannot be written out (a full disk, a reader gone) revokes it at once and says so', async (t) => {
  const dataDir = await servedDataDir();
  const full = openSync('/dev/full', 'w');
  t.teardown(() => closeSync(full));
  const run = async (stdout: 'pipe' | number, closeFirst: boolean): Promise<{ code: number | null; stderr: string }> => {
    const child = spawn(process.execPath, [kCliPath, 'keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--json'], { stdio: ['ignore', stdout, 'pipe'] });
    if (closeFirst) child.stdout!.destroy();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return { code: await new Promise<number | null>((resolve) => child.once('close', resolve)), stderr };
  };
  for (const [stdout, closeFirst, code] of [[full, false, 'ENOSPC'], ['pipe', true, 'EPIPE']] as const) {
    const failed = await run(stdout, closeFirst);
    t.is(failed.code, 1, code);
    t.regex(failed.stderr, new RegExp(`^fraud-scorer keys: the key could not be written out \\(${code}\\), so it is revoked \\(key_\\w+\\)`));
  }
  const keys = JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as Array<{ key_id: string; revoked_at: number | null }>;
  const unseen = keys.filter((key) => key.revoked_at !== null);
  t.is(unseen.length, 2, 'both unseen keys are revoked; the first start\'s are not');
  const db = new Database(join(dataDir, 'fraud-scorer.db'), { readonly: true });
  t.teardown(() => db.close());
  const reasons = db.prepare("SELECT json_extract(summary, '$.reason') FROM audit_log WHERE action = 'key.revoke'").pluck().all();
  t.deepEqual(reasons, ['not shown', 'not shown']);
});

test('keys create --origins with no origin in it is refused, not a key every page may use', async (t) => {
  const dataDir = await servedDataDir();
  for (const [origins, refusal] of [['', /^fraud-scorer keys: --origins: empty value/], [' , ', /^fraud-scorer keys: --origins: no origin given/]] as const) {
    const result = await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'publishable', '--origins', origins]);
    t.is(result.code, 2, JSON.stringify(origins));
    t.regex(result.stderr, refusal);
  }
  const keys = JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as unknown[];
  t.is(keys.length, 3, 'no key made');
});

test('keys create and keys list show a publishable key\'s origins in their text, and "any" when it has none', async (t) => {
  const dataDir = await servedDataDir();
  const created = await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'publishable', '--origins', 'https://shop.example,https://m.shop.example']);
  t.is(created.code, 0, created.stderr);
  t.regex(created.stdout, /scopes fp:write {2}origins=https:\/\/shop\.example,https:\/\/m\.shop\.example\n/);
  const listed = await runCli(['keys', 'list', '--data-dir', dataDir]);
  t.is(listed.code, 0, listed.stderr);
  const publishable = listed.stdout.split('\n').filter((line) => line.includes(' publishable '));
  t.is(publishable.length, 2, listed.stdout);
  t.true(publishable.some((line) => line.includes('origins=https://shop.example,https://m.shop.example')), listed.stdout);
  t.true(publishable.some((line) => line.includes('origins=any')), 'the first start\'s publishable key may be used from any page');
  t.false(listed.stdout.split('\n').some((line) => line.includes(' secret ') && line.includes('origins=')), 'secret keys have no origins');
});

test('keys revoke of an unknown key says so like every other refusal: prefixed, exit 1', async (t) => {
  const dataDir = await servedDataDir();
  const unknown = await runCli(['keys', 'revoke', '--data-dir', dataDir, '--key-id', 'key_nope']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /^fraud-scorer keys: no such key: key_nope; keys list shows the key ids\n$/);
});

test('a write the database refuses (as a full disk would) is one line, exit 1, no stack, nothing changed', async (t) => {
  const dataDir = await servedDataDir();
  const db = new Database(join(dataDir, 'fraud-scorer.db'));
  db.exec("CREATE TRIGGER refuse_keys BEFORE INSERT ON api_keys BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
  db.close();
  const refused = await runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^fraud-scorer keys: the database refused the command, nothing was changed: refused by the test \(SQLITE_CONSTRAINT_TRIGGER\); check the disk and the data dir, then run it again\n$/);
  t.is(refused.stdout, '');
  const keys = JSON.parse((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout) as unknown[];
  t.is(keys.length, 3, 'no key made');
});

test('an empty flag value is refused, not taken as the default over the environment (no database made in ./data)', async (t) => {
  const cwd = makeDataDir();
  const elsewhere = makeDataDir();
  for (const flag of ['--data-dir', '--port', '--host', '--log-level']) {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, [kCliPath, 'serve', flag, ''], { cwd, encoding: 'utf8', env: { ...process.env, DATA_DIR: elsewhere, PORT: '0', HOST: '127.0.0.1' }, timeout: 60_000 }, (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr }));
    });
    t.is(result.code, 2, `${flag}: ${result.stderr}`);
    t.regex(result.stderr, new RegExp(`^fraud-scorer serve: ${flag}: empty value`), flag);
  }
  t.deepEqual(readdirSync(cwd), [], 'nothing made in the working directory');
  t.deepEqual(readdirSync(elsewhere), [], 'nor in DATA_DIR');
  const keys = await runCli(['keys', 'list', '--data-dir', ''], { DATA_DIR: elsewhere });
  t.is(keys.code, 2);
  t.regex(keys.stderr, /^fraud-scorer keys: --data-dir: empty value/);
});

test('an empty value of any flag of any command is refused with status 2, changing nothing', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const dataDir = server.dataDir;
  const keysBefore = (await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout;
  for (const [args, flag] of [
    [['keys', 'revoke', '--data-dir', dataDir, '--key-id', ''], '--key-id'],
    [['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--label', ''], '--label'],
    [['webhook', 'redeliver', '--data-dir', dataDir, '--project', 'live', '--message-id', ''], '--message-id'],
  ] as const) {
    const result = await runCli([...args]);
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, new RegExp(`^fraud-scorer ${args[0]}: ${flag}: empty value`), args.join(' '));
  }
  const positional = await runCli(['keys', 'revoke', '--data-dir', dataDir, '']);
  t.is(positional.code, 2, positional.stderr);
  t.is((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout, keysBefore, 'no key made or revoked');
});

test('a key label with a control character or line break, or too long, is refused (it would forge lines of keys list); list shows labels quoted', async (t) => {
  const dataDir = await servedDataDir();
  const keysBefore = (await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout;
  const create = (label: string) => runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--label', label]);
  for (const label of ['ci\nkey_forged  secret  live', 'bell\u0007', 'csi\u009b31m', 'sep\u2028', 'x'.repeat(201)]) {
    const refused = await create(label);
    t.is(refused.code, 2, JSON.stringify(label));
    t.regex(refused.stderr, /--label: at most 200 characters, none of them a control character or line break/);
  }
  t.is((await runCli(['keys', 'list', '--data-dir', dataDir, '--json'])).stdout, keysBefore, 'no key made');
  t.is((await create('ops "blue" — Zoë')).code, 0);
  t.regex((await runCli(['keys', 'list', '--data-dir', dataDir])).stdout, /  "ops \\"blue\\" — Zoë"\n/);
});

test('a project or tenant name with a control character or line break, or too long, is refused as a key label is; the lists quote names', async (t) => {
  const dataDir = await servedDataDir();
  const listed = async (): Promise<string> => (await runCli(['projects', 'list', '--data-dir', dataDir])).stdout + (await runCli(['tenants', 'list', '--data-dir', dataDir])).stdout;
  const before = await listed();
  for (const command of ['projects', 'tenants']) {
    for (const name of ['shop\nprj_forged  live', 'esc\u001b[2J', 'x'.repeat(201)]) {
      const refused = await runCli([command, 'create', '--data-dir', dataDir, '--name', name]);
      t.is(refused.code, 2, `${command} ${JSON.stringify(name)}`);
      t.regex(refused.stderr, /--name: at most 200 characters, none of them a control character or line break/);
    }
  }
  t.is(await listed(), before, 'nothing made');
  t.is((await runCli(['tenants', 'create', '--data-dir', dataDir, '--name', 'Acme "EU"'])).code, 0);
  t.regex((await runCli(['tenants', 'list', '--data-dir', dataDir])).stdout, /  "Acme \\"EU\\""\n/);
});

test('serve --help shows boolean defaults as the words the settings take (off, on)', async (t) => {
  const help = (await runCli(['serve', '--help'])).stdout;
  for (const flag of ['access-log', 'trust-proxy']) t.regex(help, new RegExp(`--${flag} +[A-Z_]+ +default off `), flag);
  t.notRegex(help, /default (false|true) /);
});
