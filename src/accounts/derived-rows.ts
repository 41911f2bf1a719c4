// The rows of accounts, account_signals and account_links that follow from scored events
// (docs/pipeline.md, "Derived rows"), gathered on the HTTP thread between two writes in bulk.
// Rows are kept by their table key, so a row changed twice is written once, with its latest
// values. Pure: the owner of the hot state (hot-accounts.ts) adds rows, the flusher
// (derived-flush.ts) takes them for the writer (applyDerivedRows in scoring/event-store.ts).
import type { DerivedRowBatch } from '../scoring/event-store.js';

/** account_id, last_seen_at, events, blocks, reviews, counted_order (-1: no counts, only seqs), seqs to append */
type AccountRow = [string, number, number, number, number, number, number[]];
type SignalRow = [string, string, string, string, string, string, number, number];
type LinkRow = [string, string, string, string, string, string, number, number];
type LinkProjectsRow = [string, string, string, string];

export class DerivedRows {
  #accounts = new Map<string, AccountRow>();
  #signals = new Map<string, SignalRow>();
  #links = new Map<string, LinkRow>();
  #linkProjects = new Map<string, LinkProjectsRow>();
  /** The scored_order of the last event whose rows are here (every earlier one's are too). */
  #order: number;
  /** What the last batch taken said; it stays while rows are held. */
  #stamped: number;
  /** What the batch before it said: the stamp again if the last batch could not be written. */
  #stampedBefore: number;
  /** Accounts being erased: their rows wait, and go with the erasure (drop) or after it failed (release). */
  readonly #held = new Set<string>();

  /** `stampedOrder`: how far the stored rows go (derived_stamp.scored_order). */
  constructor(stampedOrder: number) {
    this.#order = stampedOrder;
    this.#stamped = stampedOrder;
    this.#stampedBefore = stampedOrder;
  }

  /** Rows waiting to be written. */
  get size(): number {
    return this.#accounts.size + this.#signals.size + this.#links.size + this.#linkProjects.size;
  }

  /**
   * Every row added was written and the stamp says so: none waiting or held, and the last batch
   * taken (which carried the latest order) did not fail.
   */
  get caughtUp(): boolean {
    return this.size === 0 && this.#held.size === 0 && this.#stamped === this.#order;
  }

  /** The order of the last batch taken (the stored stamp once it is written). */
  get stampedOrder(): number {
    return this.#stamped;
  }

