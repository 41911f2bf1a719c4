// Accounts of the hot state (DESIGN §8): one slot per account, its fields in typed arrays.
//
//   by external id:  SlotIndex over keyed 128-bit hashes of (space, external id) — a space is a
//                    (tenant, environment) pair, numbered by the caller; one account per key
//   by public id:    SlotIndex over the packed acc_ id (public-id.ts), exact
//   columns:         space, created/last seen (ms), events, blocks, reviews, flags (live, fraud),
//                    the projects that used it, the external id (an offset into a string arena)
//
// An account is nearly always used by one project: the projects column holds it (project + 1);
// the few accounts several projects used hold a chain of (project, next) nodes instead, tagged by
// the top bit. The semantics are those of the accounts and account_projects tables (the counts
// are written from here: docs/pipeline.md, "Derived rows"). Pure: time is passed in, public ids come from the caller's function
// or are given (an account loaded from its row, or created under an id the caller chose).
import { KeyDomain, type KeyHasher } from './keys.js';
import { comparePacked, packPublicId, unpackPublicId } from './public-id.js';
import { kMaxSlot, SlotIndex, type SlotIndexParts } from './slot-index.js';
import { column, columnBytes, grown, SlotAllocator, sumBytes, type Bytes, type SlotAllocatorParts } from './slots.js';
import { StringArena, type StringArenaParts } from './string-arena.js';
import { stateError, type StateError } from './state-error.js';

export type Decision = 'allow' | 'review' | 'block';

const kInitialAccounts = 1024;
const kLive = 1;
const kFraud = 2;
/** In the projects column: the rest is the head of a chain of projects, not a project + 1. */
const kChained = 0x80000000;
/** Project numbers are below this (the top bit of the projects column is a tag). */
export const kMaxProject = 0x7ffffffe;
/** Tries at an unused public id before giving up (a collision of 119 random bits: never, in practice). */
const kIdTries = 3;

/** Accounts as plain data (parts(), fromParts()). */
export interface AccountsParts {
  readonly slots: SlotAllocatorParts;
  readonly byExternal: SlotIndexParts;
  readonly byPublic: SlotIndexParts;
  readonly strings: StringArenaParts;
  readonly space: Uint32Array;
  readonly externalId: Uint32Array;
  readonly createdAt: Float64Array;
  readonly lastSeenAt: Float64Array;
  readonly events: Uint32Array;
  readonly blocks: Uint32Array;
  readonly reviews: Uint32Array;
  readonly flags: Uint8Array;
  readonly projects: Uint32Array;
  readonly chainSlots: SlotAllocatorParts;
  readonly chainProject: Uint32Array;
  readonly chainNext: Uint32Array;
}

export class Accounts {
  readonly #hasher: KeyHasher;
  readonly #newPublicId: () => string;
  #slots: SlotAllocator;
  #byExternal = new SlotIndex(4, kInitialAccounts);
  #byPublic = new SlotIndex(4, kInitialAccounts);
  #strings = new StringArena();
  #space: Uint32Array = column(Uint32Array, kInitialAccounts, kMaxSlot + 1);
  #externalId: Uint32Array = column(Uint32Array, kInitialAccounts, kMaxSlot + 1);
  #createdAt: Float64Array = column(Float64Array, kInitialAccounts, kMaxSlot + 1);
  #lastSeenAt: Float64Array = column(Float64Array, kInitialAccounts, kMaxSlot + 1);
  #events: Uint32Array = column(Uint32Array, kInitialAccounts, kMaxSlot + 1);
  #blocks: Uint32Array = column(Uint32Array, kInitialAccounts, kMaxSlot + 1);
  #reviews: Uint32Array = column(Uint32Array, kInitialAccounts, kMaxSlot + 1);
  #flags: Uint8Array = column(Uint8Array, kInitialAccounts, kMaxSlot + 1);
  #projects: Uint32Array = column(Uint32Array, kInitialAccounts, kMaxSlot + 1);
  #chainSlots = new SlotAllocator(kChained - 1);
  #chainProject: Uint32Array = new Uint32Array(64);
  #chainNext: Uint32Array = new Uint32Array(64);
  readonly #probe = new Uint32Array(4);
  /** The packed public id of the account being created. */
  readonly #publicKey = new Uint32Array(4);

