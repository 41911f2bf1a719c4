// A server's start: what loading the hot state from the rows of the tables costs per row
// (HotState.loadAccount + addProject, loadHolder, loadLink), in memory only — the rows are made
// up front, as a reader of accounts, account_projects, account_signals and account_links would
// hand them over, so that the figures are the hot state's part alone (reading SQLite is not
// counted). Holders are loaded in ascending last seen (the fast order), then, into a second state,
// shuffled, for comparison.
//
//   node dist/bench/state/hot-state-load.bench.js            (after npm run build; ~20 s here)
//   BENCH_ACCOUNTS=1000000 node dist/bench/state/hot-state-load.bench.js
//
// The accounts are those of hot-state.bench.ts: each has its own email, phone and card, shares a
// device with 3 others and an IP with 7 others: 5 holders and 5 links per account (a device: 6
// links per 4 accounts, an IP: 28 per 8). At 200,000 accounts: 1M holder rows, 1M links (2M rows of
// account_links, given once per pair).
import { newId } from '../../src/shared/ids.js';
import { EventSignals, HotState, SignalType, type StateError } from '../../src/state/hot-state.js';
import { KeyDomain, KeyHasher } from '../../src/state/keys.js';

const kAccounts = Number(process.env.BENCH_ACCOUNTS ?? 200_000);
const kT0 = Date.UTC(2026, 10, 23, 8);
const kHolders = 5;
const kDomains = [KeyDomain.Email, KeyDomain.Phone, KeyDomain.Fp, KeyDomain.Ip, KeyDomain.Card];
const kMasks = ['u***@e***.com', '+49*********00', 'fp_hou***', '10.0.0.*', '411111******0000'];

const count = (n: number): string => n.toLocaleString('en-US');
const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(0)} MiB`;

function check(error: StateError | null): void {
  if (error !== null) throw new Error(`${error.code}: ${error.message}`);
}

/** The normalised values of account `i`, by SignalType. */
function valuesOf(i: number): string[] {
  return [
    `user${i}@example${i % 7}.com`, `+4915${String(10_000_000 + i).padStart(9, '0')}`, `fp_household_${i >> 2}`,
    `10.${(i >> 19) & 255}.${(i >> 11) & 255}.${(i >> 3) & 255}`, `411111:${i}`,
  ];
}

// The rows, made before anything is timed.
let started = performance.now();
const hasher = new KeyHasher(Buffer.alloc(32, 7));
const publicIds = Array.from({ length: kAccounts }, () => newId('acc'));
/** Holder rows in ascending last seen: account i's five values, last seen kT0 + i. */
const holderKeys = new Uint32Array(kAccounts * kHolders * 4);
for (let i = 0; i < kAccounts; i++) {
  const values = valuesOf(i);
  for (let type = 0; type < kHolders; type++) hasher.key128(kDomains[type]!, 0, values[type]!, holderKeys, (i * kHolders + type) * 4);
}
/** Link rows, once per pair: [a, b, type] by account index; a device links groups of 4, an IP groups of 8. */
const linkRows: number[] = [];
for (let i = 0; i < kAccounts; i++) {
  for (let j = i + 1; j < kAccounts && j >> 2 === i >> 2; j++) linkRows.push(i, j, SignalType.Fp);
  for (let j = i + 1; j < kAccounts && j >> 3 === i >> 3; j++) linkRows.push(i, j, SignalType.Ip);
}
const kLinks = linkRows.length / 3;
/** A shuffled order of the holder rows (xorshift32). */
const shuffled = Uint32Array.from({ length: kAccounts * kHolders }, (_, k) => k);
let state = 2463534242;
for (let k = shuffled.length - 1; k > 0; k--) {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  const j = (state >>> 0) % (k + 1);
  [shuffled[k], shuffled[j]] = [shuffled[j]!, shuffled[k]!];
}
console.log(`made ${count(kAccounts)} account rows, ${count(kAccounts * kHolders)} holder rows, ${count(kLinks)} links (${count(kLinks * 2)} rows of account_links) `
  + `in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

/** Loads the accounts and their projects into a fresh state; the state, the account numbers and the time (ms). */
function loadAccounts(): { hot: HotState; accounts: Uint32Array; ms: number } {
  const hot = new HotState({ hasher, newPublicId: () => newId('acc') });
  const accounts = new Uint32Array(kAccounts);
  const begin = performance.now();
  for (let i = 0; i < kAccounts; i++) {
    const account = hot.loadAccount(0, `user-${i}`, publicIds[i]!, kT0 - 86_400_000 + i, kT0 + i, 1 + (i % 9), i % 13 === 0 ? 1 : 0, i % 5 === 0 ? 1 : 0, i % 997 === 0);
    if (typeof account !== 'number') throw new Error(`${account.code}: ${account.message}`);
    hot.addProject(account, i % 3);
    accounts[i] = account;
  }
  return { hot, accounts, ms: performance.now() - begin };
}

function loadHolder(hot: HotState, accounts: Uint32Array, row: number): void {
  const i = Math.floor(row / kHolders);
  const type = row % kHolders;
  check(hot.loadHolder(0, accounts[i]!, type, holderKeys, row * 4, kMasks[type]!, kT0 - 86_400_000 + i, kT0 + i));
}

const rssAtStart = process.memoryUsage().rss;
const { hot, accounts, ms: accountsMs } = loadAccounts();

started = performance.now();
for (let row = 0; row < kAccounts * kHolders; row++) loadHolder(hot, accounts, row);
const holdersMs = performance.now() - started;

started = performance.now();
for (let k = 0; k < kLinks; k++) {
  const a = linkRows[k * 3]!;
  const type = linkRows[k * 3 + 2]!;
  check(hot.loadLink(accounts[a]!, accounts[linkRows[k * 3 + 1]!]!, type, kMasks[type]!, kT0 + a, kT0 + a + 60_000));
}
const linksMs = performance.now() - started;
const stats = hot.stats;
const rssLoaded = process.memoryUsage().rss;
if (stats.accounts !== kAccounts || stats.holders !== kAccounts * kHolders || stats.links !== kLinks) throw new Error(`loaded ${JSON.stringify(stats)}`);
// The loaded state answers: an account's links signal counts its device and IP neighbours.
const probe = hot.linkSignals(0, accounts[12]!, new EventSignals(), kT0 + kAccounts);
if (probe.fp !== 3 || probe.ip_24h !== 7) throw new Error(`account 12 has ${JSON.stringify(probe)}`);

// The same holders, shuffled, into a second state.
const second = loadAccounts();
started = performance.now();
for (let k = 0; k < shuffled.length; k++) loadHolder(second.hot, second.accounts, shuffled[k]!);
const shuffledMs = performance.now() - started;

const row = (what: string, rows: number, ms: number): Record<string, string> => ({
  rows: what, count: count(rows), 's total': (ms / 1000).toFixed(2), 'µs per row': ((ms * 1000) / rows).toFixed(2),
});
console.table([
  row('account (loadAccount + addProject)', kAccounts, accountsMs),
  row('holder, ascending last seen (loadHolder)', kAccounts * kHolders, holdersMs),
  row('link, once per pair (loadLink)', kLinks, linksMs),
  row('holder, shuffled (loadHolder)', kAccounts * kHolders, shuffledMs),
]);
console.log(`loaded: ${count(stats.accounts)} accounts, ${count(stats.values)} signal values, ${count(stats.holders)} holders, ${count(stats.links)} links; `
  + `RSS ${mib(rssAtStart)} with the rows made, ${mib(rssLoaded)} loaded (+${mib(rssLoaded - rssAtStart)})`);
