// fraud-scorer backup: an online copy taken while the server runs (and writes) restores into a
// working server with the same state; existing files are not replaced without --force.
import test from 'ava';
import Database from 'better-sqlite3';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { components, createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { api, kCliPath, makeDataDir, runCli, startServer } from '../_helpers/server.js';

const execFileAsync = promisify(execFile);

test('backup --help explains --to and --force', async (t) => {
  const result = await runCli(['backup', '--help']);
  t.is(result.code, 0);
  t.regex(result.stdout, /--to FILE/);
  t.regex(result.stdout, /--force/);
  t.regex(result.stdout, /Restore:/);
});

test('backup without --to is a usage error', async (t) => {
  const result = await runCli(['backup', '--data-dir', '/nonexistent/fraud-scorer-data']);
  t.is(result.code, 2);
  t.regex(result.stderr, /--to is required/);
});

test('backup of a data dir without a database fails and writes nothing', async (t) => {
  const empty = makeDataDir();
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const target = join(empty, 'copy.db');
  const result = await runCli(['backup', '--data-dir', join(empty, 'missing'), '--to', target]);
  t.is(result.code, 1);
  t.regex(result.stderr, /there is no database/);
  t.deepEqual(readdirSync(empty), []);
  t.false(existsSync(join(empty, 'missing')), 'backup must not create a data dir');
});

test('backup --to a directory fails, even with --force, and leaves it alone', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const folder = makeDataDir();
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  const result = await runCli(['backup', '--data-dir', server.dataDir, '--to', folder, '--force']);
  t.is(result.code, 1);
  t.regex(result.stderr, /is a directory/);
  t.deepEqual(readdirSync(folder), []);
});

test('a backup taken while the server runs and writes restores into a working server', async (t) => {
  // Writes go on for as long as the backup runs: more than the default 60 collects per address.
  const original = await startServer({ env: { RATE_LIMIT_FP_PER_KEY_AND_ADDRESS: '100000' } });
  t.teardown(() => original.stop());
  const backups = makeDataDir();
  const restoredDir = makeDataDir();
  t.teardown(() => {
    rmSync(backups, { recursive: true, force: true });
    rmSync(restoredDir, { recursive: true, force: true });
  });

  // State to carry over: a key made by the command line, and a device seen once with it.
  const made = await createKeyWithCli(original.dataDir, ['--project', 'live', '--kind', 'secret', '--scopes', 'fp:write', '--label', 'before backup']);
  const device = { components: components((c) => (c.canvas = 'backup1')) };
  const seen = await api(original, 'POST', '/v1/fp/collect', { key: made.key, body: device });
  t.is(seen.status, 200, seen.text);

  // The backup runs in its own process while this one keeps the server writing other devices.
  const target = join(backups, 'fraud-scorer-backup.db');
  let backupDone = false;
  const backup = execFileAsync(process.execPath, [kCliPath, 'backup', '--data-dir', original.dataDir, '--to', target]).finally(() => (backupDone = true));
  const statuses: number[] = [];
  while (!backupDone) {
    const answer = await api(original, 'POST', '/v1/fp/collect', { key: made.key, body: { components: components((c) => (c.canvas = `during${statuses.length}`)) } });
    statuses.push(answer.status);
  }
  const { stdout } = await backup;
  t.true(statuses.length > 0 && statuses.every((status) => status === 200), statuses.join(','));
  t.regex(stdout, /backed up .* quick_check ok/);
  t.is(statSync(target).mode & 0o777, 0o600);
  t.deepEqual(readdirSync(backups), ['fraud-scorer-backup.db'], 'one file, no -wal/-shm or partial files');

  // An existing file is kept unless --force.
  const firstCopy = readFileSync(target);
  const again = await runCli(['backup', '--data-dir', original.dataDir, '--to', target]);
  t.is(again.code, 1);
  t.regex(again.stderr, /exists; pass --force/);
  t.deepEqual(readFileSync(target), firstCopy);
  writeFileSync(target, 'not a database');
  const forced = await runCli(['backup', '--data-dir', original.dataDir, '--to', target, '--force']);
  t.is(forced.code, 0, forced.stderr);
  const copy = new Database(target, { readonly: true });
  t.is(copy.pragma('quick_check', { simple: true }), 'ok');
  copy.close();

  // Restore: a new data dir holding only the copy.
  mkdirSync(restoredDir, { recursive: true });
  copyFileSync(target, join(restoredDir, 'fraud-scorer.db'));
  const restored = await startServer({ dataDir: restoredDir });
  t.teardown(() => restored.stop());
  t.false(existsSync(join(restoredDir, 'bootstrap-keys.json')), 'the restored server found its tenants and made no new ones');

  // The old key works, and the device is the same one (the install secret came along).
  const back = await api(restored, 'POST', '/v1/fp/collect', { key: made.key, body: device });
  t.is(back.status, 200, back.text);
  t.is(back.body.data.fp_id, seen.body.data.fp_id);
  t.is(back.body.data.first_seen, seen.body.data.first_seen);
  t.is(back.body.data.seen_count, 2);
  const listed = await runCli(['keys', 'list', '--data-dir', restoredDir, '--json']);
  const keys = JSON.parse(listed.stdout) as Array<{ key_id: string; label: string }>;
  t.true(keys.some((key) => key.key_id === made.key_id && key.label === 'before backup'));
});

