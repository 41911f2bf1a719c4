// The hot state's facade (DESIGN §8, docs/pipeline.md "Hot state"): records a scored event of an
// account (reporting what changed, for the derived rows: docs/pipeline.md "Derived rows"), and
// answers what the rules read (the `links` and `account` signals), the links route and erasure —
// what the store once did per event in SQL, with the same results (the exceptions are listed in
// docs/pipeline.md). Wired by src/accounts/hot-accounts.ts. Owned by one thread; every call runs
// to completion.
//
//   Accounts     (accounts.ts)      space + external id → account; columns; projects
//   SignalIndex  (signal-index.ts)  space + value key → value → holders, most recent first
//   Links        (links.ts)         (account, account, type) → link, on both accounts' lists
//
// Spaces (tenant, environment) and projects are numbers the caller assigns; accounts are slot
// numbers, valid until the account is erased. Pure: time is passed in, public ids come from the
// caller's function (or are given), nothing is read or written outside memory.
//
// At start the state is loaded from the rows of the SQL tables, in this order:
//
//   accounts          loadAccount   one per row; then addProject per row of account_projects,
//                                   in any order (projectsOf's order is not kept: its readers sort)
//   account_signals   loadHolder    one per row, in any order (one step each; a value's holders
//                                   are put in order when first read)
//   account_links     loadLink      once per pair of rows (both directions hold the same link)
//
// after which it answers, and goes on recording, as the state that recorded those rows would
// (what the tables do not keep: which of two holders seen at the same millisecond was written
// last — the later loaded counts as the more recent).
import { Accounts, kMaxProject, type AccountsParts, type Decision } from './accounts.js';
import type { AccountSignals, LinkSignals } from '../signals/state-signals.js';
import { isoMs } from './iso-time.js';
import { jsonString } from './json-string.js';
import { KeyDomain, type KeyHasher } from './keys.js';
import { Links, type LinksParts } from './links.js';
import { SignalIndex, SignalType, type SignalIndexParts } from './signal-index.js';
import { column, columnBytes, grown, type Bytes } from './slots.js';
import { kMaxSlot } from './slot-index.js';
import { stateError, type StateError } from './state-error.js';
import { kMaxStringBytes } from './string-arena.js';

export { SignalType } from './signal-index.js';
export type { Decision } from './accounts.js';
/** What a call answers instead of throwing (state-error.ts). */
export type { StateError, StateErrorCode } from './state-error.js';
/** What the rules read (src/signals/state-signals.ts). */
export type { AccountSignals, LinkSignals } from '../signals/state-signals.js';

/** Other accounts linked per value when it is first used or refreshed (as the store did in SQL before the rows were derived). */
export const kMaxLinksPerValue = 100;
/** Other holders the `links` signal examines per value (SQL's LIMIT 1000 before the signal came from memory). */
export const kMaxExamined = 1000;
/** An IP links accounts only within this window (`ip_24h`). */
export const kIpWindowMs = 86_400_000;
const kDayMs = 86_400_000;

/** Signal types by SignalType. */
export const kSignalTypeNames = ['email', 'phone', 'fp', 'ip', 'card'] as const;
/** Link types by SignalType: an IP links as `ip_24h`. */
export const kLinkTypeNames = ['email', 'phone', 'fp', 'ip_24h', 'card'] as const;
/** Where each link type sorts in the route (SQL's ORDER BY signal_type: card, email, fp, ip_24h, phone). */
const kLinkTypeRank = [1, 4, 2, 3, 0];
const kDomains = [KeyDomain.Email, KeyDomain.Phone, KeyDomain.Fp, KeyDomain.Ip, KeyDomain.Card];

/**
 * The signal values of one event: type, 128-bit key (KeyHasher.key128 of the normalised value,
 * with the space as scope) and masked form. Reused from event to event: clear(), then add().
 */
export class EventSignals {
  count = 0;
  types: Uint8Array;
  keys: Uint32Array;
  masks: string[] = [];

