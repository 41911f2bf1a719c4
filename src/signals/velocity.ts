// Velocity windows (DESIGN §3, the `velocity` signal): how many earlier events, and what total
// amount, a card token, IP, account, email or device had in the last hour and the last 24 hours.
//
// Kept in memory on the HTTP thread: a read is a keyed-hash lookup and a few array reads instead of
// an index scan per event. Each key holds two rings of buckets, so its memory is fixed however busy
// it is:
//
//   fine:   12 buckets of 5 minutes  → the 1h window slides in 5-minute steps (55–60 min)
//   coarse: 24 buckets of 1 hour     → the 24h window slides in 1-hour steps (23–24 h)
//
// The rings of all keys live in a few large typed arrays (an arena of slots, freed slots reused),
// not in one object per key: about 300 bytes per key instead of ~1 KB, which matters with hundreds
// of thousands of IPs a day. Card and account keys also sum amounts, over the day only (the
// signals have no hourly amount): a ring of 24 hourly sums. The arrays are columns that double in
// place (state/slots.ts): copies of them stalled the HTTP thread for 40–220 ms at 260,000–520,000
// keys. Keys idle for 24 hours are swept, a part at a time (sweepNext). The store is the source of
// truth: after a restart the windows are rebuilt from the last 24 hours of stored events (see
// scoring/velocity-rebuild.ts). Pure: time is always passed in.
import { KeyDomain, type KeyHasher } from '../state/keys.js';
import { kMaxSlot, SlotIndex, type SlotIndexParts } from '../state/slot-index.js';
import { column, columnBytes, grown, sumBytes, type Bytes } from '../state/slots.js';

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
/** Numbers in one ring pair: fine buckets, then coarse buckets. */
const kRingWidth = kFineCount + kCoarseCount;
/** Numbers in one amount slot: the coarse buckets only. */
const kAmountWidth = kCoarseCount;
const kDayMs = 24 * 60 * 60_000;
const kInitialSlots = 1024;
/** The slots a column reserves address space for (state/slots.ts caps a reservation at 4 GiB). */
const kMaxSlots = kMaxSlot + 1;

type Kind = 'card' | 'ip' | 'account' | 'email' | 'fp';

interface ArenaParts {
  readonly counts: Uint32Array;
  readonly heads: Uint32Array;
  readonly lastAt: Float64Array;
  readonly amountSlot: Uint32Array;
  readonly amounts: Float64Array;
  readonly slots: number;
  readonly amountSlots: number;
  readonly free: readonly number[];
  readonly freeAmounts: readonly number[];
}

/** VelocityWindows as plain data, to move them from the thread that rebuilt them (scoring/start-loads.ts). */
export interface VelocityParts {
  readonly index: SlotIndexParts;
  readonly projects: ReadonlyArray<readonly [string, number]>;
  readonly arena: ArenaParts;
}

/**
 * Slots of ring pairs in typed arrays. A slot has event counts (Uint32) and, for keys that sum
 * amounts, an amount slot (Float64) in a second arena: the coarse ring's shape, its heads shared.
 */
class Arena {
  counts: Uint32Array = column(Uint32Array, kInitialSlots * kRingWidth, kMaxSlots * kRingWidth);
  /** Per slot: index (time / bucket length) of the newest fine and coarse bucket. */
  heads: Uint32Array = column(Uint32Array, kInitialSlots * 2, kMaxSlots * 2);
  lastAt: Float64Array = column(Float64Array, kInitialSlots, kMaxSlots);
  /** Per slot: its amount slot + 1, or 0 (no amounts): zero, as a grown column is, means none. */
  amountSlot: Uint32Array = column(Uint32Array, kInitialSlots, kMaxSlots);
  amounts: Float64Array = column(Float64Array, kInitialSlots * kAmountWidth, kMaxSlots * kAmountWidth);
  #slots = 0;
  #amountSlots = 0;
  #free: number[] = [];
  #freeAmounts: number[] = [];

  /** Slots handed out (the key column's high mark). */
  get slots(): number {
    return this.#slots;
  }

