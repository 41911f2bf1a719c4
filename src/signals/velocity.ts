// Velocity windows (DESIGN §3, the `velocity` signal): how many earlier events, and what total
// amount, a card token, IP, account, email or device had in the last hour and the last 24 hours.
//
// Kept in memory on the HTTP thread: a read is a few map lookups instead of an index scan per
// event. Each key holds two rings of buckets, so its memory is fixed however busy it is:
//
//   fine:   12 buckets of 5 minutes  → the 1h window slides in 5-minute steps (55–60 min)
//   coarse: 24 buckets of 1 hour     → the 24h window slides in 1-hour steps (23–24 h)
//
// Keys idle for 24 hours are swept. The store is the source of truth: after a restart the windows
// are rebuilt from the last 24 hours of stored events (see scoring/velocity-rebuild.ts). Pure: time
// is always passed in.

export interface VelocitySignals {
  card_1h?: number;
  card_24h?: number;
  ip_1h?: number;
  ip_24h?: number;
  account_1h?: number;
  account_24h?: number;
  email_1h?: number;
  email_24h?: number;
  fp_1h?: number;
  fp_24h?: number;
  account_amount_24h?: number;
  card_amount_24h?: number;
}

export interface VelocityKeys {
  readonly cardToken: string | null;
  readonly ip: string | null;
  readonly accountId: string | null;
  readonly email: string | null;
  readonly fp: string | null;
}

const kFineMs = 5 * 60_000;
const kFineCount = 12;
const kCoarseMs = 60 * 60_000;
const kCoarseCount = 24;
const kDayMs = 24 * 60 * 60_000;

// Layout of a window's numbers: fine counts, coarse counts, then (for keys with amounts) the
// amount sums in the same two rings.
const kFineCounts = 0;
const kCoarseCounts = kFineCount;
const kFineAmounts = kFineCount + kCoarseCount;
const kCoarseAmounts = kFineAmounts + kFineCount;

class Window {
  readonly slots: Float64Array;
  /** Index (time / bucket length) of the newest fine and coarse bucket. */
  fineHead = 0;
  coarseHead = 0;
  lastAt = 0;

  constructor(withAmounts: boolean) {
    this.slots = new Float64Array(withAmounts ? 2 * (kFineCount + kCoarseCount) : kFineCount + kCoarseCount);
  }

  /** Moves the rings forward to `at`, clearing buckets that fell out of the windows. */
  advance(at: number): void {
    const fine = Math.floor(at / kFineMs);
    const coarse = Math.floor(at / kCoarseMs);
    const amounts = this.slots.length > kFineAmounts;
    for (let index = Math.max(this.fineHead + 1, fine - kFineCount + 1); index <= fine; index++) {
      this.slots[kFineCounts + (index % kFineCount)] = 0;
      if (amounts) this.slots[kFineAmounts + (index % kFineCount)] = 0;
    }
    for (let index = Math.max(this.coarseHead + 1, coarse - kCoarseCount + 1); index <= coarse; index++) {
      this.slots[kCoarseCounts + (index % kCoarseCount)] = 0;
      if (amounts) this.slots[kCoarseAmounts + (index % kCoarseCount)] = 0;
    }
    if (fine > this.fineHead) this.fineHead = fine;
    if (coarse > this.coarseHead) this.coarseHead = coarse;
  }

  record(at: number, amount: number): void {
    this.advance(at);
    const fine = Math.floor(at / kFineMs);
    const coarse = Math.floor(at / kCoarseMs);
    const amounts = this.slots.length > kFineAmounts;
    // An event older than a ring (a late async event, a rebuild) counts only where it still fits.
    if (fine > this.fineHead - kFineCount) {
      this.slots[kFineCounts + (fine % kFineCount)]! += 1;
      if (amounts) this.slots[kFineAmounts + (fine % kFineCount)]! += amount;
    }
    if (coarse > this.coarseHead - kCoarseCount) {
      this.slots[kCoarseCounts + (coarse % kCoarseCount)]! += 1;
      if (amounts) this.slots[kCoarseAmounts + (coarse % kCoarseCount)]! += amount;
    }
    if (at > this.lastAt) this.lastAt = at;
  }