  /**
   * `capacity`: the values expected (more still fit). V8 keeps a typed array of at most 64 bytes
   * (4 values' keys) in its own heap and allocates a larger one's memory apart, at several times
   * the cost: an event's own count spares most events that, and every event a growth.
   */
  constructor(capacity = 4) {
    this.types = new Uint8Array(capacity);
    this.keys = new Uint32Array(capacity * 4);
  }

  clear(): void {
    this.count = 0;
    this.masks.length = 0;
  }

  /** Adds a value by its key at key[at .. at + 4). */
  add(type: SignalType, key: Uint32Array, at: number, mask: string): void {
    const i = this.#next();
    this.types[i] = type;
    const keys = this.keys;
    keys[i * 4] = key[at]!;
    keys[i * 4 + 1] = key[at + 1]!;
    keys[i * 4 + 2] = key[at + 2]!;
    keys[i * 4 + 3] = key[at + 3]!;
    this.masks[i] = mask;
  }

  /** Adds a value by its normalised form, hashed here. */
  addValue(hasher: KeyHasher, space: number, type: SignalType, normalized: string, mask: string): void {
    const i = this.#next();
    this.types[i] = type;
    hasher.key128(kDomains[type]!, space, normalized, this.keys, i * 4);
    this.masks[i] = mask;
  }

  #next(): number {
    if (this.count === this.types.length) {
      // New arrays rather than grown(): reading .buffer of an array in V8's heap copies it out first.
      const length = Math.max(4, this.count * 2);
      const types = new Uint8Array(length);
      types.set(this.types);
      const keys = new Uint32Array(length * 4);
      keys.set(this.keys);
      this.types = types;
      this.keys = keys;
    }
    return this.count++;
  }
}

/**
 * What recordEvent changed, for the caller to write the same rows (docs/pipeline.md, "Derived
 * rows"): the event's values it recorded (new to the account, or refreshed) and the links it
 * upserted, each as the index of the value in the event's EventSignals and the other account.
 * Reused from event to event: recordEvent clears it.
 */
export class RecordedChanges {
  /** The account used the project for the first time with this event. */
  newProject = false;
  values: number[] = [];
  /** For each of `values`: its holder's first seen, in whole seconds. */
  valuesFirstSeen: number[] = [];
  linkValues: number[] = [];
  linkOthers: number[] = [];

  clear(): void {
    this.newProject = false;
    this.values.length = 0;
    this.valuesFirstSeen.length = 0;
    this.linkValues.length = 0;
    this.linkOthers.length = 0;
  }
}

/** An account's row of the accounts table, as far as events change it. */
export interface AccountCounts {
  readonly lastSeenAt: number;
  readonly events: number;
  readonly blocks: number;
  readonly reviews: number;
}

export type RecordOutcome =
  | { readonly ok: true; readonly account: number; readonly created: boolean }
  | { readonly ok: false; readonly error: StateError };

/** What an erasure removed, for the caller to tell the store (and to answer the DELETE). */
export interface ErasedAccount {
  readonly publicId: string;
  readonly externalId: string;
  readonly space: number;
  readonly projects: readonly number[];
  readonly events: number;
  readonly blocks: number;
  readonly reviews: number;
  readonly fraudConfirmed: boolean;
  /** (account, value) entries removed: the account's rows of account_signals. */
  readonly signals: number;
  /** Links removed; each was two rows of account_links, so this is also the account's own rows. */
  readonly links: number;
  /** Type and key (as the caller gave it, 4 words) of each value the account held. */
  readonly signalTypes: Uint8Array;
  readonly signalKeys: Uint32Array;
  /** Values no other account holds, dropped from memory. */
  readonly droppedSignals: number;
}

export interface HotStateOptions {
  readonly hasher: KeyHasher;
  /** Makes a public account id: `acc_` + 20 characters of [0-9A-Za-z] (src/shared/ids.ts newSortableId('acc')). */
  readonly newPublicId: () => string;
  /**
   * The most accounts, signal values, holders and links held, each: past it, STATE_FULL. Default
   * and largest: kMaxSlot + 1 (2^28 − 1), what the indexes can number.
   */
  readonly limit?: number;
}