  /** The bytes of its arrays: held (room to grow included), and used by the slots handed out. */
  get bytes(): Bytes {
    return sumBytes(
      columnBytes(this.#slots * kRingWidth, this.counts), columnBytes(this.#slots * 2, this.heads), columnBytes(this.#slots, this.lastAt, this.amountSlot),
      columnBytes(this.#amountSlots * kAmountWidth, this.amounts),
    );
  }

  parts(): ArenaParts {
    return {
      counts: this.counts, heads: this.heads, lastAt: this.lastAt, amountSlot: this.amountSlot, amounts: this.amounts,
      slots: this.#slots, amountSlots: this.#amountSlots, free: this.#free, freeAmounts: this.#freeAmounts,
    };
  }

  static fromParts(parts: ArenaParts): Arena {
    const arena = new Arena();
    arena.counts = parts.counts;
    arena.heads = parts.heads;
    arena.lastAt = parts.lastAt;
    arena.amountSlot = parts.amountSlot;
    arena.amounts = parts.amounts;
    arena.#slots = parts.slots;
    arena.#amountSlots = parts.amountSlots;
    arena.#free = [...parts.free];
    arena.#freeAmounts = [...parts.freeAmounts];
    return arena;
  }

  allocate(withAmounts: boolean): number {
    const slot = this.#free.pop() ?? this.#slots++;
    if (slot >= this.lastAt.length) this.#grow();
    this.counts.fill(0, slot * kRingWidth, (slot + 1) * kRingWidth);
    this.heads[slot * 2] = 0;
    this.heads[slot * 2 + 1] = 0;
    this.lastAt[slot] = 0;
    if (withAmounts) {
      const amountSlot = this.#freeAmounts.pop() ?? this.#amountSlots++;
      if ((amountSlot + 1) * kAmountWidth > this.amounts.length) this.amounts = grown(this.amounts, this.amounts.length * 2);
      this.amounts.fill(0, amountSlot * kAmountWidth, (amountSlot + 1) * kAmountWidth);
      this.amountSlot[slot] = amountSlot + 1;
    } else {
      this.amountSlot[slot] = 0;
    }
    return slot;
  }

  release(slot: number): void {
    const amountSlot = this.amountSlot[slot]! - 1;
    if (amountSlot >= 0) this.#freeAmounts.push(amountSlot);
    this.#free.push(slot);
  }

  #grow(): void {
    this.counts = grown(this.counts, this.counts.length * 2);
    this.heads = grown(this.heads, this.heads.length * 2);
    this.lastAt = grown(this.lastAt, this.lastAt.length * 2);
    this.amountSlot = grown(this.amountSlot, this.amountSlot.length * 2);
  }

  /** Moves the slot's rings forward to `at`, clearing buckets that fell out of the windows. */
  advance(slot: number, at: number): void {
    const fine = Math.floor(at / kFineMs);
    const coarse = Math.floor(at / kCoarseMs);
    const fineHead = this.heads[slot * 2]!;
    const coarseHead = this.heads[slot * 2 + 1]!;
    const base = slot * kRingWidth;
    const amountSlot = this.amountSlot[slot]! - 1;
    const amountBase = amountSlot * kAmountWidth;
    for (let index = Math.max(fineHead + 1, fine - kFineCount + 1); index <= fine; index++) {
      this.counts[base + (index % kFineCount)] = 0;
    }
    for (let index = Math.max(coarseHead + 1, coarse - kCoarseCount + 1); index <= coarse; index++) {
      this.counts[base + kFineCount + (index % kCoarseCount)] = 0;
      if (amountSlot >= 0) this.amounts[amountBase + (index % kCoarseCount)] = 0;
    }
    if (fine > fineHead) this.heads[slot * 2] = fine;
    if (coarse > coarseHead) this.heads[slot * 2 + 1] = coarse;
  }

  record(slot: number, at: number, amount: number): void {
    this.advance(slot, at);
    const fine = Math.floor(at / kFineMs);
    const coarse = Math.floor(at / kCoarseMs);
    const base = slot * kRingWidth;
    const amountSlot = this.amountSlot[slot]! - 1;
    // An event older than a ring (a late async event, a rebuild) counts only where it still fits.
    if (fine > this.heads[slot * 2]! - kFineCount) this.counts[base + (fine % kFineCount)]! += 1;
    if (coarse > this.heads[slot * 2 + 1]! - kCoarseCount) {
      this.counts[base + kFineCount + (coarse % kCoarseCount)]! += 1;
      if (amountSlot >= 0) this.amounts[amountSlot * kAmountWidth + (coarse % kCoarseCount)]! += amount;
    }
    if (at > this.lastAt[slot]!) this.lastAt[slot] = at;
  }

  /** Takes back what record(slot, at, amount) added, where it still is (never below zero). */
  unrecord(slot: number, at: number, amount: number): void {
    this.advance(slot, at);
    const fine = Math.floor(at / kFineMs);
    const coarse = Math.floor(at / kCoarseMs);
    const base = slot * kRingWidth;
    const amountSlot = this.amountSlot[slot]! - 1;
    if (fine > this.heads[slot * 2]! - kFineCount && this.counts[base + (fine % kFineCount)]! > 0) this.counts[base + (fine % kFineCount)]! -= 1;
    if (coarse > this.heads[slot * 2 + 1]! - kCoarseCount) {
      const at24 = base + kFineCount + (coarse % kCoarseCount);
      if (this.counts[at24]! > 0) this.counts[at24]! -= 1;
      if (amountSlot >= 0) {
        const sum = amountSlot * kAmountWidth + (coarse % kCoarseCount);
        this.amounts[sum] = Math.max(0, this.amounts[sum]! - amount);
      }
    }
  }

  /** [events in the hour, events in the day, amount in the day] */
  totals(slot: number): [number, number, number] {
    const base = slot * kRingWidth;
    let hour = 0;
    let day = 0;
    for (let i = 0; i < kFineCount; i++) hour += this.counts[base + i]!;
    for (let i = kFineCount; i < kRingWidth; i++) day += this.counts[base + i]!;
    let amount = 0;
    const amountSlot = this.amountSlot[slot]! - 1;
    if (amountSlot >= 0) {
      const amountBase = amountSlot * kAmountWidth;
      for (let i = 0; i < kAmountWidth; i++) amount += this.amounts[amountBase + i]!;
    }
    return [hour, day, amount];
  }
}

/** A kind's place in VelocityHashes. */
const kKindIndex: Readonly<Record<Kind, number>> = { card: 0, ip: 1, account: 2, email: 3, fp: 4 };

/**
 * The keys of one event as read() hashed them, for record() to use again: the hashing is most of a
 * lookup, and an event is read before it is scored and recorded after its commit. Hand it to
 * record() only with the same keys that read() was given.
 */
export class VelocityHashes {
  /** The project number the words were made under (0: none yet). */
  project = 0;
  /** A bit per kind (kKindIndex) whose 4 words are set. */
  present = 0;
  /**
   * 4 words per kind. A plain array: one is made per event, and a typed array of 80 bytes is
   * allocated outside V8's heap (past its 64-byte limit for on-heap ones): ~260 ns against ~40 here.
   */
  readonly words: number[] = new Array<number>(20).fill(0);
}

/** The keyed-hash domain of each kind of key (src/state/keys.ts): a card and an email never share one. */
const kDomain: Readonly<Record<Kind, KeyDomain>> = {
  card: KeyDomain.VelocityCard, ip: KeyDomain.VelocityIp, account: KeyDomain.VelocityAccount, email: KeyDomain.VelocityEmail, fp: KeyDomain.VelocityFp,
};
/** A key is 128 bits of keyed hash: 4 words. */
const kKeyWords = 4;

export class VelocityWindows {
  /**
   * Arena slot by key: the keyed 128-bit hash of (kind, project, value), held in the index's key
   * column (16 bytes a key) — no JS string or Map entry per key, and no value kept in clear.
   */
  #index = new SlotIndex(kKeyWords, kInitialSlots);
  readonly #hasher: KeyHasher;
  /** Project ids as small numbers (the keys' scope). */
  readonly #projects = new Map<string, number>();
  #arena = new Arena();
  readonly #probe = new Uint32Array(kKeyWords);
  /** The segment sweepNext() sweeps next. */
  #sweepCursor = 0;

