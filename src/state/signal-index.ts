// Signal values and their holders (DESIGN §8; the account_signals table, written from here).
//
//   value:   a signal value of one space (email, phone, fp, ip or card), by its caller-given
//            128-bit keyed hash; its type, its mask (for the links route), its holder list
//   holder:  (account, value), first seen (seconds) and last seen (ms), on two lists:
//              the value's list, doubly linked, most recent first: "the 100 most recent other
//              holders" and "holders seen within 24 hours" read from the head and stop early
//              the account's list, singly linked: erasure walks it
//
//   value 17 ── head ─► holder 4 (acc 9, 12:00) ◄─► holder 1 (acc 3, 11:40) ◄─► holder 7 (acc 5, 09:02)
//   account 9 ─ head ─► holder 4 ──► holder 2 (value 30) ──► …
//
// A holder list stays ordered by last seen, newest first, ties by the latest write first: an
// insert or refresh puts the holder at the head, past any holders seen later (those exist only if
// the caller's clock stepped back). Holders are found by (account, value) through an index over
// their own key column, which is also where their account and value are read from. A value no one
// holds any more is dropped. Pure: time is passed in.
//
// Loading (load(), from rows of account_signals, in any order) puts a row at the head when it is
// the value's most recent holder so far, else right behind the head: one step either way, however
// many holders the value has (a shared IP may have millions). A list that became out of order so is
// sorted when it is first read (recentHolders, use), by last seen with ties by the latest load
// first — so a loaded list reads as a recorded one, and the head, whose mask the value shows, is
// right all along.
import { kMaxSlot, SlotIndex, type SlotIndexParts } from './slot-index.js';
import { column, columnBytes, grown, SlotAllocator, sumBytes, unlink, type Bytes, type SlotAllocatorParts } from './slots.js';
import { StringArena, type StringArenaParts } from './string-arena.js';

export const enum SignalType {
  Email = 0,
  Phone = 1,
  Fp = 2,
  Ip = 3,
  Card = 4,
}

/** An account's use of a value is re-written (last seen, links) at most this often. */
export const kRefreshMs = 60 * 60_000;

const kInitialValues = 1024;
const kInitialHolders = 1024;

/** What erasure took from the index, for the caller to tell the store. */
export interface ErasedSignals {
  /** Holder entries removed (rows of account_signals). */
  readonly holders: number;
  /** Values no one holds any more, dropped. */
  readonly dropped: number;
  /** The type of each value the account held. */
  readonly types: Uint8Array;
  /** Each value's key as the caller gave it, 4 words per value, in the order of `types`. */
  readonly keys: Uint32Array;
}

/** A SignalIndex as plain data (parts(), fromParts()). */
export interface SignalIndexParts {
  readonly values: SlotAllocatorParts;
  readonly byKey: SlotIndexParts;
  readonly type: Uint8Array;
  readonly head: Uint32Array;
  readonly mask: Uint32Array;
  readonly unsorted: Uint8Array;
  readonly masks: StringArenaParts;
  readonly holders: SlotAllocatorParts;
  readonly byPair: SlotIndexParts;
  readonly next: Uint32Array;
  readonly prev: Uint32Array;
  readonly accountNext: Uint32Array;
  readonly lastSeen: Float64Array;
  readonly firstSeen: Uint32Array;
  readonly accountHead: Uint32Array;
}

export class SignalIndex {
  // Values. The index key is the caller's key with the space folded into its first word, so two
  // spaces never share a value even if a caller hashed without the space.
  #values: SlotAllocator;
  #byKey = new SlotIndex(4, kInitialValues);
  #type: Uint8Array = column(Uint8Array, kInitialValues, kMaxSlot + 1);
  /** First holder + 1 (0: none). */
  #head: Uint32Array = column(Uint32Array, kInitialValues, kMaxSlot + 1);
  /** Offset of the value's mask in #masks. */
  #mask: Uint32Array = column(Uint32Array, kInitialValues, kMaxSlot + 1);
  /** 1: the value's holder list came out of order from load() and is sorted when first read. */
  #unsorted: Uint8Array = column(Uint8Array, kInitialValues, kMaxSlot + 1);
  #masks = new StringArena();
  // Holders. The index key column holds (account, value) per holder.
  #holders: SlotAllocator;
  #byPair = new SlotIndex(2, kInitialHolders);
  /** Along the value's list, holder + 1 (0: none). */
  #next: Uint32Array = column(Uint32Array, kInitialHolders, kMaxSlot + 1);
  #prev: Uint32Array = column(Uint32Array, kInitialHolders, kMaxSlot + 1);
  /** Along the account's list, holder + 1. */
  #accountNext: Uint32Array = column(Uint32Array, kInitialHolders, kMaxSlot + 1);
  #lastSeen: Float64Array = column(Float64Array, kInitialHolders, kMaxSlot + 1);
  /** Whole seconds: shown nowhere and compared with nothing; the derived table's rows are keyed by it (migration 26). */
  #firstSeen: Uint32Array = column(Uint32Array, kInitialHolders, kMaxSlot + 1);
  /** Per account: its first holder + 1. */
  #accountHead: Uint32Array = column(Uint32Array, 1024, kMaxSlot + 1);
  readonly #probe = new Uint32Array(4);
  /** The first seen (whole seconds) of the holder the last use() wrote. */
  #usedFirstSeen = 0;

