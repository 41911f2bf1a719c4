// Links between accounts that used the same signal value (the account_links table, written from
// here: docs/pipeline.md, "Derived rows"). SQL keeps two rows per link, one per direction, always written together with
// the same times and mask; here a link is one entry with two half-edges, one on each account's
// list:
//
//   link 6 = (account 3, account 9, email) ── half 12 on account 3's list (its other end: 9)
//                                          └─ half 13 on account 9's list (its other end: 3)
//
// A link is found by (lower account, higher account, type) through an index over its own key
// column, which is also where its ends and type are read from: [low, high << 3 | type]. Its mask
// is that of the value it was last written from (the value is held by both ends as long as the
// link exists: only erasure removes holders, and it removes the links with them). First and last
// seen are ms (the route shows them to the millisecond). Lists are doubly linked so that erasing an
// account unlinks each of its links from the other end's list at once. Pure: time is passed in.
//
// A link loaded from its rows (load()) shows a value both ends hold, as a recorded one does. When
// its ends share no value of its type (the tables should never say so), it keeps the mask of its
// rows itself, in a small arena of its own, tagged in the value column; writing it from a value
// later (upsert) drops that mask.
import { kMaxSlot, SlotIndex, type SlotIndexParts } from './slot-index.js';
import { column, columnBytes, grown, SlotAllocator, sumBytes, unlink, type Bytes, type SlotAllocatorParts } from './slots.js';
import { StringArena, type StringArenaParts } from './string-arena.js';

const kInitialLinks = 1024;
/** In the value column: the rest is the offset of the link's own mask in #ownMasks, not a value. */
const kOwnMask = 0x80000000;

/** Links as plain data (parts(), fromParts()). */
export interface LinksParts {
  readonly slots: SlotAllocatorParts;
  readonly byEnds: SlotIndexParts;
  readonly next: Uint32Array;
  readonly prev: Uint32Array;
  readonly firstSeen: Float64Array;
  readonly lastSeen: Float64Array;
  readonly value: Uint32Array;
  readonly ownMasks: StringArenaParts | null;
  readonly head: Uint32Array;
}

export class Links {
  #slots: SlotAllocator;
  #byEnds = new SlotIndex(2, kInitialLinks);
  /** Per half-edge (link × 2 + side), along its account's list: half + 1 (0: none). */
  #next: Uint32Array = column(Uint32Array, kInitialLinks * 2, (kMaxSlot + 1) * 2);
  #prev: Uint32Array = column(Uint32Array, kInitialLinks * 2, (kMaxSlot + 1) * 2);
  #firstSeen: Float64Array = column(Float64Array, kInitialLinks, kMaxSlot + 1);
  #lastSeen: Float64Array = column(Float64Array, kInitialLinks, kMaxSlot + 1);
  /** The signal value whose mask the link shows, or kOwnMask + the offset of its own mask. */
  #value: Uint32Array = column(Uint32Array, kInitialLinks, kMaxSlot + 1);
  /** Masks of links that show no value (made on first use: normally there are none). */
  #ownMasks: StringArena | null = null;
  /** Per account: its first half-edge + 1. */
  #head: Uint32Array = column(Uint32Array, 1024, kMaxSlot + 1);
  readonly #probe = new Uint32Array(2);

  /** `limit`: the most links held at once (at most kMaxSlot + 1). */
  constructor(limit = kMaxSlot + 1) {
    this.#slots = new SlotAllocator(limit);
  }

  /** Its state as plain data (scoring/start-snapshot.ts); these links are not used after. */
  parts(): LinksParts {
    return {
      slots: this.#slots.parts(), byEnds: this.#byEnds.parts(), next: this.#next, prev: this.#prev, firstSeen: this.#firstSeen,
      lastSeen: this.#lastSeen, value: this.#value, ownMasks: this.#ownMasks?.parts() ?? null, head: this.#head,
    };
  }

