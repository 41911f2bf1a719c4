// A running server keeps SQLite's POSIX lock on its database file. Closing any descriptor of the
// file in this process drops every such lock (the start's read-ahead once did: store/read-ahead.ts);
// another process's sqlite3 then took the file as unused when it closed, checkpointed and deleted
// the WAL under the running server, and acknowledged events were lost at the next crash. Linux:
// /proc/locks lists every lock with its process and the file's inode.
import test from 'ava';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { minimalEvent } from '../_helpers/events.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

/** Whether the server's process holds a POSIX lock on its database file. */
function holdsDatabaseLock(server: TestServer): boolean {
  const inode = statSync(join(server.dataDir, 'fraud-scorer.db')).ino;
  return readFileSync('/proc/locks', 'utf8').split('\n').some((line) => {
    // "1: POSIX  ADVISORY  READ 4242 08:01:123456 1073741826 1073742335" (a waiting lock has "->" before POSIX)
    const fields = line.trim().split(/\s+/).filter((field) => field !== '->');
    return fields[1] === 'POSIX' && Number(fields[4]) === server.child.pid && Number(fields[5]?.split(':')[2]) === inode;
  });
}

test('the server holds its lock on the database file after a first start and after a start that replays a crash', async (t) => {
  let server = await startServer({ keepDataDir: true });
  t.teardown(() => server.stop());
  const { dataDir } = server;
  const key = server.bootstrap.keys.live_secret.key;
  // A first start loads the (empty) tables, reading them ahead.
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'locks-1' }) })).status, 200);
  t.true(holdsDatabaseLock(server), 'after a first start');
  // A crash: the next start loads the tables and replays the log, reading both ahead.
  await server.kill();
  server = await startServer({ dataDir, keepDataDir: true });
  t.is((await api(server, 'POST', '/v1/events', { key, body: minimalEvent({ external_account_id: 'locks-2' }) })).status, 200);
  t.true(holdsDatabaseLock(server), 'after a start that followed a crash');
});