  sum(offset: number, count: number): number {
    let total = 0;
    for (let i = 0; i < count; i++) total += this.slots[offset + i]!;
    return total;
  }
}

type Kind = 'card' | 'ip' | 'account' | 'email' | 'fp';

export class VelocityWindows {
  readonly #windows = new Map<string, Window>();

  get size(): number {
    return this.#windows.size;
  }

  /** The velocity of the event's keys as of `at`: earlier recorded events only. */
  read(projectId: string, keys: VelocityKeys, at: number): VelocitySignals {
    const signals: VelocitySignals = {};
    this.#read(signals, projectId, 'card', keys.cardToken, at);
    this.#read(signals, projectId, 'ip', keys.ip, at);
    this.#read(signals, projectId, 'account', keys.accountId, at);
    this.#read(signals, projectId, 'email', keys.email, at);
    this.#read(signals, projectId, 'fp', keys.fp, at);
    return signals;
  }

  /** Counts a stored event (after its commit, or when rebuilding from the store). */
  record(projectId: string, keys: VelocityKeys, amountCents: number, at: number): void {
    this.#record(projectId, 'card', keys.cardToken, amountCents, at);
    this.#record(projectId, 'ip', keys.ip, amountCents, at);
    this.#record(projectId, 'account', keys.accountId, amountCents, at);
    this.#record(projectId, 'email', keys.email, amountCents, at);
    this.#record(projectId, 'fp', keys.fp, amountCents, at);
  }

  #read(signals: VelocitySignals, projectId: string, kind: Kind, value: string | null, at: number): void {
    if (value === null) return;
    const window = this.#windows.get(windowKey(projectId, kind, value));
    let hour = 0;
    let day = 0;
    let amount = 0;
    if (window !== undefined) {
      window.advance(at);
      hour = window.sum(kFineCounts, kFineCount);
      day = window.sum(kCoarseCounts, kCoarseCount);
      if (kind === 'card' || kind === 'account') amount = window.sum(kCoarseAmounts, kCoarseCount);
    }
    switch (kind) {
      case 'card':
        signals.card_1h = hour;
        signals.card_24h = day;
        signals.card_amount_24h = amount;
        break;
      case 'ip':
        signals.ip_1h = hour;
        signals.ip_24h = day;
        break;
      case 'account':
        signals.account_1h = hour;
        signals.account_24h = day;
        signals.account_amount_24h = amount;
        break;
      case 'email':
        signals.email_1h = hour;
        signals.email_24h = day;
        break;
      case 'fp':
        signals.fp_1h = hour;
        signals.fp_24h = day;
        break;
    }
  }

  #record(projectId: string, kind: Kind, value: string | null, amount: number, at: number): void {
    if (value === null) return;
    const key = windowKey(projectId, kind, value);
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = new Window(kind === 'card' || kind === 'account');
      this.#windows.set(key, window);
    }
    window.record(at, amount);
  }

  /** Drops keys with no event in the last 24 hours; returns how many. */
  sweep(now: number): number {
    let dropped = 0;
    for (const [key, window] of this.#windows) {
      if (window.lastAt < now - kDayMs) {
        this.#windows.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** Forgets every key of an erased account's identifiers. */
  forget(projectId: string, keys: VelocityKeys): void {
    const kinds: Array<[Kind, string | null]> = [['card', keys.cardToken], ['ip', keys.ip], ['account', keys.accountId], ['email', keys.email], ['fp', keys.fp]];
    for (const [kind, value] of kinds) if (value !== null) this.#windows.delete(windowKey(projectId, kind, value));
  }
}

function windowKey(projectId: string, kind: Kind, value: string): string {
  return `${projectId}\u0001${kind}\u0001${value}`;
}