  /** The rows of every event up to scored_order `order` have been added. */
  advance(order: number): void {
    if (order > this.#order) this.#order = order;
  }

  /**
   * The account's counts, as they are after the event of scored_order `countedOrder`; `seq`, that
   * event's row, goes onto the account's list of seqs (what erasure reads, migration 17).
   */
  account(accountId: string, lastSeenAt: number, events: number, blocks: number, reviews: number, countedOrder: number, seq?: number): void {
    const row = this.#accounts.get(accountId);
    if (row === undefined) this.#accounts.set(accountId, [accountId, lastSeenAt, events, blocks, reviews, countedOrder, seq === undefined ? [] : [seq]]);
    else {
      row.splice(1, 5, lastSeenAt, events, blocks, reviews, countedOrder);
      if (seq !== undefined) row[6].push(seq);
    }
  }

  /**
   * An event of the account was stored at row `seq` but its counts could not be recorded: the seq
   * still goes onto the account's list with its next row (a row of seqs only, if it has no other),
   * so that erasure finds every event of the account.
   */
  eventSeq(accountId: string, seq: number): void {
    const row = this.#accounts.get(accountId);
    if (row === undefined) this.#accounts.set(accountId, [accountId, 0, 0, 0, 0, -1, [seq]]);
    else row[6].push(seq);
  }

  /**
   * The account used the value at `at` (ms), holding it since `firstSeenS` (whole seconds, as
   * memory keeps it: the row's key begins with it, so the row written at the holder's first use is
   * the one a later refresh finds).
   */
  signal(tenantId: string, environment: string, type: string, hash: string, accountId: string, masked: string, firstSeenS: number, at: number): void {
    const key = `${tenantId}\u0000${environment}\u0000${type}\u0000${hash}\u0000${accountId}`;
    const row = this.#signals.get(key);
    if (row === undefined) this.#signals.set(key, [tenantId, environment, type, hash, accountId, masked, firstSeenS, at]);
    else if (at > row[7]) row[7] = at;
  }

  /** One direction of a link; `otherProjects` as the row keeps it (",prj_a,prj_b,"). */
  link(accountId: string, type: string, otherId: string, otherExternalId: string, otherProjects: string, masked: string, at: number): void {
    const key = `${accountId}\u0000${type}\u0000${otherId}`;
    this.#linkProjects.delete(key);
    const row = this.#links.get(key);
    if (row === undefined) {
      this.#links.set(key, [accountId, type, otherId, otherExternalId, otherProjects, masked, at, at]);
      return;
    }
    row[4] = otherProjects;
    row[5] = masked;
    if (at > row[7]) row[7] = at;
  }

  /** The other account of a link was used from another project: the row's other_projects changes. */
  linkProjects(accountId: string, type: string, otherId: string, otherProjects: string): void {
    const key = `${accountId}\u0000${type}\u0000${otherId}`;
    const row = this.#links.get(key);
    if (row !== undefined) row[4] = otherProjects;
    else this.#linkProjects.set(key, [accountId, type, otherId, otherProjects]);
  }

  /**
   * Every row to write, taken out (rows of held accounts stay); null when there is nothing new to
   * write. The batch's order moves to the last event recorded unless rows are held: until they
   * go, those events are not all in.
   */
  take(): DerivedRowBatch | null {
    const order = this.#held.size === 0 ? this.#order : this.#stamped;
    const batch: DerivedRowBatch = {
      order,
      accounts: this.#takeFrom(this.#accounts, (row) => this.#held.has(row[0])),
      signals: this.#takeFrom(this.#signals, (row) => this.#held.has(row[4])),
      links: this.#takeFrom(this.#links, (row) => this.#held.has(row[0]) || this.#held.has(row[2])),
      linkProjects: this.#takeFrom(this.#linkProjects, (row) => this.#held.has(row[0]) || this.#held.has(row[2])),
    };
    // No row to write (none waiting, or only held ones) and the stamp stays: nothing to write.
    if (rowCount(batch) === 0 && order === this.#stamped) return null;
    this.#stampedBefore = this.#stamped;
    this.#stamped = order;
    return batch;
  }

  /** The order the stored rows went to before the last batch taken (the stamp while it is written). */
  get stampedBefore(): number {
    return this.#stampedBefore;
  }

  /**
   * The last batch taken could not be written: it goes back, merged with rows added again since
   * (their values are newer; the earlier first seen is the batch's). Its order is not reached: the
   * next batch says the last order written.
   */
  restore(batch: DerivedRowBatch): void {
    for (const row of batch.accounts) {
      const newer = this.#accounts.get(row[0]);
      if (newer === undefined) this.#accounts.set(row[0], [row[0], row[1], row[2], row[3], row[4], row[5], [...row[6]]]);
      else {
        // Counts are absolute (the newer row's win, if it has any); seqs are appended (both lists go).
        if (newer[5] < 0) newer.splice(1, 5, row[1], row[2], row[3], row[4], row[5]);
        newer[6] = [...row[6], ...newer[6]];
      }
    }
    for (const row of batch.signals) {
      const key = `${row[0]}\u0000${row[1]}\u0000${row[2]}\u0000${row[3]}\u0000${row[4]}`;
      const newer = this.#signals.get(key);
      if (newer === undefined) this.#signals.set(key, [...row]);
      else newer[6] = Math.min(newer[6], row[6]);
    }
    for (const row of batch.links) {
      const key = `${row[0]}\u0000${row[1]}\u0000${row[2]}`;
      const newer = this.#links.get(key);
      if (newer !== undefined) {
        newer[6] = Math.min(newer[6], row[6]);
        continue;
      }
      const restored: LinkRow = [...row];
      // A project change recorded since went to a row of its own (the link was out): it belongs in
      // the link row now, or a later change (made in the link row) would be written before it.
      const change = this.#linkProjects.get(key);
      if (change !== undefined) {
        restored[4] = change[3];
        this.#linkProjects.delete(key);
      }
      this.#links.set(key, restored);
    }
    for (const row of batch.linkProjects) {
      const key = `${row[0]}\u0000${row[1]}\u0000${row[2]}`;
      if (!this.#links.has(key) && !this.#linkProjects.has(key)) this.#linkProjects.set(key, [...row]);
    }
    this.#stamped = this.#stampedBefore;
  }

  /** The account is being erased: its rows, and links to it, wait. */
  hold(accountId: string): void {
    this.#held.add(accountId);
  }

  /** The erasure failed: the account's rows go with the next batch. */
  release(accountId: string): void {
    this.#held.delete(accountId);
  }

  /** The account was erased: its rows, and rows of links to it, are dropped. */
  drop(accountId: string): void {
    this.#held.delete(accountId);
    this.#accounts.delete(accountId);
    for (const [key, row] of this.#signals) if (row[4] === accountId) this.#signals.delete(key);
    for (const [key, row] of this.#links) if (row[0] === accountId || row[2] === accountId) this.#links.delete(key);
    for (const [key, row] of this.#linkProjects) if (row[0] === accountId || row[2] === accountId) this.#linkProjects.delete(key);
  }

  #takeFrom<Row>(rows: Map<string, Row>, held: (row: Row) => boolean): Row[] {
    if (this.#held.size === 0) {
      // Cleared at once: a delete per key cost a flush of 30,000 rows several milliseconds.
      const taken = [...rows.values()];
      rows.clear();
      return taken;
    }
    const taken: Row[] = [];
    for (const [key, row] of rows) {
      if (held(row)) continue;
      taken.push(row);
      rows.delete(key);
    }
    return taken;
  }
}

export function rowCount(batch: DerivedRowBatch): number {
  return batch.accounts.length + batch.signals.length + batch.links.length + batch.linkProjects.length;
}

/** Rows sorted in one go while serving: ~1 ms of the HTTP thread (a flush's 30,000 rows sorted at once took 15–27 ms). */
export const kSortChunkRows = 2048;

/**
 * A batch cut into parts of at most `size` rows, for writing one part per transaction, in key
 * order: accounts and account_links are keyed by account first, so a part covers a range of
 * accounts in both, and a page is written by as few parts as its rows need (cut in arrival order,
 * each part spanned the whole key space and most pages were written once per part; bench/README.md,
 * step 22). Within an account: its row, its links, then the project changes of its links (after
 * the link they change). account_signals is keyed by first seen (migration 26): its rows, nearly
 * all new and so at the table's end, come first, in their own key order. Only the last part
 * carries the batch's order; the others say `before` (the stamp stays until every row of the
 * batch is written).
 *
 * The work comes in steps short enough for the HTTP thread to serve between them (step 54): each
 * list is sorted a chunk at a time (sortStep), and the parts are merged from the sorted chunks as
 * they are asked for (nextPart).
 */
export class BatchParts {
  readonly #size: number;
  readonly #order: number;
  readonly #before: number;
  readonly #accounts: SortedRuns<AccountRow>;
  readonly #signals: SortedRuns<SignalRow>;
  readonly #links: SortedRuns<LinkRow>;
  readonly #linkProjects: SortedRuns<LinkProjectsRow>;
  /** Whether a part was given: a batch with no rows still moves the stamp, with one empty part. */
  #partGiven = false;
  /** The earliest last_seen of the batch's link rows (ms; the largest safe integer when it has none). */
  readonly #linksSince: number;

  constructor(batch: DerivedRowBatch, size: number, before: number) {
    this.#size = size;
    this.#order = batch.order;
    this.#before = before;
    this.#accounts = new SortedRuns(batch.accounts as AccountRow[], (a, b) => compareText(a[0], b[0]));
    this.#signals = new SortedRuns(batch.signals as SignalRow[], bySignalKey);
    this.#links = new SortedRuns(batch.links as LinkRow[], byLinkKey);
    this.#linkProjects = new SortedRuns(batch.linkProjects as LinkProjectsRow[], byLinkKey);
    let since = Number.MAX_SAFE_INTEGER;
    for (const row of batch.links) if (row[7] < since) since = row[7];
    this.#linksSince = since;
  }

  /** Sorts the next chunk of rows; false once every chunk is sorted (then parts can be taken). */
  sortStep(): boolean {
    return this.#accounts.sortStep() || this.#signals.sortStep() || this.#links.sortStep() || this.#linkProjects.sortStep();
  }

  /** The next part, or null when every row has been given (sort every chunk first). */
  nextPart(): DerivedRowBatch | null {
    const accounts: AccountRow[] = [];
    const signals: SignalRow[] = [];
    const links: LinkRow[] = [];
    const linkProjects: LinkProjectsRow[] = [];
    let rows = 0;
    rows += moveWhile(this.#signals, () => true, signals, this.#size);
    while (rows < this.#size) {
      // The lowest account among the heads of the three lists keyed by account, then its rows, as many as fit.
      let account: string | null = this.#accounts.peek()?.[0] ?? null;
      const link = this.#links.peek()?.[0];
      if (link !== undefined && (account === null || link < account)) account = link;
      const change = this.#linkProjects.peek()?.[0];
      if (change !== undefined && (account === null || change < account)) account = change;
      if (account === null) break;
      rows += moveWhile(this.#accounts, (row) => row[0] === account, accounts, this.#size - rows);
      rows += moveWhile(this.#links, (row) => row[0] === account, links, this.#size - rows);
      rows += moveWhile(this.#linkProjects, (row) => row[0] === account, linkProjects, this.#size - rows);
    }
    if (rows === 0) {
      if (this.#partGiven) return null;
      this.#partGiven = true;
      return { order: this.#order, accounts, signals, links, linkProjects };
    }
    this.#partGiven = true;
    const last = this.#accounts.peek() === undefined && this.#signals.peek() === undefined && this.#links.peek() === undefined && this.#linkProjects.peek() === undefined;
    return last ? { order: this.#order, accounts, signals, links, linkProjects } : { order: this.#before, linksOpenSince: this.#linksSince, accounts, signals, links, linkProjects };
  }

  /** Every part not yet given, in one go: the whole batch's parts at first; after a failed part, the rows to go back with it. */
  rest(): DerivedRowBatch[] {
    while (this.sortStep());
    const parts: DerivedRowBatch[] = [];
    for (let part = this.nextPart(); part !== null; part = this.nextPart()) parts.push(part);
    return parts;
  }
}

/** Moves up to `room` rows of `runs` while `belongs` says so into `into`; returns how many. */
function moveWhile<Row>(runs: SortedRuns<Row>, belongs: (row: Row) => boolean, into: Row[], room: number): number {
  let taken = 0;
  for (let row = runs.peek(); taken < room && row !== undefined && belongs(row); row = runs.peek()) {
    into.push(runs.next());
    taken++;
  }
  return taken;
}

/**
 * Rows sorted a chunk at a time, then read in order by merging the chunks (a heap of chunk heads:
 * O(log chunks) per row). Pure.
 */
class SortedRuns<Row> {
  readonly #rows: Row[];
  readonly #compare: (a: Row, b: Row) => number;
  /** Chunks [start, end) of #rows; sorted up to #sorted. */
  readonly #ends: number[] = [];
  #sorted = 0;
  /** Per chunk in the heap: its next row's index; the heap orders chunks by that row. */
  readonly #cursor: number[] = [];
  readonly #heap: number[] = [];
  #merging = false;

  constructor(rows: Row[], compare: (a: Row, b: Row) => number) {
    // A copy: the batch keeps its rows in the order taken (a failed part goes back as it was).
    this.#rows = rows.slice();
    this.#compare = compare;
    for (let end = kSortChunkRows; end < rows.length + kSortChunkRows; end += kSortChunkRows) this.#ends.push(Math.min(end, rows.length));
  }

  sortStep(): boolean {
    if (this.#sorted === this.#ends.length) return false;
    const start = this.#sorted === 0 ? 0 : this.#ends[this.#sorted - 1]!;
    const end = this.#ends[this.#sorted]!;
    const sorted = this.#rows.slice(start, end).sort(this.#compare);
    for (let i = 0; i < sorted.length; i++) this.#rows[start + i] = sorted[i]!;
    this.#sorted++;
    return true;
  }

  peek(): Row | undefined {
    if (!this.#merging) this.#startMerge();
    return this.#heap.length === 0 ? undefined : this.#rows[this.#cursor[this.#heap[0]!]!];
  }

  next(): Row {
    const row = this.peek()!;
    const chunk = this.#heap[0]!;
    this.#cursor[chunk]!++;
    if (this.#cursor[chunk] === this.#ends[chunk]) {
      const lastChunk = this.#heap.pop()!;
      if (this.#heap.length > 0) {
        this.#heap[0] = lastChunk;
        this.#siftDown(0);
      }
    } else {
      this.#siftDown(0);
    }
    return row;
  }

  #startMerge(): void {
    if (this.#sorted < this.#ends.length) throw new Error('rows read before every chunk was sorted');
    this.#merging = true;
    for (let chunk = 0; chunk < this.#ends.length; chunk++) {
      const start = chunk === 0 ? 0 : this.#ends[chunk - 1]!;
      this.#cursor.push(start);
      if (start < this.#ends[chunk]!) this.#heap.push(chunk);
    }
    for (let i = (this.#heap.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  /** Whether chunk a's head sorts before chunk b's (ties: the earlier chunk, so equal keys keep their order). */
  #before(a: number, b: number): boolean {
    const order = this.#compare(this.#rows[this.#cursor[a]!]!, this.#rows[this.#cursor[b]!]!);
    return order < 0 || (order === 0 && a < b);
  }

  #siftDown(at: number): void {
    const heap = this.#heap;
    for (;;) {
      let lowest = at;
      const left = 2 * at + 1;
      if (left < heap.length && this.#before(heap[left]!, heap[lowest]!)) lowest = left;
      if (left + 1 < heap.length && this.#before(heap[left + 1]!, heap[lowest]!)) lowest = left + 1;
      if (lowest === at) return;
      [heap[at], heap[lowest]] = [heap[lowest]!, heap[at]!];
      at = lowest;
    }
  }
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
// The key of account_signals: first seen (whole seconds), account, type, hash (migration 26).
const bySignalKey = (a: DerivedRowBatch['signals'][number], b: DerivedRowBatch['signals'][number]): number =>
  a[6] - b[6] || compareText(a[4], b[4]) || compareText(a[2], b[2]) || compareText(a[3], b[3]);
// The key of account_links: account, type, other account.
const byLinkKey = (a: readonly [string, string, string, ...unknown[]], b: readonly [string, string, string, ...unknown[]]): number =>
  compareText(a[0], b[0]) || compareText(a[1], b[1]) || compareText(a[2], b[2]);

/** Parts of a batch (BatchParts) joined again, for the rows of those not written to go back. */
export function mergeBatches(parts: readonly DerivedRowBatch[]): DerivedRowBatch {
  return {
    order: parts[parts.length - 1]!.order,
    accounts: parts.flatMap((part) => part.accounts),
    signals: parts.flatMap((part) => part.signals),
    links: parts.flatMap((part) => part.links),
    linkProjects: parts.flatMap((part) => part.linkProjects),
  };
}
