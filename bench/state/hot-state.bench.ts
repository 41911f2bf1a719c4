// The hot state at the scale of issue 10 (1M accounts, 5M links, 10M event ids), in memory only:
// how many bytes each kind of entry costs and what the process holds (RSS), then, timed with
// tinybench, what the HTTP thread will pay per event: recording an event (returning and new
// accounts), the `links` and `account` signals, the keyed hashes of an event's values, the links
// route, and the event index. Everything is built before the timed closures run; the build also
// reports its slowest single recordEvent (that is where a table doubles).
//
//   node dist/bench/state/hot-state.bench.js                      (after npm run build; ~2 min)
//   BENCH_ACCOUNTS=100000 BENCH_EVENT_IDS=1000000 node dist/bench/state/hot-state.bench.js
//
// The accounts: each has its own email, phone and card, shares a device with 3 others and an IP
// with 7 others (within 24 hours), so each value is linked as the store links it: 5 links per
// account on average (a device: 6 per 4 accounts, an IP: 28 per 8).
import { Bench } from 'tinybench';
import { newId } from '../../src/shared/ids.js';
import { EventIndex } from '../../src/state/event-index.js';
import { EventSignals, HotState, SignalType } from '../../src/state/hot-state.js';
import { KeyHasher } from '../../src/state/keys.js';
import { sumBytes, type Bytes } from '../../src/state/slots.js';