  /** `limit`: the most values, and the most holders, held at once (at most kMaxSlot + 1). */
  constructor(limit = kMaxSlot + 1) {
    this.#values = new SlotAllocator(limit);
    this.#holders = new SlotAllocator(limit);
  }

  /** Its state as plain data (scoring/start-snapshot.ts); this index is not used after. */
  parts(): SignalIndexParts {
    return {
      values: this.#values.parts(), byKey: this.#byKey.parts(), type: this.#type, head: this.#head, mask: this.#mask, unsorted: this.#unsorted,
      masks: this.#masks.parts(), holders: this.#holders.parts(), byPair: this.#byPair.parts(), next: this.#next, prev: this.#prev,
      accountNext: this.#accountNext, lastSeen: this.#lastSeen, firstSeen: this.#firstSeen, accountHead: this.#accountHead,
    };
  }

  /** The index whose parts() these are, with the same `limit` as it had. */
  static fromParts(limit: number, parts: SignalIndexParts): SignalIndex {
    const index = new SignalIndex(limit);
    index.#values = SlotAllocator.fromParts(limit, parts.values);
    index.#byKey = SlotIndex.fromParts(parts.byKey);
    index.#type = parts.type;
    index.#head = parts.head;
    index.#mask = parts.mask;
    index.#unsorted = parts.unsorted;
    index.#masks = StringArena.fromParts(parts.masks);
    index.#holders = SlotAllocator.fromParts(limit, parts.holders);
    index.#byPair = SlotIndex.fromParts(parts.byPair);
    index.#next = parts.next;
    index.#prev = parts.prev;
    index.#accountNext = parts.accountNext;
    index.#lastSeen = parts.lastSeen;
    index.#firstSeen = parts.firstSeen;
    index.#accountHead = parts.accountHead;
    return index;
  }

  /** Room for `values` values and `holders` holders in the indexes at once (a start that knows how many it loads). */
  presize(values: number, holders: number): void {
    this.#byKey.presize(values);
    this.#byPair.presize(holders);
  }

  /** The value of (space, key at keys[at..at + 4)), or -1. */
  find(space: number, keys: Uint32Array, at: number): number {
    this.#probeFor(space, keys, at);
    return this.#byKey.find(this.#probe, 0);
  }