export interface HotStateStats {
  readonly accounts: number;
  readonly values: number;
  readonly holders: number;
  readonly links: number;
  /** Memory by part (slots.ts Bytes: as allocated, and as written); `scratch`: the per-account query marks. */
  readonly bytes: { readonly accounts: Bytes; readonly values: Bytes; readonly holders: Bytes; readonly links: Bytes; readonly scratch: Bytes };
}

const isSignalType = (type: number): boolean => Number.isInteger(type) && type >= SignalType.Email && type <= SignalType.Card;

/** A HotState as plain data (parts(), fromParts()). */
export interface HotStateParts {
  readonly accounts: AccountsParts;
  readonly signals: SignalIndexParts;
  readonly links: LinksParts;
}

export class HotState {
  readonly #limit: number;
  #accounts: Accounts;
  #signals: SignalIndex;
  #links: Links;
  readonly #holders = new Uint32Array(kMaxExamined);
  // The `links` signal counts distinct accounts without a Set: an account is counted once per
  // query (#seenQuery = this query's number) and once per type (#seenTypes, a bit per type).
  #seenQuery = column(Uint32Array, 1024, kMaxSlot + 1);
  #seenTypes = column(Uint8Array, 1024, kMaxSlot + 1);
  #query = 0;
  readonly #counts = new Uint32Array(5);
  #total = 0;
  #fraud = 0;
  #route = new Uint32Array(64);

  constructor(options: HotStateOptions) {
    const limit = options.limit ?? kMaxSlot + 1;
    if (!Number.isInteger(limit) || limit < 1 || limit > kMaxSlot + 1) throw new RangeError(`options.limit must be an integer in 1..${kMaxSlot + 1}, not ${limit}`);
    this.#limit = limit;
    this.#accounts = new Accounts(options.hasher, options.newPublicId, limit);
    this.#signals = new SignalIndex(limit);
    this.#links = new Links(limit);
  }