  /** `limit`: the most accounts held at once (at most kMaxSlot + 1). */
  constructor(hasher: KeyHasher, newPublicId: () => string, limit = kMaxSlot + 1) {
    this.#hasher = hasher;
    this.#newPublicId = newPublicId;
    this.#slots = new SlotAllocator(limit);
  }

  /** Its state as plain data (scoring/start-snapshot.ts); these accounts are not used after. */
  parts(): AccountsParts {
    return {
      slots: this.#slots.parts(), byExternal: this.#byExternal.parts(), byPublic: this.#byPublic.parts(), strings: this.#strings.parts(),
      space: this.#space, externalId: this.#externalId, createdAt: this.#createdAt, lastSeenAt: this.#lastSeenAt, events: this.#events,
      blocks: this.#blocks, reviews: this.#reviews, flags: this.#flags, projects: this.#projects,
      chainSlots: this.#chainSlots.parts(), chainProject: this.#chainProject, chainNext: this.#chainNext,
    };
  }

  /** The accounts whose parts() these are, with the same constructor arguments as they had. */
  static fromParts(hasher: KeyHasher, newPublicId: () => string, limit: number, parts: AccountsParts): Accounts {
    const accounts = new Accounts(hasher, newPublicId, limit);
    accounts.#slots = SlotAllocator.fromParts(limit, parts.slots);
    accounts.#byExternal = SlotIndex.fromParts(parts.byExternal);
    accounts.#byPublic = SlotIndex.fromParts(parts.byPublic);
    accounts.#strings = StringArena.fromParts(parts.strings);
    accounts.#space = parts.space;
    accounts.#externalId = parts.externalId;
    accounts.#createdAt = parts.createdAt;
    accounts.#lastSeenAt = parts.lastSeenAt;
    accounts.#events = parts.events;
    accounts.#blocks = parts.blocks;
    accounts.#reviews = parts.reviews;
    accounts.#flags = parts.flags;
    accounts.#projects = parts.projects;
    accounts.#chainSlots = SlotAllocator.fromParts(kChained - 1, parts.chainSlots);
    accounts.#chainProject = parts.chainProject;
    accounts.#chainNext = parts.chainNext;
    return accounts;
  }

  /** Room for `accounts` accounts in the indexes at once (a start that knows how many it loads). */
  presize(accounts: number): void {
    this.#byExternal.presize(accounts);
    this.#byPublic.presize(accounts);
  }

  /** The account of (space, external id), or -1. */
  find(space: number, externalId: string): number {
    this.#hasher.key128(KeyDomain.ExternalAccountId, space, externalId, this.#probe, 0);
    return this.#byExternal.find(this.#probe, 0);
  }