test('backup refuses to write over a database in use: the one it copies, its WAL, or a running server\'s; nothing is replaced', async (t) => {
  const source = await startServer();
  t.teardown(() => source.stop());
  const other = await startServer();
  t.teardown(() => other.stop());
  for (const target of [join(source.dataDir, 'fraud-scorer.db'), join(source.dataDir, 'fraud-scorer.db-wal'), join(other.dataDir, 'fraud-scorer.db')]) {
    const before = statSync(target).ino;
    const result = await runCli(['backup', '--data-dir', source.dataDir, '--to', target, '--force']);
    t.is(result.code, 1, target);
    t.regex(result.stderr, /is the database being backed up|holds a database in use|a server runs on/, target);
    t.is(statSync(target).ino, before, `${target} not replaced`);
  }
  // Both servers still serve what they stored.
  for (const server of [source, other]) {
    const response = await api(server, 'POST', '/v1/events', { key: server.bootstrap.keys.live_secret.key, body: minimalEvent() });
    t.is(response.status, 200, response.text);
  }
  // A file of another name beside a running server's database is a backup like any other.
  const beside = join(other.dataDir, 'copy.db');
  t.is((await runCli(['backup', '--data-dir', source.dataDir, '--to', beside])).code, 0);
  t.true(statSync(beside).size > 0);
});

test('backup --force never replaces a file of a data dir (server.lock, the start snapshot, the first keys, a journal): a second server would start on a new lock', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  for (const name of ['server.lock', 'bootstrap-keys.json', 'start-snapshot', 'fraud-scorer.db-journal']) {
    const target = join(server.dataDir, name);
    const before = existsSync(target) ? readFileSync(target) : null;
    const result = await runCli(['backup', '--data-dir', server.dataDir, '--to', target, '--force']);
    t.is(result.code, 1, `${name}: ${result.stdout}${result.stderr}`);
    t.regex(result.stderr, /^fraud-scorer backup: .* is a file of the data dir .*, not a place for a backup/, name);
    t.deepEqual(existsSync(target) ? readFileSync(target) : null, before, `${name} is left as it was`);
  }
  // The lock is still the one the server holds: a second server is refused.
  const second = await runCli(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', server.dataDir]);
  t.is(second.code, 1);
  t.regex(second.stderr, /is in use by another fraud-scorer process, a server/);
});

test('the data dir files backup keeps away from are the ones the server names', async (t) => {
  const { kDataDirFiles } = await import('../../src/store/backup.js');
  const { startSnapshotPath } = await import('../../src/scoring/start-snapshot.js');
  const { kBootstrapKeysFile } = await import('../../src/main.js');
  const { kLockFileName } = await import('../../src/store/data-dir-lock.js');
  for (const name of [kLockFileName, kBootstrapKeysFile, basename(startSnapshotPath('.'))]) t.true(kDataDirFiles.includes(name), name);
});

test('a backup of a stopped data dir leaves it one file, as the stop did; then --force may write back over it', async (t) => {
  const server = await startServer({ keepDataDir: true });
  const key = server.bootstrap.keys.live_secret.key;
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent() })).status, 200);
  await server.stop();
  const { dataDir } = server;
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const before = readdirSync(dataDir).sort();
  t.false(before.includes('fraud-scorer.db-wal'));
  const copy = join(makeDataDir(), 'copy.db');
  const result = await runCli(['backup', '--data-dir', dataDir, '--to', copy]);
  t.is(result.code, 0, result.stderr);
  t.deepEqual(readdirSync(dataDir).sort(), before, 'no -wal or -shm left behind');
  // So a backup of another data dir may be written over it (a stopped, clean database is not in use).
  const other = makeDataDir();
  copyFileSync(copy, join(other, 'fraud-scorer.db'));
  const back = await runCli(['backup', '--data-dir', other, '--to', join(dataDir, 'fraud-scorer.db'), '--force']);
  t.is(back.code, 0, back.stderr);
});