  /** Its state as plain data (scoring/start-snapshot.ts); this state is not used after. */
  parts(): HotStateParts {
    return { accounts: this.#accounts.parts(), signals: this.#signals.parts(), links: this.#links.parts() };
  }

  /** The state whose parts() these are, with the same options as it had. */
  static fromParts(options: HotStateOptions, parts: HotStateParts): HotState {
    const state = new HotState(options);
    state.#accounts = Accounts.fromParts(options.hasher, options.newPublicId, state.#limit, parts.accounts);
    state.#signals = SignalIndex.fromParts(state.#limit, parts.signals);
    state.#links = Links.fromParts(state.#limit, parts.links);
    return state;
  }

  /**
   * Room for what a start is about to load (rows of accounts, account_signals, and links counted
   * once per pair): the indexes take them without doubling on the way. Values are at most holders.
   */
  presize(accounts: number, holders: number, links: number): void {
    const limit = this.#limit;
    this.#accounts.presize(Math.min(accounts, limit));
    this.#signals.presize(Math.min(holders, limit), Math.min(holders, limit));
    this.#links.presize(Math.min(links, limit));
  }

  /** The account of (space, external id), or -1. */
  findAccount(space: number, externalId: string): number {
    return this.#accounts.find(space, externalId);
  }

  /** The live account with this acc_ id, or -1. */
  findByPublicId(publicId: string): number {
    return this.#accounts.findByPublicId(publicId);
  }

  /**
   * The account a path id names for a project (accounts-service.ts): an acc_ id of the space
   * names that account (never one whose external id it is), else the id is an external id; only
   * accounts the project used. -1 when none. (Which external ids may be written in a path, and an
   * erased account's acc_ id, are the route's business.)
   */
  resolve(space: number, project: number, id: string): number {
    if (id.startsWith('acc_')) {
      const account = this.#accounts.findByPublicId(id);
      if (account >= 0 && this.#accounts.space(account) === space) return this.#accounts.usedBy(account, project) ? account : -1;
    }
    const account = this.#accounts.find(space, id);
    return account >= 0 && this.#accounts.usedBy(account, project) ? account : -1;
  }

  /**
   * Records a scored event of (space, external id) used from `project` (after its commit): the
   * account (created if new) counts the event and its decision, notes the project, and each
   * signal value is recorded; a value new to the account, or refreshed an hour or more after the
   * account last used it, links the account with up to 100 of its most recent other holders (an
   * IP: those seen within 24 hours). A new account gets `publicId` when given, else an id from
   * options.newPublicId; an existing account ignores `publicId`. `changes`: told what changed.
   * `counted`: the account's counts already include the event (a replay after a crash of an event
   * whose account row was written with it): they, and its last seen, stay. Nothing changes when it
   * fails (INVALID_PUBLIC_ID: `publicId` is malformed or a live account has it).
   */
  recordEvent(
    space: number, project: number, externalId: string, decision: Decision, now: number, signals: EventSignals, publicId?: string, changes?: RecordedChanges,
    counted = false,
  ): RecordOutcome {
    if (!Number.isInteger(project) || project < 0 || project > kMaxProject) return { ok: false, error: stateError('INVALID_PROJECT', `project ${project} is not a number in 0..${kMaxProject}`) };
    if (this.#signals.available < signals.count || this.#links.available < signals.count * kMaxLinksPerValue) {
      return { ok: false, error: stateError('STATE_FULL', 'no room for the signal values or links of another event') };
    }
    // A UTF-16 unit is at most 3 UTF-8 bytes: a mask that passes fits the arena.
    for (let i = 0; i < signals.count; i++) {
      if (signals.masks[i]!.length * 3 > kMaxStringBytes) return { ok: false, error: stateError('STRING_TOO_LONG', 'a mask is too long to keep') };
    }
    const before = this.#accounts.count;
    const found = this.#accounts.findOrCreate(space, externalId, now, publicId);
    if (typeof found !== 'number') return { ok: false, error: found };
    const account = found;
    if (!counted) this.#accounts.recordOutcome(account, decision, now);
    const newProject = this.#accounts.addProject(account, project);
    changes?.clear();
    if (changes !== undefined) changes.newProject = newProject;
    const others = this.#holders;
    for (let i = 0; i < signals.count; i++) {
      const type = signals.types[i]!;
      const value = this.#signals.use(space, account, type, signals.keys, i * 4, signals.masks[i]!, now);
      if (value < 0) continue;
      if (changes !== undefined) {
        changes.values.push(i);
        changes.valuesFirstSeen.push(this.#signals.usedFirstSeen);
      }
      const since = type === SignalType.Ip ? now - kIpWindowMs : -Infinity;
      const n = this.#signals.recentHolders(value, account, since, kMaxLinksPerValue, others);
      for (let j = 0; j < n; j++) {
        this.#links.upsert(account, others[j]!, type, value, now);
        if (changes !== undefined) {
          changes.linkValues.push(i);
          changes.linkOthers.push(others[j]!);
        }
      }
    }
    return { ok: true, account, created: this.#accounts.count > before };
  }

  /**
   * The `links` signal of an event of `account` (-1: unknown yet) before it is recorded: the
   * other accounts holding each of its values — the 1000 most recent per value; an IP only if seen within 24 hours — and the account's stored links, counted per
   * type and in total, distinct, and how many of them are flagged (fraud or a block). An account
   * that is not live (erased since the caller found it) counts as unknown.
   */
  linkSignals(space: number, account: number, signals: EventSignals, now: number): LinkSignals {
    if (!this.#accounts.isLive(account)) account = -1;
    this.#startCount();
    const others = this.#holders;
    for (let i = 0; i < signals.count; i++) {
      const value = this.#signals.find(space, signals.keys, i * 4);
      if (value < 0) continue;
      const type = signals.types[i]!;
      const since = type === SignalType.Ip ? now - kIpWindowMs : -Infinity;
      const n = this.#signals.recentHolders(value, account, since, kMaxExamined, others);
      for (let j = 0; j < n; j++) this.#count(others[j]!, type);
    }
    if (account >= 0) {
      for (let half = this.#links.first(account); half >= 0; half = this.#links.next(half)) this.#count(this.#links.other(half), this.#links.type(half));
    }
    const counts = this.#counts;
    return {
      email: counts[SignalType.Email]!, phone: counts[SignalType.Phone]!, fp: counts[SignalType.Fp]!, ip_24h: counts[SignalType.Ip]!, card: counts[SignalType.Card]!,
      total: this.#total, fraud: this.#fraud,
    };
  }

  /** The `account` signal; -1 or an erased account is unknown. */
  accountSignals(account: number, now: number): AccountSignals {
    const accounts = this.#accounts;
    if (!accounts.isLive(account)) return { known: false };
    return {
      known: true,
      age_days: Math.max(0, (now - accounts.createdAt(account)) / kDayMs),
      events: accounts.events(account),
      blocks: accounts.blocks(account),
      reviews: accounts.reviews(account),
      fraud_confirmed: accounts.fraudConfirmed(account),
    };
  }

  /**
   * The data of GET /v1/accounts/{id}/links as JSON text, as accounts-service.ts writes it:
   * `{"account_public_id","external_account_id","links":[...]}`, the links whose other account
   * `project` used, ordered by signal type, then the other account's public id. Null when
   * `account` is not live.
   */
  linksJson(account: number, project: number): string | null {
    const accounts = this.#accounts;
    if (!accounts.isLive(account)) return null;
    const links = this.#links;
    let n = 0;
    for (let half = links.first(account); half >= 0; half = links.next(half)) {
      if (!accounts.usedBy(links.other(half), project)) continue;
      if (n === this.#route.length) this.#route = grown(this.#route, n * 2);
      this.#route[n++] = half;
    }
    const ordered = this.#route.subarray(0, n).sort(this.#byTypeThenId);
    let json = `{"account_public_id":"${accounts.publicId(account)}","external_account_id":${jsonString(accounts.externalId(account))},"links":[`;
    for (let i = 0; i < n; i++) {
      const half = ordered[i]!;
      const other = links.other(half);
      const value = links.value(half);
      json += `${i === 0 ? '' : ','}{"signal_type":"${kLinkTypeNames[links.type(half)]}","account_public_id":"${accounts.publicId(other)}",`
        + `"external_account_id":${jsonString(accounts.externalId(other))},"masked_signal":${jsonString(value >= 0 ? this.#signals.maskOf(value) : links.ownMask(half))},`
        + `"first_seen":"${isoMs(links.firstSeen(half))}","last_seen":"${isoMs(links.lastSeen(half))}"}`;
    }
    return `${json}]}`;
  }

  /**
   * Erases the account: its holder entries (values no one else holds are dropped), its links in
   * both directions, its id mappings and fields; returns what it held, or null if `account` is not
   * a live account. Its slot number may name a new account afterwards.
   */
  erase(account: number): ErasedAccount | null {
    const accounts = this.#accounts;
    if (!accounts.isLive(account)) return null;
    const space = accounts.space(account);
    const held = {
      publicId: accounts.publicId(account), externalId: accounts.externalId(account), space, projects: accounts.projectsOf(account),
      events: accounts.events(account), blocks: accounts.blocks(account), reviews: accounts.reviews(account), fraudConfirmed: accounts.fraudConfirmed(account),
    };
    const signals = this.#signals.removeAccount(account, space);
    const links = this.#links.removeAccount(account);
    accounts.remove(account);
    return { ...held, signals: signals.holders, links, signalTypes: signals.types, signalKeys: signals.keys, droppedSignals: signals.dropped };
  }

  /**
   * An account as its row of the accounts table holds it; its number. Nothing changes when it
   * fails: DUPLICATE_ROW ((space, external id) has an account), INVALID_PUBLIC_ID (malformed, or a
   * live account has it), STATE_FULL, STRING_TOO_LONG. Counts are kept as uint32.
   */
  loadAccount(
    space: number, externalId: string, publicId: string, createdAt: number, lastSeenAt: number,
    events: number, blocks: number, reviews: number, fraudConfirmed: boolean,
  ): number | StateError {
    return this.#accounts.load(space, externalId, publicId, createdAt, lastSeenAt, events, blocks, reviews, fraudConfirmed);
  }

  /**
   * Notes that `project` used the live account (a row of account_projects); projectsOf lists the
   * latest noted first. Does nothing when `account` is not live or `project` is not a number in
   * 0..kMaxProject (as setFraud, it has no error to return).
   */
  addProject(account: number, project: number): void {
    if (this.#accounts.isLive(account) && Number.isInteger(project) && project >= 0 && project <= kMaxProject) this.#accounts.addProject(account, project);
  }

  /**
   * A row of account_signals: the live `account` (of `space`) holds the value of `type` whose
   * 128-bit key is keys[at..at + 4) (the keys of EventSignals), first and last seen `firstSeen`,
   * `lastSeen` (ms; first seen is kept in seconds, as recorded). Creates no links (loadLink does).
   * Rows may come in any order, at the same cost (signal-index.ts, "Loading"). Holders seen at the same millisecond: the later
   * loaded counts as the more recent. The value shows the mask of its most recent holder row.
   * Errors (nothing changed): INVALID_ROW (account not live or of another space, type not a
   * SignalType), DUPLICATE_ROW (the account already holds the value), STATE_FULL, STRING_TOO_LONG.
   */
  loadHolder(space: number, account: number, type: SignalType, keys: Uint32Array, at: number, mask: string, firstSeen: number, lastSeen: number): StateError | null {
    if (!this.#accounts.isLive(account) || this.#accounts.space(account) !== space) return stateError('INVALID_ROW', `account ${account} is not a live account of space ${space}`);
    if (!isSignalType(type)) return stateError('INVALID_ROW', `signal type ${type} is not a SignalType`);
    if (this.#signals.available < 1) return stateError('STATE_FULL', 'no room for another signal value or holder');
    if (mask.length * 3 > kMaxStringBytes) return stateError('STRING_TOO_LONG', 'the mask is too long to keep');
    if (this.#signals.load(space, account, type, keys, at, mask, firstSeen, lastSeen) < 0) return stateError('DUPLICATE_ROW', `account ${account} already holds this value`);
    return null;
  }

  /**
   * One link as its two rows of account_links hold it (one per direction), given once: live
   * accounts a ≠ b of one space, `type` the SignalType of the link type (ip → ip_24h), first and
   * last seen (ms). Load holders first: the link shows, as a recorded one does, the mask of a value
   * of `type` that both accounts hold — one whose mask is `mask` when they share several. When they
   * share none (the tables should never say so), the link keeps `mask` itself and shows it, until
   * an event writes the link from a value. Errors (nothing changed): INVALID_ROW (an end not live,
   * a = b, ends of two spaces, type not a SignalType), DUPLICATE_ROW (the link is held),
   * STATE_FULL, STRING_TOO_LONG (only for a mask kept).
   */
  loadLink(a: number, b: number, type: SignalType, mask: string, firstSeen: number, lastSeen: number): StateError | null {
    const accounts = this.#accounts;
    if (a === b || !accounts.isLive(a) || !accounts.isLive(b) || accounts.space(a) !== accounts.space(b)) {
      return stateError('INVALID_ROW', `accounts ${a} and ${b} are not two live accounts of one space`);
    }
    if (!isSignalType(type)) return stateError('INVALID_ROW', `link type ${type} is not a SignalType`);
    if (this.#links.find(a, b, type) >= 0) return stateError('DUPLICATE_ROW', `accounts ${a} and ${b} are already linked by type ${type}`);
    if (this.#links.available < 1) return stateError('STATE_FULL', 'no room for another link');
    let shown = this.#signals.sharedValue(a, b, type, mask);
    if (shown < 0) {
      shown = this.#links.keepMask(mask);
      if (shown < 0) return stateError('STRING_TOO_LONG', 'the mask is too long to keep');
    }
    this.#links.load(a, b, type, shown, firstSeen, lastSeen);
    return null;
  }

  /** Sets or clears the account's fraud mark (a case resolved as fraud sets it). */
  setFraud(account: number, confirmed: boolean): void {
    if (this.#accounts.isLive(account)) this.#accounts.setFraud(account, confirmed);
  }

  /** Whether the live account was used from `project`. */
  usedBy(account: number, project: number): boolean {
    return this.#accounts.isLive(account) && this.#accounts.usedBy(account, project);
  }

  /** The counts and last use of a live account, as its row of the accounts table holds them. */
  accountCounts(account: number): AccountCounts {
    const accounts = this.#accounts;
    return { lastSeenAt: accounts.lastSeenAt(account), events: accounts.events(account), blocks: accounts.blocks(account), reviews: accounts.reviews(account) };
  }

  /** The other account and the type of each link of a live account. */
  linkedAccounts(account: number): Array<{ readonly other: number; readonly type: SignalType }> {
    const links = this.#links;
    const linked: Array<{ other: number; type: SignalType }> = [];
    if (!this.#accounts.isLive(account)) return linked;
    for (let half = links.first(account); half >= 0; half = links.next(half)) linked.push({ other: links.other(half), type: links.type(half) as SignalType });
    return linked;
  }

  /** The distinct first seens (whole seconds) of the values a live account holds: where its rows of account_signals are (migration 26). */
  signalFirstSeens(account: number): number[] {
    return this.#accounts.isLive(account) ? this.#signals.firstSeenOf(account) : [];
  }

  /** The projects that used a live account (more than one: shared across projects). */
  projectsOf(account: number): number[] {
    return this.#accounts.projectsOf(account);
  }

  /** The acc_ id of a live account. */
  /** The (tenant, environment) number of a live account. */
  spaceOf(account: number): number {
    return this.#accounts.space(account);
  }

  publicId(account: number): string {
    return this.#accounts.publicId(account);
  }

  /** The caller's id of a live account. */
  externalId(account: number): string {
    return this.#accounts.externalId(account);
  }

  get stats(): HotStateStats {
    return {
      accounts: this.#accounts.count, values: this.#signals.values, holders: this.#signals.holders, links: this.#links.count,
      bytes: {
        accounts: this.#accounts.bytes, values: this.#signals.valueBytes, holders: this.#signals.holderBytes, links: this.#links.bytes,
        scratch: columnBytes(this.#seenQuery.length, this.#seenQuery, this.#seenTypes, this.#holders, this.#route),
      },
    };
  }

  readonly #byTypeThenId = (a: number, b: number): number =>
    kLinkTypeRank[this.#links.type(a)]! - kLinkTypeRank[this.#links.type(b)]! || this.#accounts.comparePublicIds(this.#links.other(a), this.#links.other(b));

  #startCount(): void {
    const capacity = this.#accounts.capacity;
    // Marks of earlier queries stay: they hold older query numbers, never this one.
    if (this.#seenQuery.length < capacity) {
      this.#seenQuery = grown(this.#seenQuery, capacity);
      this.#seenTypes = grown(this.#seenTypes, capacity);
    }
    // Query numbers wrap after 2^32 - 1 queries: start the marks afresh then.
    if (++this.#query === 0x1_0000_0000) {
      this.#seenQuery.fill(0);
      this.#query = 1;
    }
    this.#counts.fill(0);
    this.#total = 0;
    this.#fraud = 0;
  }

  #count(other: number, type: number): void {
    if (this.#seenQuery[other] !== this.#query) {
      this.#seenQuery[other] = this.#query;
      this.#seenTypes[other] = 0;
      this.#total++;
      if (this.#accounts.flagged(other)) this.#fraud++;
    }
    const bit = 1 << type;
    if ((this.#seenTypes[other]! & bit) === 0) {
      this.#seenTypes[other] = this.#seenTypes[other]! | bit;
      this.#counts[type]!++;
    }
  }
}
