// The command line: help on every command, the first-start bootstrap, keys and projects.
import test from 'ava';
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDataDir, runCli, startServer } from '../_helpers/server.js';

for (const args of [['--help'], ['serve', '--help'], ['keys', '--help'], ['keys', 'create', '--help'], ['keys', 'list', '--help'], ['keys', 'revoke', '--help'], ['projects', '--help'], ['projects', 'create', '--help'], ['tenants', '--help']]) {
  test(`fraud-scorer ${args.join(' ')} prints help`, (t) => {
    const result = runCli(args);
    t.is(result.code, 0, result.stderr);
    t.regex(result.stdout, /Usage:/);
  });
}

test('serve --help lists every setting with its environment variable', (t) => {
  const help = runCli(['serve', '--help']).stdout;
  for (const env of ['HOST', 'PORT', 'DATA_DIR', 'WORKERS', 'RATE_LIMIT_WINDOW_SECONDS', 'RATE_LIMIT_PER_ROUTE', 'RATE_LIMIT_FP_PER_KEY', 'RATE_LIMIT_FP_PER_KEY_AND_ADDRESS', 'RATE_LIMIT_FAILED_KEY_LOOKUPS', 'TRUST_PROXY', 'ASYNC_QUEUE_LIMIT']) {
    t.true(help.includes(env), env);
  }
});

test('unknown commands, actions and flags are usage errors (exit 2)', (t) => {
  t.is(runCli(['frobnicate']).code, 2);
  t.is(runCli(['keys', 'frobnicate']).code, 2);
  t.is(runCli(['keys', 'create', '--nope']).code, 2);
  const badSetting = runCli(['serve', '--port', 'eighty']);
  t.is(badSetting.code, 2);
  t.regex(badSetting.stderr, /--port/);
  t.is(runCli(['serve'], { RATE_LIMIT_PER_ROUTE: '0' }).code, 2);
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
  await server.stop();
  const again = await startServer({ dataDir });
  t.false(again.output().includes(saved.keys.live_secret.key), 'printed only once');
  await again.stop();
  const projects = JSON.parse(runCli(['projects', 'list', '--data-dir', dataDir, '--json']).stdout);
  t.is(projects.length, 2);
  t.deepEqual(projects.map((p: { environment: string }) => p.environment).sort(), ['live', 'sandbox']);
});

test('keys create --json prints one JSON object; list and revoke work; bad arguments are refused', (t) => {
  const dataDir = makeDataDir();
  t.is(runCli(['tenants', 'create', '--data-dir', dataDir, '--name', 'acme']).code, 0);
  const created = runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'events:write,scores:read', '--json']);
  t.is(created.code, 0, created.stderr);
  t.is(created.stdout.trim().split('\n').length, 1);
  const key = JSON.parse(created.stdout);
  t.regex(key.key, /^ak_live_[A-Za-z0-9]{22}$/);
  t.regex(key.key_id, /^key_/);
  t.regex(key.project_id, /^prj_/);
  t.is(key.environment, 'live');
  t.deepEqual(key.scopes, ['events:write', 'scores:read']);

  const sandbox = JSON.parse(runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'sandbox', '--kind', 'publishable', '--json']).stdout);
  t.regex(sandbox.key, /^pk_sandbox_/);
  t.deepEqual(sandbox.scopes, ['fp:write']);

  t.is(runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'publishable', '--scopes', 'events:write']).code, 2);
  t.is(runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'events:wrte']).code, 2);
  t.is(runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'prj_nope', '--kind', 'secret']).code, 2);
  t.is(runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'master']).code, 2);
  t.is(runCli(['keys', 'create', '--data-dir', dataDir, '--project', 'live', '--kind', 'publishable', '--origins', 'not-an-origin']).code, 2);

  const listed = JSON.parse(runCli(['keys', 'list', '--data-dir', dataDir, '--json']).stdout);
  t.is(listed.length, 2);
  t.false(JSON.stringify(listed).includes(key.key));
  t.is(runCli(['keys', 'revoke', '--data-dir', dataDir, '--key-id', key.key_id]).code, 0);
  t.is(runCli(['keys', 'revoke', '--data-dir', dataDir, '--key-id', 'key_nope']).code, 1);
  const after = JSON.parse(runCli(['keys', 'list', '--data-dir', dataDir, '--json']).stdout);
  t.truthy(after.find((k: { key_id: string }) => k.key_id === key.key_id).revoked_at);
});

test('projects create adds a live project with the preset published; --preset none adds an empty one', (t) => {
  const dataDir = makeDataDir();
  t.is(runCli(['tenants', 'create', '--data-dir', dataDir, '--name', 'acme']).code, 0);
  const project = JSON.parse(runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'shop', '--json']).stdout);
  t.is(project.environment, 'live');
  t.is(project.preset, 'default');
  const empty = runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'bare', '--preset', 'none', '--json']);
  t.is(empty.code, 0, empty.stderr);
  t.is(runCli(['projects', 'create', '--data-dir', dataDir, '--name', 'x', '--preset', 'nope']).code, 2);
  t.is(runCli(['projects', 'create', '--data-dir', dataDir]).code, 2);
  const listed = JSON.parse(runCli(['projects', 'list', '--data-dir', dataDir, '--json']).stdout);
  t.is(listed.length, 4);
});