  /** The links whose parts() these are, with the same `limit` as they had. */
  static fromParts(limit: number, parts: LinksParts): Links {
    const links = new Links(limit);
    links.#slots = SlotAllocator.fromParts(limit, parts.slots);
    links.#byEnds = SlotIndex.fromParts(parts.byEnds);
    links.#next = parts.next;
    links.#prev = parts.prev;
    links.#firstSeen = parts.firstSeen;
    links.#lastSeen = parts.lastSeen;
    links.#value = parts.value;
    links.#ownMasks = parts.ownMasks === null ? null : StringArena.fromParts(parts.ownMasks);
    links.#head = parts.head;
    return links;
  }

  /** Room for `links` links in the index at once (a start that knows how many it loads). */
  presize(links: number): void {
    this.#byEnds.presize(links);
  }

  /**
   * Links accounts `a` and `b` (a ≠ b, both < 2^28) by `type`, written from signal `value` at
   * `now`: a new link is first = last seen = now; an existing one gets last seen = max(last, now)
   * and shows this value's mask (the upsert of account_links). The caller has checked there is
   * room (`available`).
   */
  upsert(a: number, b: number, type: number, value: number, now: number): void {
    const link = this.find(a, b, type);
    if (link >= 0) {
      if (now > this.#lastSeen[link]!) this.#lastSeen[link] = now;
      if (this.#value[link]! >= kOwnMask) {
        this.#releaseOwnMask(link);
        if (this.#ownMasks!.wasteful) this.#compactOwnMasks();
      }
      this.#value[link] = value;
      return;
    }
    this.#add(value, now, now);
  }

  /** The link of accounts `a` and `b` by `type`, or -1. */
  find(a: number, b: number, type: number): number {
    const probe = this.#probe;
    probe[0] = a < b ? a : b;
    probe[1] = (((a < b ? b : a) << 3) | type) >>> 0;
    return this.#byEnds.find(probe, 0);
  }

  /**
   * A link as its two rows of account_links hold it: accounts `a` and `b` (a ≠ b, both < 2^28) by
   * `type`, first and last seen (ms), showing `shown`: a signal value both hold, or what
   * keepMask() returned. The caller has checked that there is no such link (find) and that there
   * is room (`available`).
   */
  load(a: number, b: number, type: number, shown: number, firstSeen: number, lastSeen: number): void {
    this.find(a, b, type);
    this.#add(shown, firstSeen, lastSeen);
  }

  /**
   * Keeps `mask` for a link to show in place of a value's (see the header): what load() takes as
   * `shown`, or -1 when the mask is too long to keep.
   */
  keepMask(mask: string): number {
    this.#ownMasks ??= new StringArena();
    // Offsets must stay below the tag bit: 2 GiB of such masks is far past any real use.
    if (this.#ownMasks.used + mask.length * 3 + 3 >= kOwnMask) return -1;
    const offset = this.#ownMasks.add(mask);
    return offset < 0 ? -1 : kOwnMask + offset;
  }

  /** The account's first half-edge, or -1. Walk on with next(). */
  first(account: number): number {
    return account < this.#head.length ? this.#head[account]! - 1 : -1;
  }

  /** The half-edge after `half` on its account's list, or -1. */
  next(half: number): number {
    return this.#next[half]! - 1;
  }

  /** The account at the other end of `half`. */
  other(half: number): number {
    const keys = this.#byEnds.keys;
    return (half & 1) === 0 ? keys[half | 1]! >>> 3 : keys[half - 1]!;
  }

  /** The link's type (a SignalType: ip is the ip_24h link). */
  type(half: number): number {
    return this.#byEnds.keys[half | 1]! & 7;
  }

  firstSeen(half: number): number {
    return this.#firstSeen[half >>> 1]!;
  }

  lastSeen(half: number): number {
    return this.#lastSeen[half >>> 1]!;
  }

  /** The signal value the link was last written from (its mask is the link's), or -1 when it shows its own (ownMask). */
  value(half: number): number {
    const value = this.#value[half >>> 1]!;
    return value >= kOwnMask ? -1 : value;
  }

  /** The mask of a link that shows no value (value() is -1). */
  ownMask(half: number): string {
    return this.#ownMasks!.get(this.#value[half >>> 1]! - kOwnMask);
  }

  /** Removes every link of `account`, from both ends' lists; how many there were. */
  removeAccount(account: number): number {
    let count = 0;
    let half = this.first(account);
    while (half >= 0) {
      const following = this.#next[half]! - 1;
      const link = half >>> 1;
      unlink(this.#head, this.other(half), this.#next, this.#prev, half ^ 1);
      this.#byEnds.remove(link);
      this.#byEnds.keys[link * 2] = 0;
      this.#byEnds.keys[link * 2 + 1] = 0;
      this.#next[half] = 0;
      this.#prev[half] = 0;
      this.#firstSeen[link] = 0;
      this.#lastSeen[link] = 0;
      if (this.#value[link]! >= kOwnMask) this.#releaseOwnMask(link);
      this.#value[link] = 0;
      this.#slots.release(link);
      count++;
      half = following;
    }
    if (account < this.#head.length) this.#head[account] = 0;
    if (this.#ownMasks?.wasteful === true) this.#compactOwnMasks();
    return count;
  }

  /** Links held (each stands for two rows of account_links). */
  get count(): number {
    return this.#slots.live;
  }

  /** How many more links there is room for. */
  get available(): number {
    return this.#slots.available;
  }

  /** Memory of the links, the per-account list heads included (counted as written). */
  get bytes(): Bytes {
    const high = this.#slots.high;
    return sumBytes(
      this.#byEnds.bytes(high), this.#slots.bytes, columnBytes(high * 2, this.#next, this.#prev),
      columnBytes(high, this.#firstSeen, this.#lastSeen, this.#value), columnBytes(this.#head.length, this.#head),
      this.#ownMasks?.bytes ?? { held: 0, used: 0 },
    );
  }

  /** A new link under the key in #probe; its number. */
  #add(shown: number, firstSeen: number, lastSeen: number): number {
    const probe = this.#probe;
    const link = this.#slots.allocate();
    if (link >= this.#value.length) this.#grow();
    this.#byEnds.reserve(link + 1);
    this.#byEnds.keys.set(probe, link * 2);
    this.#byEnds.insert(link);
    this.#firstSeen[link] = firstSeen;
    this.#lastSeen[link] = lastSeen;
    this.#value[link] = shown;
    this.#push(probe[0]!, link * 2);
    this.#push(probe[1]! >>> 3, link * 2 + 1);
    return link;
  }

  #releaseOwnMask(link: number): void {
    this.#ownMasks!.release(this.#value[link]! - kOwnMask);
    this.#value[link] = 0;
  }

  /** Copies the own masks of live links (released ones are zeroes) into a fresh arena. */
  #compactOwnMasks(): void {
    const old = this.#ownMasks!;
    const fresh = new StringArena(old.used - old.garbage);
    for (let link = 0; link < this.#slots.high; link++) {
      if (this.#value[link]! >= kOwnMask) this.#value[link] = kOwnMask + fresh.copyFrom(old, this.#value[link]! - kOwnMask);
    }
    this.#ownMasks = fresh;
  }

  /** Puts `half` first on `account`'s list. */
  #push(account: number, half: number): void {
    if (account >= this.#head.length) this.#head = grown(this.#head, Math.max(account + 1, this.#head.length * 2));
    const first = this.#head[account]!;
    this.#next[half] = first;
    this.#prev[half] = 0;
    if (first !== 0) this.#prev[first - 1] = half + 1;
    this.#head[account] = half + 1;
  }

  #grow(): void {
    const length = this.#value.length * 2;
    this.#next = grown(this.#next, length * 2);
    this.#prev = grown(this.#prev, length * 2);
    this.#firstSeen = grown(this.#firstSeen, length);
    this.#lastSeen = grown(this.#lastSeen, length);
    this.#value = grown(this.#value, length);
  }
}