  /**
   * `account` used a value at `now`: a new (account, value) pair
   * is added with first = last seen = now; a pair last seen kRefreshMs or more ago is refreshed
   * (last seen = now, moved to the head). Returns the value when either happened — the caller then
   * links the account with the value's other holders — and -1 when nothing was written. The caller
   * has checked there is room (`available`). A write also makes `mask` the value's mask, and the
   * holder's first seen what usedFirstSeen reads.
   */
  use(space: number, account: number, type: SignalType, keys: Uint32Array, at: number, mask: string, now: number): number {
    this.#probeFor(space, keys, at);
    let value = this.#byKey.find(this.#probe, 0);
    const known = value >= 0;
    if (!known) value = this.#addValue(type, mask);
    const probe = this.#probe;
    probe[0] = account;
    probe[1] = value;
    const holder = this.#byPair.find(probe, 0);
    if (holder < 0) {
      const added = this.#addHolder(account, value, now, now);
      this.#placeByRecency(value, added, now);
      this.#usedFirstSeen = this.#firstSeen[added]!;
    } else if (now - this.#lastSeen[holder]! >= kRefreshMs) {
      this.#usedFirstSeen = this.#firstSeen[holder]!;
      this.#lastSeen[holder] = now;
      unlink(this.#head, value, this.#next, this.#prev, holder);
      this.#placeByRecency(value, holder, now);
    } else {
      return -1;
    }
    if (known && !this.#masks.equals(this.#mask[value]!, mask)) {
      this.#masks.release(this.#mask[value]!);
      this.#mask[value] = this.#masks.add(mask);
    }
    return value;
  }

  /**
   * A row of account_signals: `account` (of `space`) holds the value of `type` keyed at
   * keys[at..at + 4), first seen `firstSeen` (ms, kept in seconds), last seen `lastSeen` (ms);
   * the holder, or -1 (nothing changed) when the pair is already held. The holder is placed by
   * its last seen (see the header); the value takes `mask` when it is new or when this holder is
   * now its most recent one (a recorded value shows the mask last written, and a row's mask is
   * the one its first write gave). The caller has checked there is room (`available`).
   */
  load(space: number, account: number, type: SignalType, keys: Uint32Array, at: number, mask: string, firstSeen: number, lastSeen: number): number {
    this.#probeFor(space, keys, at);
    let value = this.#byKey.find(this.#probe, 0);
    const known = value >= 0;
    const probe = this.#probe;
    if (known) {
      probe[0] = account;
      probe[1] = value;
      if (this.#byPair.find(probe, 0) >= 0) return -1;
    } else {
      value = this.#addValue(type, mask);
    }
    const holder = this.#addHolder(account, value, firstSeen, lastSeen);
    this.#placeLoaded(value, holder, lastSeen);
    if (known && this.#head[value] === holder + 1 && !this.#masks.equals(this.#mask[value]!, mask)) {
      this.#masks.release(this.#mask[value]!);
      this.#mask[value] = this.#masks.add(mask);
    }
    return holder;
  }

  /**
   * A value of `type` that accounts `a` and `b` both hold, or -1: when there are several, one whose
   * mask is `mask` if any, else the first found. Walks the two accounts' lists in step and stops
   * when the shorter one ends (each value both hold is on both lists): about twice the shorter
   * list's length in steps, a pair lookup for each value of `type`.
   */
  sharedValue(a: number, b: number, type: SignalType, mask: string): number {
    const pairs = this.#byPair.keys;
    let fromA = a < this.#accountHead.length ? this.#accountHead[a]! - 1 : -1;
    let fromB = b < this.#accountHead.length ? this.#accountHead[b]! - 1 : -1;
    let chosen = -1;
    let compared = false;
    while (fromA >= 0 && fromB >= 0) {
      for (let side = 0; side < 2; side++) {
        const value = pairs[(side === 0 ? fromA : fromB) * 2 + 1]!;
        if (this.#type[value] !== type || value === chosen || !this.#holds(side === 0 ? b : a, value)) continue;
        // Masks are read only once a second candidate turns up (nearly always there is one).
        if (chosen < 0) {
          chosen = value;
          continue;
        }
        if (!compared) {
          if (this.#masks.equals(this.#mask[chosen]!, mask)) return chosen;
          compared = true;
        }
        if (this.#masks.equals(this.#mask[value]!, mask)) return value;
      }
      fromA = this.#accountNext[fromA]! - 1;
      fromB = this.#accountNext[fromB]! - 1;
    }
    return chosen;
  }

  /**
   * Writes to out[0..n) the accounts holding `value` other than `except`, most recent first, last
   * seen at or after `since`, at most `limit` of them; returns n.
   */
  recentHolders(value: number, except: number, since: number, limit: number, out: Uint32Array): number {
    if (this.#unsorted[value] === 1) this.#sortHolders(value);
    const pairs = this.#byPair.keys;
    let n = 0;
    for (let holder = this.#head[value]! - 1; holder >= 0 && n < limit; holder = this.#next[holder]! - 1) {
      if (this.#lastSeen[holder]! < since) break;
      const account = pairs[holder * 2]!;
      if (account !== except) out[n++] = account;
    }
    return n;
  }

  /** The first seen, in whole seconds, of the holder the last use() that returned a value wrote. */
  get usedFirstSeen(): number {
    return this.#usedFirstSeen;
  }

  /** The distinct first seens (whole seconds) of the values `account` holds: the keys of its rows begin with them. */
  firstSeenOf(account: number): number[] {
    const seconds = new Set<number>();
    for (let holder = account < this.#accountHead.length ? this.#accountHead[account]! - 1 : -1; holder >= 0; holder = this.#accountNext[holder]! - 1) {
      seconds.add(this.#firstSeen[holder]!);
    }
    return [...seconds];
  }

  typeOf(value: number): SignalType {
    return this.#type[value]!;
  }

  maskOf(value: number): string {
    return this.#masks.get(this.#mask[value]!);
  }

  /** Removes every holder entry of `account` (of `space`) and the values no one holds any more. */
  removeAccount(account: number, space: number): ErasedSignals {
    const types: number[] = [];
    const keys: number[] = [];
    let dropped = 0;
    const pairs = this.#byPair.keys;
    let holder = account < this.#accountHead.length ? this.#accountHead[account]! - 1 : -1;
    while (holder >= 0) {
      const following = this.#accountNext[holder]! - 1;
      const value = pairs[holder * 2 + 1]!;
      unlink(this.#head, value, this.#next, this.#prev, holder);
      this.#byPair.remove(holder);
      pairs[holder * 2] = 0;
      pairs[holder * 2 + 1] = 0;
      this.#accountNext[holder] = 0;
      this.#lastSeen[holder] = 0;
      this.#firstSeen[holder] = 0;
      this.#holders.release(holder);
      const valueKeys = this.#byKey.keys;
      types.push(this.#type[value]!);
      keys.push((valueKeys[value * 4]! ^ space) >>> 0, valueKeys[value * 4 + 1]!, valueKeys[value * 4 + 2]!, valueKeys[value * 4 + 3]!);
      if (this.#head[value] === 0) {
        this.#dropValue(value);
        dropped++;
      }
      holder = following;
    }
    if (account < this.#accountHead.length) this.#accountHead[account] = 0;
    if (this.#masks.wasteful) this.#compactMasks();
    return { holders: types.length, dropped, types: Uint8Array.from(types), keys: Uint32Array.from(keys) };
  }

  /** Values held. */
  get values(): number {
    return this.#values.live;
  }

  /** Holder entries. */
  get holders(): number {
    return this.#holders.live;
  }

  /** How many more values, and how many more holders, there is room for (the lesser). */
  get available(): number {
    return Math.min(this.#values.available, this.#holders.available);
  }

  /** Memory of the values: index and key column, type, head, mask offset, mask arena. */
  get valueBytes(): Bytes {
    const high = this.#values.high;
    return sumBytes(this.#byKey.bytes(high), this.#values.bytes, columnBytes(high, this.#type, this.#head, this.#mask, this.#unsorted), this.#masks.bytes);
  }

  /** Memory of the holders, the per-account list heads included (counted as written). */
  get holderBytes(): Bytes {
    const high = this.#holders.high;
    return sumBytes(
      this.#byPair.bytes(high), this.#holders.bytes, columnBytes(high, this.#next, this.#prev, this.#accountNext, this.#lastSeen, this.#firstSeen),
      columnBytes(this.#accountHead.length, this.#accountHead),
    );
  }

  #probeFor(space: number, keys: Uint32Array, at: number): void {
    const probe = this.#probe;
    probe[0] = keys[at]! ^ space;
    probe[1] = keys[at + 1]!;
    probe[2] = keys[at + 2]!;
    probe[3] = keys[at + 3]!;
  }

  /** A new value under the key in #probe. */
  #addValue(type: SignalType, mask: string): number {
    const value = this.#values.allocate();
    if (value >= this.#type.length) this.#growValues();
    this.#byKey.reserve(value + 1);
    this.#byKey.keys.set(this.#probe, value * 4);
    this.#byKey.insert(value);
    this.#type[value] = type;
    this.#head[value] = 0;
    this.#unsorted[value] = 0;
    this.#mask[value] = this.#masks.add(mask);
    return value;
  }

  /** A new holder of `value` by `account`, on the account's list (the caller places it on the value's); its number. */
  #addHolder(account: number, value: number, firstSeen: number, lastSeen: number): number {
    const holder = this.#holders.allocate();
    if (holder >= this.#lastSeen.length) this.#growHolders();
    this.#byPair.reserve(holder + 1);
    this.#byPair.keys[holder * 2] = account;
    this.#byPair.keys[holder * 2 + 1] = value;
    this.#byPair.insert(holder);
    this.#firstSeen[holder] = Math.floor(firstSeen / 1000);
    this.#lastSeen[holder] = lastSeen;
    if (account >= this.#accountHead.length) this.#accountHead = grown(this.#accountHead, Math.max(account + 1, this.#accountHead.length * 2));
    this.#accountNext[holder] = this.#accountHead[account]!;
    this.#accountHead[account] = holder + 1;
    return holder;
  }

  /** True when `account` holds `value`. */
  #holds(account: number, value: number): boolean {
    const probe = this.#probe;
    probe[0] = account;
    probe[1] = value;
    return this.#byPair.find(probe, 0) >= 0;
  }

  #dropValue(value: number): void {
    this.#byKey.remove(value);
    this.#byKey.keys.fill(0, value * 4, value * 4 + 4);
    this.#masks.release(this.#mask[value]!);
    this.#mask[value] = 0;
    this.#type[value] = 0;
    this.#unsorted[value] = 0;
    this.#values.release(value);
  }

  /** Puts `holder` (last seen `now`, on no list) first among the value's holders not seen after `now`. */
  #placeByRecency(value: number, holder: number, now: number): void {
    if (this.#unsorted[value] === 1) this.#sortHolders(value);
    let before = -1;
    let after = this.#head[value]! - 1;
    while (after >= 0 && this.#lastSeen[after]! > now) {
      before = after;
      after = this.#next[after]! - 1;
    }
    this.#prev[holder] = before + 1;
    this.#next[holder] = after + 1;
    if (before < 0) this.#head[value] = holder + 1;
    else this.#next[before] = holder + 1;
    if (after >= 0) this.#prev[after] = holder + 1;
  }

  /**
   * A loaded holder: at the head when no holder of the value was seen later, else right behind
   * the head (the list is then marked for sorting if that breaks its order). Ties: the later load
   * goes first, as placeByRecency puts the latest write first.
   */
  #placeLoaded(value: number, holder: number, lastSeen: number): void {
    const head = this.#head[value]! - 1;
    if (head < 0 || lastSeen >= this.#lastSeen[head]!) {
      this.#prev[holder] = 0;
      this.#next[holder] = head + 1;
      if (head >= 0) this.#prev[head] = holder + 1;
      this.#head[value] = holder + 1;
      return;
    }
    const after = this.#next[head]! - 1;
    this.#prev[holder] = head + 1;
    this.#next[holder] = after + 1;
    this.#next[head] = holder + 1;
    if (after >= 0) {
      this.#prev[after] = holder + 1;
      if (lastSeen < this.#lastSeen[after]!) this.#unsorted[value] = 1;
    }
  }

  /** Puts the value's holder list in order: last seen, newest first; a stable sort keeps ties as they are (the later load first). */
  #sortHolders(value: number): void {
    this.#unsorted[value] = 0;
    const holders: number[] = [];
    for (let holder = this.#head[value]! - 1; holder >= 0; holder = this.#next[holder]! - 1) holders.push(holder);
    const lastSeen = this.#lastSeen;
    holders.sort((a, b) => lastSeen[b]! - lastSeen[a]!);
    let before = -1;
    for (const holder of holders) {
      this.#prev[holder] = before + 1;
      if (before < 0) this.#head[value] = holder + 1;
      else this.#next[before] = holder + 1;
      before = holder;
    }
    this.#next[before] = 0;
  }

  #growValues(): void {
    const length = this.#type.length * 2;
    this.#type = grown(this.#type, length);
    this.#unsorted = grown(this.#unsorted, length);
    this.#head = grown(this.#head, length);
    this.#mask = grown(this.#mask, length);
  }

  #growHolders(): void {
    const length = this.#lastSeen.length * 2;
    this.#next = grown(this.#next, length);
    this.#prev = grown(this.#prev, length);
    this.#accountNext = grown(this.#accountNext, length);
    this.#lastSeen = grown(this.#lastSeen, length);
    this.#firstSeen = grown(this.#firstSeen, length);
  }

  /** Copies the masks of live values (every live value has a holder) into a fresh arena. */
  #compactMasks(): void {
    const fresh = new StringArena(this.#masks.used - this.#masks.garbage);
    for (let value = 0; value < this.#values.high; value++) {
      if (this.#head[value] !== 0) this.#mask[value] = fresh.copyFrom(this.#masks, this.#mask[value]!);
    }
    this.#masks = fresh;
  }
}
