// The links read at start by the start's thread and taken by the HTTP thread as typed arrays
// (src/accounts/link-rows.ts): the state they make is the state the table makes; rows of another
// order of accounts are not taken (the table is read instead); a thread that fails fails the load.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { HotAccounts, StateLoadError } from '../../src/accounts/hot-accounts.js';
import { AccountOrder, LinkRowsReceiver, postLinkRows, type LinkMessage } from '../../src/accounts/link-rows.js';
import { KeyHasher } from '../../src/state/keys.js';
import { partBuffers } from '../../src/state/slots.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { installSecret } from '../../src/store/install-secret.js';
import { migrate } from '../../src/store/migrate.js';

const kTypes = ['email', 'phone', 'fp', 'ip_24h', 'card'];

/** 200 accounts of one tenant's live space, ~200 links between them, and links to an account with no row. */
function database(t: { teardown(fn: () => void): void }): { db: Db; secret: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'link-rows-'));
  const db = openDatabase(dir);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  migrate(db);
  const secret = installSecret(db);
  db.exec("INSERT INTO tenants (tenant_id, name, created_at) VALUES ('ten_a', 'a', 0)");
  const account = db.prepare(`INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews)
    VALUES (?, 'ten_a', 'live', ?, 1000, 2000, 1, 0, 0)`);
  const link = db.prepare(`INSERT OR IGNORE INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
    VALUES (?, ?, ?, ?, ',prj_a,', ?, ?, ?)`);
  const ids = Array.from({ length: 200 }, (_, i) => `acc_${randomBytes(8).toString("hex")}${String(i).padStart(4, "0")}`);
  db.transaction(() => {
    ids.forEach((id, i) => account.run(id, `user-${i}`));
    for (let k = 0; k < 600; k++) {
      const a = ids[(k * 7) % ids.length]!;
      const b = ids[(k * 13 + 5) % ids.length]!;
      if (a === b) continue;
      const type = kTypes[k % kTypes.length]!;
      const masked = `m***${k % 9}`;
      link.run(a, type, b, 'x', masked, 1_000 + k, 5_000 + k);
      link.run(b, type, a, 'x', masked, 1_000 + k, 5_000 + k);
    }
    // A link to an account with no row: neither way loads it.
    link.run(ids[0], 'email', 'acc_gone000000000000000', 'x', 'g***', 1, 2);
    link.run('acc_gone000000000000000', 'email', ids[0], 'x', 'g***', 1, 2);
  })();
  return { db, secret };
}

/** The messages postLinkRows posts, taken by a receiver on the same thread (they queue on its port). */
function threadRows(db: Db, chunkRows: number): LinkRowsReceiver {
  const { port1, port2 } = new MessageChannel();
  const posted = new Int32Array(new SharedArrayBuffer(4));
  postLinkRows(db, port2, posted, chunkRows);
  return new LinkRowsReceiver(port1, posted);
}

/** Messages posted by hand, as a thread would. */
function postedRows(messages: readonly LinkMessage[]): LinkRowsReceiver {
  const { port1, port2 } = new MessageChannel();
  const posted = new Int32Array(new SharedArrayBuffer(4));
  for (const message of messages) port2.postMessage(message);
  Atomics.store(posted, 0, messages.length);
  return new LinkRowsReceiver(port1, posted);
}

function stateOf(accounts: HotAccounts): unknown {
  const parts = accounts.snapshotParts()!;
  // Compared as bytes: typed arrays of the same contents.
  return partBuffers(parts.state).map((buffer) => Buffer.from(buffer).toString('base64'));
}

function accountOrder(db: Db): AccountOrder {
  const order = new AccountOrder();
  for (const id of db.prepare('SELECT account_id FROM accounts ORDER BY account_id').pluck().all() as string[]) order.add(id);
  return order;
}

test('the links from the thread, in chunks, make the state the table makes', (t) => {
  const { db, secret } = database(t);
  const fromTable = HotAccounts.load(db, new KeyHasher(secret), secret);
  t.false(fromTable.counts.linksFromStartThread);
  t.true(fromTable.counts.links > 150, `${fromTable.counts.links} links`);
  const fromThread = HotAccounts.load(db, new KeyHasher(secret), secret, threadRows(db, 7));
  t.true(fromThread.counts.linksFromStartThread);
  t.is(fromThread.counts.links, fromTable.counts.links, 'the link to an account with no row is left out both ways');
  t.deepEqual(stateOf(fromThread.accounts), stateOf(fromTable.accounts));
});

test('rows numbered by another order of accounts are not taken: the table is read', (t) => {
  const { db, secret } = database(t);
  const fromTable = HotAccounts.load(db, new KeyHasher(secret), secret);
  const order = accountOrder(db);
  const wrong = postedRows([{ kind: 'order', count: order.count, hash: order.hash ^ 1 }, { kind: 'end', rows: 0 }]);
  const loaded = HotAccounts.load(db, new KeyHasher(secret), secret, wrong);
  t.false(loaded.counts.linksFromStartThread);
  t.deepEqual(stateOf(loaded.accounts), stateOf(fromTable.accounts));
  // The same with a count that differs.
  const fewer = postedRows([{ kind: 'order', count: order.count - 1, hash: order.hash }, { kind: 'end', rows: 0 }]);
  t.false(HotAccounts.load(db, new KeyHasher(secret), secret, fewer).counts.linksFromStartThread);
});

test('a thread that failed, before or after its first rows, fails the load', (t) => {
  const { db, secret } = database(t);
  const order = accountOrder(db);
  for (const messages of [
    [{ kind: 'failed', message: 'SQLITE_IOERR: disk I/O error' }],
    [{ kind: 'order', count: order.count, hash: order.hash }, { kind: 'failed', message: 'SQLITE_IOERR: disk I/O error' }],
  ] satisfies LinkMessage[][]) {
    const error = t.throws(() => HotAccounts.load(db, new KeyHasher(secret), secret, postedRows(messages)), { instanceOf: StateLoadError });
    t.regex(error!.message, /links from the start thread.*SQLITE_IOERR/);
  }
});

test('the order of accounts: the same ids in the same order hash the same, any other order or id not', (t) => {
  const hash = (ids: readonly string[]): number => {
    const order = new AccountOrder();
    for (const id of ids) order.add(id);
    return order.hash;
  };
  t.is(hash(['acc_a', 'acc_b']), hash(['acc_a', 'acc_b']));
  t.not(hash(['acc_a', 'acc_b']), hash(['acc_b', 'acc_a']));
  t.not(hash(['acc_a', 'acc_b']), hash(['acc_ab']));
  t.not(hash(['acc_a', 'acc_b']), hash(['acc_a', 'acc_c']));
});

test('a new account\'s acc_ id is the same for each of its events until one is stored, and forgotten when none was', (t) => {
  const { db, secret } = database(t);
  const { accounts } = HotAccounts.load(db, new KeyHasher(secret), secret);
  const tenant = db.prepare('SELECT tenant_id FROM tenants LIMIT 1').pluck().get() as string;
  const space = accounts.space(tenant, 'live');
  const first = accounts.account(space, tenant, 'live', 'ext-new');
  t.is(first.slot, -1);
  t.is(accounts.account(space, tenant, 'live', 'ext-new').publicId, first.publicId, 'the same id for its next event');
  accounts.notStored(tenant, 'live', 'ext-new');
  t.not(accounts.account(space, tenant, 'live', 'ext-new').publicId, first.publicId, 'forgotten');
});
