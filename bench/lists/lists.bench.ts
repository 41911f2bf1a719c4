// Block and allow lists at 1,000,000 items (issue 13): what a rule worker holds per item and what
// an in_list() lookup costs, against the obvious alternative (a JavaScript Set of the strings),
// and what loading a list and catching up with 10,000 changes take. Lists are stored as the
// service stores them (SQLite, list-store.ts) and read back the way a rule worker reads them
// (worker-lists.ts).
//
//   node dist/bench/lists/lists.bench.js                  (after npm run build; ~1 min)
//   BENCH_LIST_ITEMS=100000 node dist/bench/lists/lists.bench.js
import { Bench } from 'tinybench';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { compileRuleset, loadRuleset, type RuleDefinition } from '../../compiler/index.js';
import { normalizeEmail } from '../../src/signals/email.js';
import { addListItems, createList, listClock, type NewItem } from '../../src/lists/list-store.js';
import { ListsClock } from '../../src/lists/lists-clock.js';
import { WorkerLists } from '../../src/lists/worker-lists.js';
import { createBenchStore } from '../_helpers/store.js';

const kItems = Number(process.env.BENCH_LIST_ITEMS ?? 1_000_000);
const kBatch = 10_000;

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;
const count = (n: number): string => n.toLocaleString('en-US');
const email = (i: number): string => `customer.${i}@mail${i % 997}.example`;
const address = (i: number): string => `${10 + (i >>> 24)}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function fill(store: ReturnType<typeof createBenchStore>, projectId: string, listId: string, kind: 'email' | 'ip', values: (i: number) => string, extra: string[] = []): number {
  const db = store.db;
  const created = db.transaction(() => createList(db, projectId, { list_id: listId, kind, description: 'bench' }, 'bench', Date.now()))();
  if (created.kind !== 'created') throw new Error(`list ${listId}: ${created.kind}`);
  const lid = created.list.lid;
  const started = performance.now();
  for (let from = 0; from < kItems; from += kBatch) {
    const items: NewItem[] = [];
    for (let i = from; i < Math.min(kItems, from + kBatch); i++) items.push({ value: values(i), note: null, expiresAt: null });
    if (from === 0) for (const value of extra) items.push({ value, note: null, expiresAt: null });
    db.transaction(() => addListItems(db, projectId, lid, items, 'bench', Date.now()))();
  }
  console.log(`stored ${count(kItems + extra.length)} items in list ${listId} (${kind}) in ${((performance.now() - started) / 1000).toFixed(1)} s, ${kBatch / 1000}k per transaction`);
  return lid;
}

async function main(): Promise<void> {
  const store = createBenchStore();
  try {
    const projectId = store.bootstrap.live.project_id;
    const db = store.db;
    // Addresses plus 1,000 /24 ranges and ten /16 ranges: an address is looked up under 3 prefix lengths.
    const ranges = [...Array.from({ length: 1000 }, (_, i) => `172.${16 + (i >> 8)}.${i & 255}.0/24`), ...Array.from({ length: 10 }, (_, i) => `192.${168 - i}.0.0/16`)];
    fill(store, projectId, 'emails', 'email', email);
    fill(store, projectId, 'ips', 'ip', address, ranges);
    db.pragma('wal_checkpoint(TRUNCATE)');

    // A rule worker's copy: loaded on the first lookup.
    const clock = new ListsClock();
    clock.advance(listClock(db));
    const lists = new WorkerLists(db, clock);
    const heapBefore = heapUsed();
    let started = performance.now();
    lists.forEvent(projectId, Date.now(), null).has('emails', email(1));
    const loadEmails = performance.now() - started;
    started = performance.now();
    lists.forEvent(projectId, Date.now(), null).has('ips', address(1));
    const loadIps = performance.now() - started;
    const heapWithLists = heapUsed();
    const stats = lists.stats();
    console.log(`\nloaded into a worker: emails in ${loadEmails.toFixed(0)} ms, ips in ${loadIps.toFixed(0)} ms (first lookup of each)`);

    // The alternative: the strings themselves in a Set, as read from SQLite.
    const before = heapUsed();
    const strings = db.prepare("SELECT value FROM list_items WHERE lid = (SELECT lid FROM lists WHERE list_id = 'emails')").pluck().all() as string[];
    const set = new Set(strings);
    strings.length = 0;
    const setBytes = heapUsed() - before;

    console.table([
      { form: 'keyed 64-bit hashes (used)', lists: stats.lists, items: count(stats.items), 'typed arrays': mib(stats.bytes), 'bytes per item': (stats.bytes / stats.items).toFixed(1), 'V8 heap growth': mib(heapWithLists - heapBefore) },
      { form: 'Set of the strings (emails only)', lists: 1, items: count(set.size), 'typed arrays': '-', 'bytes per item': (setBytes / set.size).toFixed(1), 'V8 heap growth': mib(setBytes) },
    ]);
    console.log('(bytes per item of the hashes: 8 per slot at a load of at most 1/2; a list with expiring items adds 8 per slot. Each rule worker holds its own copy.)\n');

    // Rulesets with and without a list, through the compiled function.
    const rule = (expression: string): RuleDefinition => ({ rule_id: 'r', kind: 'scoring', status: 'active', expression, score_delta: 10, bands: null, action: null, description: '', version: 1 });
    const compiled = (expression: string) => {
      const result = compileRuleset([rule(expression)], { lists: ['emails', 'ips'] });
      if (!result.ok) throw new Error(JSON.stringify(result.errors));
      return loadRuleset(result.artifact.source);
    };
    const withList = compiled("in_list('emails', user.email) || in_list('ips', context.ip)");
    const withoutList = compiled("user.email == 'nobody@example.com' || context.ip == '192.0.2.1'");
    const kPool = 4096;
    const hits = Array.from({ length: kPool }, (_, k) => email(Math.floor(((k * 2654435761) >>> 0) / 4294967296 * kItems)));
    const misses = hits.map((value) => value.replace('customer', 'stranger'));
    const hitIps = Array.from({ length: kPool }, (_, k) => address(Math.floor(((k * 40503) >>> 0) % kItems)));
    const missIps = Array.from({ length: kPool }, (_, k) => `8.8.${(k >> 8) & 255}.${k & 255}`);
    const events = hits.map((value, k) => ({ user: { email: k % 2 === 0 ? value : misses[k] }, context: { ip: missIps[k] } }));
    let cursor = 0;
    const now = Date.now();
    const view = lists.forEvent(projectId, now, null);

    const bench = new Bench({ time: 1000, warmupTime: 200 });
    bench
      .add(`in_list email, hit (${count(kItems)} items)`, () => {
        view.has('emails', hits[(cursor = (cursor + 1) & (kPool - 1))]!);
      })
      .add(`in_list email, miss (${count(kItems)} items)`, () => {
        view.has('emails', misses[(cursor = (cursor + 1) & (kPool - 1))]!);
      })
      .add('Set<string> email, hit (normalised, then has)', () => {
        set.has(normalizeEmail(hits[(cursor = (cursor + 1) & (kPool - 1))]!));
      })
      .add('Set<string> email, miss (normalised, then has)', () => {
        set.has(normalizeEmail(misses[(cursor = (cursor + 1) & (kPool - 1))]!));
      })
      .add(`in_list ip, address hit (${count(kItems)} addresses + ${count(ranges.length)} ranges, 3 prefix lengths)`, () => {
        view.has('ips', hitIps[(cursor = (cursor + 1) & (kPool - 1))]!);
      })
      .add('in_list ip, miss (3 probes)', () => {
        view.has('ips', missIps[(cursor = (cursor + 1) & (kPool - 1))]!);
      })
      .add('ruleset: in_list(emails) || in_list(ips)', () => {
        withList({ event: events[(cursor = (cursor + 1) & (kPool - 1))]!, signals: {}, now, lists: lists.forEvent(projectId, now, null) });
      })
      .add('ruleset: the same rule as == comparisons (no list)', () => {
        withoutList({ event: events[(cursor = (cursor + 1) & (kPool - 1))]!, signals: {}, now, lists: lists.forEvent(projectId, now, null) });
      });
    await bench.run();
    console.table(bench.tasks.map((task) => {
      const result = task.result;
      if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
      return { task: task.name, 'ns/op (mean)': Math.round(result.latency.mean * 1e6), 'ns/op (p99)': Math.round(result.latency.p99 * 1e6), 'ops/s': Math.round(result.throughput.mean) };
    }));

    // A change of 10,000 items: what the next lookup in a worker pays to catch up.
    const lid = (db.prepare("SELECT lid FROM lists WHERE list_id = 'emails'").get() as { lid: number }).lid;
    const more: NewItem[] = Array.from({ length: kBatch }, (_, i) => ({ value: email(kItems + i), note: null, expiresAt: null }));
    db.transaction(() => addListItems(db, projectId, lid, more, 'bench', Date.now()))();
    clock.advance(listClock(db));
    started = performance.now();
    const found = lists.forEvent(projectId, Date.now(), null).has('emails', email(kItems + 1));
    console.log(`\ncatching up with ${count(kBatch)} added items (one request's worth) on the next lookup: ${(performance.now() - started).toFixed(1)} ms (found: ${found})`);
    console.log(`RSS at the end: ${mib(process.memoryUsage().rss)}`);
  } finally {
    store.remove();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