test('backup makes its data dir private as every command does: a loosened folder and database tightened, its lock 0600', async (t) => {
  const server = await startServer({ keepDataDir: true });
  await server.stop();
  const { dataDir } = server;
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // As a careless restore leaves it: the folder 0755, the database 0644.
  chmodSync(dataDir, 0o755);
  chmodSync(join(dataDir, 'fraud-scorer.db'), 0o644);
  const copy = join(makeDataDir(), 'copy.db');
  const result = await runCli(['backup', '--data-dir', dataDir, '--to', copy]);
  t.is(result.code, 0, result.stderr);
  t.is(statSync(dataDir).mode & 0o777, 0o700);
  for (const name of readdirSync(dataDir)) t.is(statSync(join(dataDir, name)).mode & 0o777, 0o600, name);
  t.is(statSync(copy).mode & 0o777, 0o600);
});

test('backup --to the database it copies says it is refused, not "pass --force"', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const result = await runCli(['backup', '--data-dir', server.dataDir, '--to', join(server.dataDir, 'fraud-scorer.db')]);
  t.is(result.code, 1);
  t.regex(result.stderr, /is the database being backed up/);
  t.notRegex(result.stderr, /--force/);
});

test('a backup that cannot write its copy fails with one line, exit 1, no stack trace', async (t) => {
  if (process.platform !== 'linux') {
    t.pass('/proc is Linux');
    return;
  }
  const server = await startServer();
  t.teardown(() => server.stop());
  // /proc takes no new files: the write of the copy fails as on a read-only or full disk.
  const result = await runCli(['backup', '--data-dir', server.dataDir, '--to', '/proc/fraud-scorer-backup.db']);
  t.is(result.code, 1, result.stderr);
  t.regex(result.stderr, /^fraud-scorer backup: cannot write in \/proc: /);
  t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
});

// `nobody` stands for the service's own user; the commands run as root (sudo), as an operator might.
const kServiceUser = { uid: 65534, gid: 65534 };
(process.getuid?.() === 0 ? test : test.skip)('run as root on a data dir the service user owns, backup and accounts erase give the files they make to that user, whose next command can secure them', async (t) => {
  // A first start as root in the folder made for the service: every file it makes is the user's.
  const dataDir = makeDataDir();
  chownSync(dataDir, kServiceUser.uid, kServiceUser.gid);
  const server = await startServer({ dataDir, keepDataDir: true });
  await server.stop();
  for (const name of readdirSync(dataDir)) t.is(statSync(join(dataDir, name)).uid, kServiceUser.uid, name);
  rmSync(join(dataDir, 'start-snapshot'), { force: true });
  const backup = await runCli(['backup', '--data-dir', dataDir, '--to', join(makeDataDir(), 'copy.db')]);
  t.is(backup.code, 0, backup.stderr);
  const erase = await runCli(['accounts', 'erase', '--data-dir', dataDir, '--project', 'live', 'nobody-here']);
  t.true(existsSync(join(dataDir, 'start-snapshot')), erase.stderr);
  for (const name of readdirSync(dataDir)) t.is(statSync(join(dataDir, name)).uid, kServiceUser.uid, name);
  // The service's user secures the data dir (every file made 0600) and reads it: as its start does.
  // Only where that user can run this checkout (not from a private folder, as .ci/node22's clone).
  if (spawnSync(process.execPath, [kCliPath, '--version'], kServiceUser).status !== 0) {
    t.log('the service user cannot run this checkout here: its own command is not tried');
    return;
  }
  const asService = spawnSync(process.execPath, [kCliPath, 'keys', 'list', '--data-dir', dataDir], { ...kServiceUser, encoding: 'utf8' });
  t.is(asService.status, 0, asService.stderr);
});

(process.getuid?.() === 0 ? test : test.skip)('a data dir the command\'s user may not enter is said so (EACCES), not "there is no database"', async (t) => {
  const dataDir = makeDataDir();
  const server = await startServer({ dataDir, keepDataDir: true });
  await server.stop();
  chmodSync(dataDir, 0o700); // root's, as /var/lib/fraud-scorer is the service's
  if (spawnSync(process.execPath, [kCliPath, '--version'], kServiceUser).status !== 0) {
    t.log('another user cannot run this checkout here (a private clone): not tried');
    t.pass();
    return;
  }
  for (const args of [['keys', 'list', '--data-dir', dataDir], ['backup', '--data-dir', dataDir, '--to', join(tmpdir(), `fraud-scorer-nobody-${process.pid}.db`)]]) {
    const result = spawnSync(process.execPath, [kCliPath, ...args], { ...kServiceUser, encoding: 'utf8' });
    t.is(result.status, 1, result.stderr);
    t.regex(result.stderr, /cannot be looked at \(EACCES\); run the command as the data dir's owner/, args[0]);
    t.notRegex(result.stderr, /there is no database/);
  }
});