  constructor(hasher: KeyHasher) {
    this.#hasher = hasher;
  }

  get size(): number {
    return this.#index.size;
  }

  /** Bytes of the key index and the arena of counts (for /metrics). */
  get bytes(): Bytes {
    return sumBytes(this.#index.bytes(this.#arena.slots), this.#arena.bytes);
  }

  /** Its state as plain data, to hand to another thread; these windows are not used after. */
  parts(): VelocityParts {
    return { index: this.#index.parts(), projects: [...this.#projects], arena: this.#arena.parts() };
  }

  /** The windows whose parts() these are; `hasher` under the same install secret. */
  static fromParts(hasher: KeyHasher, parts: VelocityParts): VelocityWindows {
    const windows = new VelocityWindows(hasher);
    windows.#index = SlotIndex.fromParts(parts.index);
    for (const [projectId, project] of parts.projects) windows.#projects.set(projectId, project);
    windows.#arena = Arena.fromParts(parts.arena);
    return windows;
  }

  /** The velocity of the event's keys as of `at`: earlier recorded events only; `hashes` keeps the keys' hashes for record(). */
  read(projectId: string, keys: VelocityKeys, at: number, hashes: VelocityHashes | null = null): VelocitySignals {
    const signals: VelocitySignals = {};
    const project = this.#projects.get(projectId) ?? 0;
    this.#read(signals, project, 'card', keys.cardToken, at, hashes);
    this.#read(signals, project, 'ip', keys.ip, at, hashes);
    this.#read(signals, project, 'account', keys.accountId, at, hashes);
    this.#read(signals, project, 'email', keys.email, at, hashes);
    this.#read(signals, project, 'fp', keys.fp, at, hashes);
    return signals;
  }

  /**
   * Counts an event: one being scored (withdrawn if it is not stored after all), or a stored one
   * when rebuilding from the store. `hashes`: what read() hashed of the same keys.
   */
  record(projectId: string, keys: VelocityKeys, amountCents: number, at: number, hashes: VelocityHashes | null = null): void {
    let project = this.#projects.get(projectId);
    if (project === undefined) {
      project = this.#projects.size + 1;
      this.#projects.set(projectId, project);
    }
    this.#record(project, 'card', keys.cardToken, amountCents, at, hashes);
    this.#record(project, 'ip', keys.ip, amountCents, at, hashes);
    this.#record(project, 'account', keys.accountId, amountCents, at, hashes);
    this.#record(project, 'email', keys.email, amountCents, at, hashes);
    this.#record(project, 'fp', keys.fp, amountCents, at, hashes);
  }

  /**
   * The key's slot, or -1; project 0 is a project with nothing recorded. The key's words go to
   * #probe: from `hashes` when they hold them for this project, else hashed (and kept there).
   */
  #find(project: number, kind: Kind, value: string, hashes: VelocityHashes | null = null): number {
    if (project === 0) return -1;
    const probe = this.#probe;
    const bit = 1 << kKindIndex[kind];
    const at = kKindIndex[kind] * kKeyWords;
    if (hashes !== null && hashes.project === project && (hashes.present & bit) !== 0) {
      const words = hashes.words;
      probe[0] = words[at]!;
      probe[1] = words[at + 1]!;
      probe[2] = words[at + 2]!;
      probe[3] = words[at + 3]!;
    } else {
      this.#hasher.key128(kDomain[kind], project, value, probe, 0);
      if (hashes !== null) {
        if (hashes.project !== project) {
          hashes.project = project;
          hashes.present = 0;
        }
        const words = hashes.words;
        words[at] = probe[0]!;
        words[at + 1] = probe[1]!;
        words[at + 2] = probe[2]!;
        words[at + 3] = probe[3]!;
        hashes.present |= bit;
      }
    }
    return this.#index.find(probe, 0);
  }

  #read(signals: VelocitySignals, project: number, kind: Kind, value: string | null, at: number, hashes: VelocityHashes | null): void {
    if (value === null) return;
    const slot = this.#find(project, kind, value, hashes);
    let hour = 0;
    let day = 0;
    let amount = 0;
    if (slot >= 0) {
      this.#arena.advance(slot, at);
      [hour, day, amount] = this.#arena.totals(slot);
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

  #record(project: number, kind: Kind, value: string | null, amount: number, at: number, hashes: VelocityHashes | null): void {
    if (value === null) return;
    let slot = this.#find(project, kind, value, hashes);
    if (slot < 0) {
      slot = this.#arena.allocate(kind === 'card' || kind === 'account');
      this.#index.reserve(slot + 1);
      this.#index.keys.set(this.#probe, slot * kKeyWords);
      this.#index.insert(slot);
    }
    this.#arena.record(slot, at, amount);
  }

  /** Drops keys with no event in the last 24 hours; returns how many. */
  sweep(now: number): number {
    let dropped = 0;
    for (let segment = 0; segment < SlotIndex.segments; segment++) dropped += this.#sweepSegment(now, segment);
    return dropped;
  }

  /** The calls of sweepNext() that make one sweep(). */
  static readonly sweepSteps = SlotIndex.segments;

  /**
   * sweep() of the next part of the keys in turn (a segment of the index: ~1/256 of them); returns
   * how many it dropped. The server calls this often rather than sweep() now and then: a day's keys
   * going idle together (a burst of new IPs a day earlier) would stop the HTTP thread in one sweep
   * for 0.3–0.6 s with 675,000 keys dropped (bench/README.md, step 45).
   */
  sweepNext(now: number): number {
    const segment = this.#sweepCursor;
    this.#sweepCursor = (segment + 1) % SlotIndex.segments;
    return this.#sweepSegment(now, segment);
  }

  #sweepSegment(now: number, segment: number): number {
    const idle: number[] = [];
    this.#index.forEachIn(segment, (slot) => {
      if (this.#arena.lastAt[slot]! < now - kDayMs) idle.push(slot);
    });
    for (const slot of idle) this.#drop(slot);
    return idle.length;
  }