const kAccounts = Number(process.env.BENCH_ACCOUNTS ?? 1_000_000);
const kEventIds = Number(process.env.BENCH_EVENT_IDS ?? 10_000_000);
/** New accounts prepared for the "new account" task (it stops early if it runs out). */
const kNewAccounts = 300_000;
const kT0 = Date.UTC(2026, 10, 23, 8);

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(0)} MiB`;
const count = (n: number): string => n.toLocaleString('en-US');

/** The values of account `i` (its own email, phone, card; a device shared by 4, an IP by 8). */
function fill(signals: EventSignals, hasher: KeyHasher, i: number): void {
  signals.clear();
  signals.addValue(hasher, 0, SignalType.Email, `user${i}@example${i % 7}.com`, 'u***@e***.com');
  signals.addValue(hasher, 0, SignalType.Phone, `+4915${String(10_000_000 + i).padStart(9, '0')}`, '+49*********00');
  signals.addValue(hasher, 0, SignalType.Fp, `fp_household_${i >> 2}`, 'fp_hou***');
  signals.addValue(hasher, 0, SignalType.Ip, `10.${(i >> 19) & 255}.${(i >> 11) & 255}.${(i >> 3) & 255}`, '10.0.0.*');
  signals.addValue(hasher, 0, SignalType.Card, `411111:${i}`, '411111******0000');
}

const eventId = (i: number): string => `${(i >>> 0).toString(16).padStart(8, '0')}-7a1c-4e2b-9d3f-${String(i).padStart(12, '0')}`;

export async function runHotStateBenchmark(): Promise<void> {
  const hasher = new KeyHasher(Buffer.alloc(32, 7));
  const rssAtStart = process.memoryUsage().rss;
  const hot = new HotState({ hasher, newPublicId: () => newId('acc') });
  const signals = new EventSignals();

  let started = performance.now();
  let slowest = 0;
  for (let i = 0; i < kAccounts; i++) {
    fill(signals, hasher, i);
    const before = performance.now();
    const outcome = hot.recordEvent(0, 0, `user-${i}`, 'allow', kT0 + i, signals);
    slowest = Math.max(slowest, performance.now() - before);
    if (!outcome.ok) throw new Error(`${outcome.error.code}: ${outcome.error.message}`);
  }
  const stats = hot.stats;
  const rssWithState = process.memoryUsage().rss;
  console.log(`built ${count(stats.accounts)} accounts, ${count(stats.values)} signal values, ${count(stats.holders)} holders, ${count(stats.links)} links `
    + `(${count(stats.links * 2)} rows of account_links) in ${((performance.now() - started) / 1000).toFixed(1)} s; slowest recordEvent ${slowest.toFixed(1)} ms`);

  // A hub account with a thousand links: it shares a card with 1000 others, arriving 100 every two
  // hours, and uses it again an hour after each hundred (a refresh links it with the 100 most recent).
  const hubCard = new EventSignals();
  hubCard.addValue(hasher, 0, SignalType.Card, '411111:hub', '411111******0000');
  let at = kT0 + kAccounts;
  hot.recordEvent(0, 0, 'hub', 'allow', at, hubCard);
  for (let round = 0; round < 10; round++) {
    for (let k = 0; k < 100; k++) hot.recordEvent(0, 0, `user-${round * 100 + k}`, 'allow', at + k, hubCard);
    at += 2 * 3_600_000;
    hot.recordEvent(0, 0, 'hub', 'allow', at, hubCard);
  }
  const hub = hot.findAccount(0, 'hub');
  const hubLinks = (JSON.parse(hot.linksJson(hub, 0)!) as { links: unknown[] }).links.length;
  if (hubLinks !== 1000) throw new Error(`the hub has ${hubLinks} links, not 1000`);

  started = performance.now();
  const events = new EventIndex(hasher);
  for (let i = 0; i < kEventIds; i++) events.add(i % 4, eventId(i), 1 + i);
  const rssWithEvents = process.memoryUsage().rss;
  console.log(`built ${count(events.size)} event ids in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

  const row = (entry: string, entries: number, bytes: Bytes): Record<string, string> => ({
    entry, count: count(entries), 'held (allocated)': mib(bytes.held), 'used (written)': mib(bytes.used),
    'bytes each, held': (bytes.held / entries).toFixed(1), 'bytes each, used': (bytes.used / entries).toFixed(1),
  });
  console.table([
    row('account (with query marks)', stats.accounts, sumBytes(stats.bytes.accounts, stats.bytes.scratch)),
    row('signal value', stats.values, stats.bytes.values),
    row('holder (account, value)', stats.holders, stats.bytes.holders),
    row('link (both directions)', stats.links, stats.bytes.links),
    row('event id', events.size, events.bytes),
  ]);
  const heap = process.memoryUsage();
  console.log(`RSS: ${mib(rssAtStart)} at start, ${mib(rssWithState)} with accounts, values, holders and links (+${mib(rssWithState - rssAtStart)}), `
    + `${mib(rssWithEvents)} with the event ids (+${mib(rssWithEvents - rssWithState)}); V8 heap used ${mib(heap.heapUsed)}, array buffers ${mib(heap.arrayBuffers)}\n`);

  // Inputs for the timed closures, prepared here: events of returning accounts (their own values,
  // within the hour: nothing to write), keys of new accounts, ids to look up.
  const kPool = 4096;
  const returning = Array.from({ length: kPool }, (_, k) => {
    const i = Math.floor(((k * 2654435761) >>> 0) / 4294967296 * kAccounts);
    const event = new EventSignals();
    fill(event, hasher, i);
    return { i, externalId: `user-${i}`, event, account: hot.findAccount(0, `user-${i}`) };
  });
  const newKeys = new Uint32Array(kNewAccounts * 20);
  const newExternal: string[] = [];
  for (let n = 0; n < kNewAccounts; n++) {
    fill(signals, hasher, kAccounts + n);
    newKeys.set(signals.keys.subarray(0, 20), n * 20);
    newExternal.push(`user-${kAccounts + n}`);
  }
  const hits = Array.from({ length: kPool }, (_, k) => Math.floor(((k * 2654435761) >>> 0) / 4294967296 * kEventIds));
  const hitIds = hits.map(eventId);
  const missIds = hits.map((i) => eventId(i).replace('7a1c', '7a1d'));
  let cursor = 0;
  let fresh = 0;
  const now = at + 60_000;

  const bench = new Bench({ time: 1000, warmupTime: 200 });
  bench
    .add('recordEvent: returning account, 5 values (nothing to write)', () => {
      const r = returning[(cursor = (cursor + 1) & (kPool - 1))]!;
      hot.recordEvent(0, 0, r.externalId, 'allow', now, r.event);
    })
    .add('links signal: 5 values + the account\'s links', () => {
      const r = returning[(cursor = (cursor + 1) & (kPool - 1))]!;
      hot.linkSignals(0, r.account, r.event, now);
    })
    .add('account signal', () => {
      hot.accountSignals(returning[(cursor = (cursor + 1) & (kPool - 1))]!.account, now);
    })
    .add('keyed hashes of 5 values (EventSignals.addValue ×5)', () => {
      fill(signals, hasher, returning[(cursor = (cursor + 1) & (kPool - 1))]!.i);
    })
    .add('links route: a typical account (JSON)', () => {
      hot.linksJson(returning[(cursor = (cursor + 1) & (kPool - 1))]!.account, 0);
    })
    .add('links route: an account with 1,000 links (JSON)', () => {
      hot.linksJson(hub, 0);
    })
    .add(`event index at ${count(kEventIds)}: find (hit)`, () => {
      cursor = (cursor + 1) & (kPool - 1);
      events.find(hits[cursor]! % 4, hitIds[cursor]!);
    })
    .add(`event index at ${count(kEventIds)}: find (miss)`, () => {
      events.find(0, missIds[(cursor = (cursor + 1) & (kPool - 1))]!);
    })
    .add('recordEvent: new account, 5 new values (2 shared: links)', () => {
      if (fresh === kNewAccounts) return;
      signals.clear();
      for (let v = 0; v < 5; v++) signals.add(v as SignalType, newKeys, fresh * 20 + v * 4, 'x***');
      hot.recordEvent(0, 0, newExternal[fresh]!, 'allow', now, signals);
      fresh++;
    });
  await bench.run();
  console.table(bench.tasks.map((task) => {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    return { task: task.name, 'µs/op (mean)': (result.latency.mean * 1000).toFixed(2), 'µs/op (p99)': (result.latency.p99 * 1000).toFixed(2), 'ops/s': Math.round(result.throughput.mean) };
  }));
  if (fresh === kNewAccounts) console.log(`(the new-account task ran out of its ${count(kNewAccounts)} prepared accounts: its figures include empty calls)`);
  console.log(`RSS at the end: ${mib(process.memoryUsage().rss)} (with the ${count(fresh)} accounts the new-account task added and the inputs prepared for it)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runHotStateBenchmark().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