  /** The account with this acc_ id (in any space), or -1. */
  findByPublicId(publicId: string): number {
    return packPublicId(publicId, this.#probe, 0) ? this.#byPublic.find(this.#probe, 0) : -1;
  }

  /**
   * The account of (space, external id), created at `now` if there is none (created and last seen
   * `now`, no events yet) with `publicId` if given, else a new one from the caller's function; an
   * existing account ignores `publicId`. Nothing changes when it fails.
   */
  findOrCreate(space: number, externalId: string, now: number, publicId?: string): number | StateError {
    const found = this.find(space, externalId);
    if (found >= 0) return found;
    if (publicId === undefined) {
      if (!this.#unusedPublicId()) return stateError('INVALID_PUBLIC_ID', 'the public id function gave no unused acc_ id of 20 base62 characters');
    } else if (!this.#usable(publicId)) {
      return stateError('INVALID_PUBLIC_ID', 'the public id given is not acc_ + 20 base62 characters, or a live account has it');
    }
    return this.#create(space, externalId, now, now);
  }

  /**
   * An account as its row of the accounts table holds it (its projects are added apart); its
   * number. Counts are kept as uint32, as recordOutcome keeps them. Nothing changes when it fails:
   * DUPLICATE_ROW when (space, external id) has an account, INVALID_PUBLIC_ID when `publicId` is
   * malformed or taken, STATE_FULL, STRING_TOO_LONG.
   */
  load(
    space: number, externalId: string, publicId: string, createdAt: number, lastSeenAt: number,
    events: number, blocks: number, reviews: number, fraudConfirmed: boolean,
  ): number | StateError {
    if (this.find(space, externalId) >= 0) return stateError('DUPLICATE_ROW', 'an account of this space already has this external id');
    if (!this.#usable(publicId)) return stateError('INVALID_PUBLIC_ID', 'the public id is not acc_ + 20 base62 characters, or a live account has it');
    const account = this.#create(space, externalId, createdAt, lastSeenAt);
    if (typeof account !== 'number') return account;
    this.#events[account] = events;
    this.#blocks[account] = blocks;
    this.#reviews[account] = reviews;
    if (fraudConfirmed) this.#flags[account] = kLive | kFraud;
    return account;
  }

  /** One more scored event of the account. */
  recordOutcome(account: number, decision: Decision, now: number): void {
    this.#events[account]!++;
    if (decision === 'block') this.#blocks[account]!++;
    else if (decision === 'review') this.#reviews[account]!++;
    if (now > this.#lastSeenAt[account]!) this.#lastSeenAt[account] = now;
  }

  /** Notes that `project` (0 ≤ project ≤ kMaxProject) used the account; true the first time. */
  addProject(account: number, project: number): boolean {
    const held = this.#projects[account]!;
    if (held === 0) {
      this.#projects[account] = project + 1;
      return true;
    }
    if (this.usedBy(account, project)) return false;
    let head = held >= kChained ? held - kChained : this.#chainNode(held - 1, -1);
    head = this.#chainNode(project, head);
    this.#projects[account] = kChained + head;
    return true;
  }

  /** True when `project` used the account. */
  usedBy(account: number, project: number): boolean {
    const held = this.#projects[account]!;
    if (held < kChained) return held === project + 1;
    for (let node = held - kChained; node >= 0; node = this.#chainNext[node]! - 1) {
      if (this.#chainProject[node] === project) return true;
    }
    return false;
  }

  /** The projects that used the account, most recent first. */
  projectsOf(account: number): number[] {
    const held = this.#projects[account]!;
    if (held < kChained) return held === 0 ? [] : [held - 1];
    const projects: number[] = [];
    for (let node = held - kChained; node >= 0; node = this.#chainNext[node]! - 1) projects.push(this.#chainProject[node]!);
    return projects;
  }

  setFraud(account: number, confirmed: boolean): void {
    this.#flags[account] = confirmed ? this.#flags[account]! | kFraud : this.#flags[account]! & ~kFraud;
  }

  /** True when `account` is a live slot (not erased, not never used). */
  isLive(account: number): boolean {
    return account >= 0 && account < this.#flags.length && (this.#flags[account]! & kLive) !== 0;
  }

  space(account: number): number {
    return this.#space[account]!;
  }

  createdAt(account: number): number {
    return this.#createdAt[account]!;
  }

  lastSeenAt(account: number): number {
    return this.#lastSeenAt[account]!;
  }

  events(account: number): number {
    return this.#events[account]!;
  }

  blocks(account: number): number {
    return this.#blocks[account]!;
  }

  reviews(account: number): number {
    return this.#reviews[account]!;
  }

  fraudConfirmed(account: number): boolean {
    return (this.#flags[account]! & kFraud) !== 0;
  }

  /** What the `links` signal counts as fraud: confirmed fraud or a block. */
  flagged(account: number): boolean {
    return (this.#flags[account]! & kFraud) !== 0 || this.#blocks[account]! > 0;
  }

  publicId(account: number): string {
    return unpackPublicId(this.#byPublic.keys, account * 4);
  }

  externalId(account: number): string {
    return this.#strings.get(this.#externalId[account]!);
  }

  /** Orders two accounts by public id, as the strings compare. */
  comparePublicIds(a: number, b: number): number {
    const keys = this.#byPublic.keys;
    return comparePacked(keys, a * 4, keys, b * 4);
  }

  /** Forgets the account: its id mappings, its external id (zeroed), its fields. */
  remove(account: number): void {
    this.#byExternal.remove(account);
    this.#byExternal.keys.fill(0, account * 4, account * 4 + 4);
    this.#byPublic.remove(account);
    this.#byPublic.keys.fill(0, account * 4, account * 4 + 4);
    this.#strings.release(this.#externalId[account]!);
    const held = this.#projects[account]!;
    if (held >= kChained) {
      for (let node = held - kChained; node >= 0;) {
        const next = this.#chainNext[node]! - 1;
        this.#chainSlots.release(node);
        node = next;
      }
    }
    this.#space[account] = 0;
    this.#externalId[account] = 0;
    this.#createdAt[account] = 0;
    this.#lastSeenAt[account] = 0;
    this.#events[account] = 0;
    this.#blocks[account] = 0;
    this.#reviews[account] = 0;
    this.#flags[account] = 0;
    this.#projects[account] = 0;
    this.#slots.release(account);
    if (this.#strings.wasteful) this.#compactStrings();
  }

  /** Accounts held. */
  get count(): number {
    return this.#slots.live;
  }

  /** Accounts that can still be created. */
  get available(): number {
    return this.#slots.available;
  }

  /** Account numbers are below this (for arrays indexed by account). */
  get capacity(): number {
    return this.#flags.length;
  }

  /** Memory of every array, string arena and index. */
  get bytes(): Bytes {
    const high = this.#slots.high;
    return sumBytes(
      this.#byExternal.bytes(high), this.#byPublic.bytes(high), this.#strings.bytes, this.#slots.bytes, this.#chainSlots.bytes,
      columnBytes(high, this.#space, this.#externalId, this.#createdAt, this.#lastSeenAt, this.#events, this.#blocks, this.#reviews, this.#flags, this.#projects),
      columnBytes(this.#chainSlots.high, this.#chainProject, this.#chainNext),
    );
  }

  /** Packs into #publicKey an id from the caller's function that no account has; false when none came. */
  #unusedPublicId(): boolean {
    for (let i = 0; i < kIdTries; i++) {
      if (this.#usable(this.#newPublicId())) return true;
    }
    return false;
  }

  /** Packs `publicId` into #publicKey; false when it is not an acc_ id or an account has it. */
  #usable(publicId: string): boolean {
    return packPublicId(publicId, this.#publicKey, 0) && this.#byPublic.find(this.#publicKey, 0) < 0;
  }

  /**
   * A new live account under the external key in #probe and the public id in #publicKey, with no
   * events; its number. Nothing changes when it fails (STATE_FULL, STRING_TOO_LONG).
   */
  #create(space: number, externalId: string, createdAt: number, lastSeenAt: number): number | StateError {
    if (this.#slots.available === 0) return stateError('STATE_FULL', 'no room for another account');
    const offset = this.#strings.add(externalId);
    if (offset < 0) return stateError('STRING_TOO_LONG', 'the external id is too long to keep');
    const account = this.#slots.allocate();
    if (account >= this.#flags.length) this.#grow();
    this.#byExternal.reserve(account + 1);
    this.#byExternal.keys.set(this.#probe, account * 4);
    this.#byExternal.insert(account);
    this.#byPublic.reserve(account + 1);
    this.#byPublic.keys.set(this.#publicKey, account * 4);
    this.#byPublic.insert(account);
    this.#space[account] = space;
    this.#externalId[account] = offset;
    this.#createdAt[account] = createdAt;
    this.#lastSeenAt[account] = lastSeenAt;
    this.#flags[account] = kLive;
    return account;
  }

  /** A chain node holding `project` before node `next` (-1: none); its number. */
  #chainNode(project: number, next: number): number {
    const node = this.#chainSlots.allocate();
    if (node >= this.#chainProject.length) {
      this.#chainProject = grown(this.#chainProject, this.#chainProject.length * 2);
      this.#chainNext = grown(this.#chainNext, this.#chainNext.length * 2);
    }
    this.#chainProject[node] = project;
    this.#chainNext[node] = next + 1;
    return node;
  }

  #grow(): void {
    const length = this.#flags.length * 2;
    this.#space = grown(this.#space, length);
    this.#externalId = grown(this.#externalId, length);
    this.#createdAt = grown(this.#createdAt, length);
    this.#lastSeenAt = grown(this.#lastSeenAt, length);
    this.#events = grown(this.#events, length);
    this.#blocks = grown(this.#blocks, length);
    this.#reviews = grown(this.#reviews, length);
    this.#flags = grown(this.#flags, length);
    this.#projects = grown(this.#projects, length);
  }

  /** Copies the live external ids into a fresh arena (the released ones are already zeroes). */
  #compactStrings(): void {
    const fresh = new StringArena(this.#strings.used - this.#strings.garbage);
    for (let account = 0; account < this.#slots.high; account++) {
      if ((this.#flags[account]! & kLive) !== 0) this.#externalId[account] = fresh.copyFrom(this.#strings, this.#externalId[account]!);
    }
    this.#strings = fresh;
  }
}