  /**
   * Takes an erased account's scored event (recorded at `at` with `amountCents`) out of the
   * windows. Its account key goes whole. Its card, IP, email and device keys lose this event's
   * count and amount, and go once nothing is left in them: other accounts' events on a shared card,
   * IP or device still count — as they do after a restart, which rebuilds the windows from the
   * stored events, the erased ones scrubbed.
   */
  forgetEvent(projectId: string, keys: VelocityKeys, amountCents: number, at: number): void {
    const project = this.#projects.get(projectId) ?? 0;
    if (keys.accountId !== null) {
      const slot = this.#find(project, 'account', keys.accountId);
      if (slot >= 0) this.#drop(slot);
    }
    const shared: Array<[Kind, string | null]> = [['card', keys.cardToken], ['ip', keys.ip], ['email', keys.email], ['fp', keys.fp]];
    for (const [kind, value] of shared) {
      if (value === null) continue;
      const slot = this.#find(project, kind, value);
      if (slot < 0) continue;
      this.#arena.unrecord(slot, at, amountCents);
      const [, day, amount] = this.#arena.totals(slot);
      if (day === 0 && amount === 0) this.#drop(slot);
    }
  }

  /**
   * Takes back an event record() counted that was not stored after all (its rules or its write
   * failed, or another request stored it first): its count and amount come out of each key's
   * windows, and a key left with nothing in the last 24 hours goes, as if never recorded.
   */
  withdraw(projectId: string, keys: VelocityKeys, amountCents: number, at: number, hashes: VelocityHashes | null = null): void {
    const project = this.#projects.get(projectId) ?? 0;
    const all: Array<[Kind, string | null]> = [['card', keys.cardToken], ['ip', keys.ip], ['account', keys.accountId], ['email', keys.email], ['fp', keys.fp]];
    for (const [kind, value] of all) {
      if (value === null) continue;
      const slot = this.#find(project, kind, value, hashes);
      if (slot < 0) continue;
      this.#arena.unrecord(slot, at, amountCents);
      const [, day, amount] = this.#arena.totals(slot);
      if (day === 0 && amount === 0) this.#drop(slot);
    }
  }

  #drop(slot: number): void {
    this.#index.remove(slot);
    // The key goes too: an erased value's hash must not stay in memory.
    this.#index.keys.fill(0, slot * kKeyWords, (slot + 1) * kKeyWords);
    this.#arena.release(slot);
  }
}
