// Accounts at scale (issue 5): a store with 100,000 accounts, their signals and links, built
// through the real write path (persistScoredEvent, then the rows that follow in bulk); then, timed with tinybench:
//   - the links route's work (AccountsService.links) for a typical account and for an account with
//     a thousand links — server time, without HTTP;
//   - loading the accounts into memory at start (HotAccounts.load), and the `links` and `account`
//     signals of an event answered from memory;
//   - the in-memory velocity windows (read and record);
//   - a stored keyed hash of a value: HMAC, and from the cache of the HTTP thread.
import { Bench } from 'tinybench';
import { randomBytes, randomUUID } from 'node:crypto';
import { HotAccounts } from '../../src/accounts/hot-accounts.js';
import { AccountGate } from '../../src/accounts/account-gate.js';
import { FaultLatch } from '../../src/shared/fault-latch.js';
import type { Checkpointer } from '../../src/store/checkpointer.js';
import { AccountsService } from '../../src/accounts/accounts-service.js';
import { applyDerivedRows, persistScoredEvent, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import type { StoredIdentifier } from '../../src/signals/stored-identifiers.js';
import type { DerivedFlusher } from '../../src/accounts/derived-flush.js';
import { keyedHash, type SignalType } from '../../src/signals/keyed-hash.js';
import { KeyedHashCache } from '../../src/signals/keyed-hash-cache.js';
import { VelocityHashes, VelocityWindows } from '../../src/signals/velocity.js';
import { KeyHasher } from '../../src/state/keys.js';
import { createLogger } from '../../src/shared/log.js';
import { openDatabase } from '../../src/store/database.js';
import { ListsClock } from '../../src/lists/lists-clock.js';
import type { AppWriter } from '../../src/write-commands.js';
import { createBenchStore } from '../_helpers/store.js';

const kAccounts = Number(process.env.BENCH_ACCOUNTS ?? 100_000);
const kHubLinks = 1000;

export async function runSignalsBenchmark(): Promise<void> {
  const store = createBenchStore();
  const { db, bootstrap, secret } = store;
  const tenantId = bootstrap.tenant.tenant_id;
  const projectId = bootstrap.live.project_id;
  const now = Date.now();
  const identifier = (type: SignalType, value: string, masked: string): StoredIdentifier => ({ type, hash: keyedHash(secret, type, value), masked });
  // Built as the server builds it: each event stored (persistScoredEvent), recorded in memory, and
  // the rows that follow from it written in bulk (applyDerivedRows).
  const builder = HotAccounts.load(db, new KeyHasher(secret), secret).accounts;
  const space = builder.space(tenantId, 'live');
  const score = (external: string, ids: StoredIdentifier[]): void => {
    const account = builder.account(space, tenantId, 'live', external);
    const record: ScoredEventRecord = {
      projectId, tenantId, environment: 'live', eventId: randomUUID(), eventType: 'payment', receivedAt: now, payload: '{}',
      account: { accountId: account.publicId, externalId: external, isNew: account.slot < 0, newProject: !builder.usedFrom(account.slot, projectId) },
      rulesetVersion: 1, decision: 'allow', riskScore: 0, result: '{}', shadow: '[]', signals: '[1,null,null,null]', scoredAt: now, webhookPayload: null,
    };
    const stored = persistScoredEvent(db, record, null);
    if (stored.kind !== 'stored') throw new Error('not stored');
    builder.recorded(space, tenantId, 'live', projectId, external, stored.accountId!, 'allow', now, builder.eventSignals(ids), ids, stored.order, stored.seq, account.slot < 0);
  };
  const writeRows = (): void => {
    const taken = builder.takeRows();
    if (taken !== null) applyDerivedRows(db, taken.batch);
  };

  const started = performance.now();
  const build = db.transaction((from: number, to: number) => {
    for (let a = from; a < to; a++) {
      // Households of four share a device, families of ten an IP; everyone has an email and phone.
      score(`user-${a}`, [
        identifier('email', `user${a}@example.com`, 'u***@e***.com'),
        identifier('phone', `+4915${String(10_000_000 + a).padStart(9, '0')}`, '+49*********00'),
        identifier('fp', `fp_household_${Math.floor(a / 4)}`, 'fp_hou***'),
        identifier('ip', `10.${(a >> 14) & 255}.${(a >> 6) & 255}.${Math.floor(a / 10) & 63}`, '10.0.0.*'),
      ]);
    }
    writeRows();
  });
  for (let from = 0; from < kAccounts; from += 5000) build(from, Math.min(kAccounts, from + 5000));
  // One account that shares a card with a thousand others.
  const hubCard = identifier('card', '411111:0000', '411111******0000');
  db.transaction(() => {
    for (let i = 0; i < kHubLinks; i++) score(`user-${i}`, [hubCard]);
    score('hub', [hubCard]);
    writeRows();
  })();
  // The store links each new holder with at most 100 earlier ones; add the hub's other links the
  // way later refreshes would, so that it has a thousand.
  const publicIdOf = (external: string): string => builder.account(space, tenantId, 'live', external).publicId;
  const link = db.prepare(`INSERT OR IGNORE INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen) VALUES (?, 'card', ?, ?, ?, '411111******0000', ?, ?)`);
  const back = db.prepare(`INSERT OR IGNORE INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen) VALUES (?, 'card', ?, 'hub', ?, '411111******0000', ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < kHubLinks; i++) {
      link.run(publicIdOf('hub'), publicIdOf(`user-${i}`), `user-${i}`, `,${projectId},`, now, now);
      back.run(publicIdOf(`user-${i}`), publicIdOf('hub'), `,${projectId},`, now, now);
    }
  })();
  const links = (db.prepare('SELECT count(*) AS n FROM account_links').get() as { n: number }).n;
  console.log(`built ${kAccounts.toLocaleString('en-US')} accounts and ${links.toLocaleString('en-US')} links in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

  const readDb = openDatabase(store.dataDir, { readonly: true });
  const loaded = HotAccounts.load(readDb, new KeyHasher(secret), secret);
  const { counts } = loaded;
  console.log(`loaded ${counts.accounts.toLocaleString('en-US')} accounts, ${counts.signals.toLocaleString('en-US')} signal rows and ${counts.links.toLocaleString('en-US')} links into memory in ${(counts.ms / 1000).toFixed(2)} s`
    + ` (${((counts.ms * 1000) / (counts.accounts + counts.signals + counts.links)).toFixed(2)} µs per row)\n`);
  const hot = loaded.accounts;
  const accounts = new AccountsService({
    readDb, writer: null as unknown as AppWriter, hotAccounts: hot, derived: null as unknown as DerivedFlusher, velocity: new VelocityWindows(new KeyHasher(randomBytes(32))),
    gate: new AccountGate(), checkpointer: null as unknown as Checkpointer, latch: new FaultLatch(null),
    secret, log: createLogger('error'), now: Date.now, listsClock: new ListsClock(), asyncScorers: { live: { drop: () => undefined }, sandbox: { drop: () => undefined } },
    unfoldedCases: { forget: () => undefined }, webhooks: { deliveriesUnderWay: () => [] },
  });
  const scope = { tenantId, environment: 'live', projectId } as const;
  const hubAnswer = accounts.links(scope, 'hub');
  if (!hubAnswer.ok || (JSON.parse(hubAnswer.json) as { links: unknown[] }).links.length !== kHubLinks) throw new Error('the hub account does not have its links');
  const eventSignals = hot.eventSignals([identifier('email', 'user500@example.com', ''), identifier('fp', 'fp_household_125', ''), identifier('ip', '10.0.7.50', '')]);
  const slotOf = (n: number): number => hot.account(hot.space(tenantId, 'live'), tenantId, 'live', `user-${n}`).slot;
  const velocity = new VelocityWindows(new KeyHasher(randomBytes(32)));
  let cursor = 0;

  const bench = new Bench({ time: 1500, warmupTime: 300 });
  bench
    .add('links route: a typical account (≈12 links)', () => {
      accounts.links(scope, `user-${(cursor = (cursor + 7919) % kAccounts)}`);
    })
    .add(`links route: an account with ${kHubLinks} links`, () => {
      accounts.links(scope, 'hub');
    })
    .add('links signal of an event (3 signals + stored links; account found by external id)', () => {
      hot.links(hot.space(tenantId, 'live'), slotOf((cursor = (cursor + 7919) % kAccounts)), eventSignals, now);
    })
    .add('account signal of an event (account found by external id)', () => {
      hot.accountSignals(slotOf((cursor = (cursor + 7919) % kAccounts)), now);
    })
    .add('velocity read + record (5 keys)', () => {
      const n = (cursor = (cursor + 7919) % kAccounts);
      const keys = { cardToken: `tok_${n % 30_000}`, ip: `10.0.${n & 255}.1`, accountId: `acc_${n}`, email: `user${n}@example.com`, fp: `fp_${n >> 2}` };
      velocity.read(projectId, keys, now);
      velocity.record(projectId, keys, 1000, now);
    })
    .add('velocity read + record (5 keys), the read\'s hashes reused (VelocityHashes, as the scorer does)', () => {
      const n = (cursor = (cursor + 7919) % kAccounts);
      const keys = { cardToken: `tok_${n % 30_000}`, ip: `10.0.${n & 255}.1`, accountId: `acc_${n}`, email: `user${n}@example.com`, fp: `fp_${n >> 2}` };
      const hashes = new VelocityHashes();
      velocity.read(projectId, keys, now, hashes);
      velocity.record(projectId, keys, 1000, now, hashes);
    })
    .add('stored keyed hash of an email: HMAC', () => {
      keyedHash(secret, 'email', `user${(cursor = (cursor + 7919) % kAccounts)}@example.com`);
    })
    .add('stored keyed hash of an email: KeyedHashCache (every value seen before)', () => {
      hashes.hash('email', `user${(cursor = (cursor + 7919) % kAccounts)}@example.com`);
    });
  // The cache holds every account's email, as the HTTP thread's holds the values of recent events.
  const hashes = new KeyedHashCache(secret, new KeyHasher(secret));
  for (let n = 0; n < kAccounts; n++) hashes.hash('email', `user${n}@example.com`);
  await bench.run();
  console.table(bench.tasks.map((task) => {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    return { task: task.name, 'µs/op (mean)': (result.latency.mean * 1000).toFixed(1), 'µs/op (p99)': (result.latency.p99 * 1000).toFixed(1), 'ops/s': Math.round(result.throughput.mean) };
  }));
  readDb.close();
  store.remove();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runSignalsBenchmark().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
