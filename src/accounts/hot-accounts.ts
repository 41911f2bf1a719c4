// The server's accounts, signal values and links in memory (DESIGN §8, docs/pipeline.md "Hot
// state"): what the rules read as `links` and `account` is answered here, on the HTTP thread that
// owns it, instead of by SQL in the rule workers. Loaded at start from the tables the writer keeps
// (accounts, account_projects, account_signals, account_links, event_labels); kept in step after
// each commit that changes them: a scored event (recorded), an erasure (erased), a case or a label
// (refreshed from its row). The rows that follow from scored events (counts, signals, links) are
// made here and written in bulk (derived-rows.ts, derived-flush.ts); what a crash kept from the
// tables is recorded again at start from the events scored after their stamp (replay).
//
// Signal values are keyed by the first 128 bits of their stored keyed hash (HMAC-SHA256 under the
// install secret, account_signals.signal_hash), so the rows load without the raw values and an
// event's values are found with the hashes the writer stores.
import type { Statement } from 'better-sqlite3';
import type { Environment } from '../auth/api-keys.js';
import { newSortableId } from '../shared/ids.js';
import type { SignalType as SignalTypeName } from '../signals/keyed-hash.js';
import type { AccountSignals, LinkSignals } from '../signals/state-signals.js';
import { externalAccountIdOf, velocityIdentifiers } from '../signals/identifiers.js';
import { analyzeEventPhone } from '../signals/phone.js';
import { storedIdentifiers, type StoredIdentifier } from '../signals/stored-identifiers.js';
import type { DerivedRowBatch } from '../scoring/event-store.js';
import { payloadText } from '../scoring/stored-payload.js';
import type { EventInput } from '../validation/event-input.js';
import { FifoCache } from '../state/fifo-cache.js';
import { EventSignals, HotState, kLinkTypeNames, RecordedChanges, SignalType, type Decision, type HotStateParts, type HotStateStats } from '../state/hot-state.js';
import { DerivedRows } from './derived-rows.js';
import { AccountOrder, kLinkRowsQuery, signalTypeNumber, type LinkChunk, type LinkRowsReceiver } from './link-rows.js';
import type { KeyHasher } from '../state/keys.js';
import { isStateError, type StateError } from '../state/state-error.js';
import type { Db } from '../store/database.js';
import { readAheadTables } from '../store/read-ahead.js';

const kTypes: Readonly<Record<SignalTypeName, SignalType>> = {
  email: SignalType.Email, phone: SignalType.Phone, fp: SignalType.Fp, ip: SignalType.Ip, card: SignalType.Card,
};
/** Accounts whose first event is not committed yet keep their new acc_ id here (bounded). */
const kMaxProvisional = 100_000;

/** An event's account as scoring sees it before the event is stored. */
export interface EventAccount {
  readonly publicId: string;
  /** The account's number in memory; -1 while its first event is not stored. */
  readonly slot: number;
}

export interface LoadCounts {
  readonly accounts: number;
  readonly signals: number;
  readonly links: number;
  /** Scored events recorded again because their rows were not written before a stop (replay). */
  readonly replayed: number;
  readonly ms: number;
  /** Of `ms`, the tables read ahead in file order (store/read-ahead.ts); 0 from a snapshot. */
  readonly readAheadMs: number;
  /** The links came as rows from the start's thread (link-rows.ts), not from the table read here. */
  readonly linksFromStartThread: boolean;
}

export class StateLoadError extends Error {}

/** The tables load() reads whole, in its order. */
const kLoadedTables = ['accounts', 'account_projects', 'account_signals', 'account_links'] as const;

/** A row of account_signals as loaded: account, SignalType (null: unknown), hash, mask, first and last seen. */
type SignalRow = [string, SignalType | null, string, string, number, number];

/** SQL for the SignalType number of a type column's name (NULL for a name not in `types`). */

/** HotAccounts as plain data for the start snapshot (snapshotParts(), fromSnapshot()). */
export interface HotAccountsParts {
  /** The derived stamp the tables were at: every row of this state was written. */
  readonly stampedOrder: number;
  readonly state: HotStateParts;
  readonly spaces: ReadonlyArray<readonly [string, number]>;
  /** Project ids by number. */
  readonly projectIds: readonly string[];
  readonly labelledFraud: ReadonlyArray<readonly [number, number]>;
}

/** An account whose rows wait for its erasure (holdRows). */
export interface HeldAccount {
  readonly accountId: string;
  readonly links: ReadonlyArray<readonly [otherAccountId: string, linkType: string]>;
  /** The distinct first seens (whole seconds) of its values: where its rows of account_signals are. */
  readonly signalFirstSeens: readonly number[];
}

export class HotAccounts {
  readonly #state: HotState;
  readonly #spaces = new Map<string, number>();
  readonly #projects = new Map<string, number>();
  /** Events labelled fraud per account number (account.labelled_fraud); only accounts with some. */
  readonly #labelledFraud = new Map<number, number>();
  readonly #provisional = new FifoCache<string, string>(kMaxProvisional);
  /** Project ids by number. */
  readonly #projectIds: string[] = [];
  readonly #words = new Uint32Array(4);
  readonly #changes = new RecordedChanges();
  readonly #rows: DerivedRows;
  readonly #refreshRow: Statement<[string], { fraud_confirmed: number; labelled_fraud: number }>;

  /** `state`: the parts of a state to take up (the start snapshot); an empty state otherwise. */
  private constructor(readDb: Db, hasher: KeyHasher, stampedOrder: number, state?: HotStateParts) {
    const options = { hasher, newPublicId: () => newSortableId('acc') };
    this.#state = state === undefined ? new HotState(options) : HotState.fromParts(options, state);
    this.#rows = new DerivedRows(stampedOrder);
    this.#refreshRow = readDb.prepare(
      `SELECT fraud_confirmed, (SELECT count(*) FROM event_labels l WHERE l.account_id = a.account_id AND l.label = 'fraud') AS labelled_fraud
       FROM accounts a WHERE account_id = ?`,
    );
  }

  /**
   * Loads every account, signal value and link of the store, then records again the scored events
   * whose rows were not written (replay; `secret`: the install secret their values are hashed
   * with). The links come from `linkRows` (read by the start's thread, link-rows.ts) when given
   * and of the same accounts, else from the table. Throws StateLoadError when a row does not fit.
   */
  static load(readDb: Db, hasher: KeyHasher, secret: Buffer, linkRows: LinkRowsReceiver | null = null): { accounts: HotAccounts; counts: LoadCounts } {
    const started = performance.now();
    // From disk, the scans below would read their pages one random read at a time.
    const readAhead = readAheadTables(readDb, kLoadedTables);
    const stamp = readDb.prepare('SELECT scored_order, from_seq FROM derived_stamp WHERE id = 1').get() as { scored_order: number; from_seq: number };
    const hot = new HotAccounts(readDb, hasher, stamp.scored_order);
    const state = hot.#state;
    const counts = { accounts: 0, signals: 0, links: 0, replayed: 0 };
    let linksFromStartThread = false;
    readDb.transaction(() => {
      // Counted first (a fraction of a second in C at a million accounts) so that the indexes are
      // made at their size instead of doubling all the way (~2 s at that scale: bench/README.md, step 17).
      const rows = (table: string): number => readDb.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
      const accountRows = rows('accounts');
      state.presize(accountRows, rows('account_signals'), Math.ceil(rows('account_links') / 2));
      // In the order of link-rows.ts kAccountOrderQuery: the link rows of the start's thread name accounts by position in it.
      const accounts = readDb.prepare(
        'SELECT account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews, fraud_confirmed FROM accounts ORDER BY account_id',
      ).raw().iterate() as IterableIterator<[string, string, Environment, string, number, number, number, number, number, number]>;
      const order = new AccountOrder();
      const slots = new Int32Array(accountRows);
      for (const [publicId, tenantId, environment, externalId, createdAt, lastSeenAt, events, blocks, reviews, fraud] of accounts) {
        const space = hot.space(tenantId, environment);
        const slot = state.loadAccount(space, externalId, publicId, createdAt, lastSeenAt, events, blocks, reviews, fraud === 1);
        check(slot, `account ${publicId}`);
        if (order.count < slots.length) slots[order.count] = slot as number;
        order.add(publicId);
        counts.accounts++;
      }
      const projects = readDb.prepare('SELECT account_id, project_id FROM account_projects').raw().iterate() as IterableIterator<[string, string]>;
      for (const [publicId, projectId] of projects) {
        const account = state.findByPublicId(publicId);
        if (account >= 0) state.addProject(account, hot.#project(projectId));
      }
      // In the table's order (by first seen: the values an event brought are neighbours, so the
      // account is looked up again only when it changes); the signal index takes them in any
      // order. A row is of its account's tenant and environment (the account's space), and its type
      // comes as a SignalType number: millions of rows, no strings made for either. First seen
      // goes in as ms, as loadHolder takes it (and keeps it in seconds again).
      const signals = readDb.prepare(
        `SELECT account_id, ${signalTypeNumber('signal_type', kTypes)}, signal_hash, masked, first_seen_s * 1000, last_seen FROM account_signals`,
      ).raw().iterate() as IterableIterator<SignalRow>;
      let publicIdOfRow = '';
      let account = -1;
      let space = -1;
      for (const [publicId, type, hash, masked, firstSeen, lastSeen] of signals) {
        if (publicId !== publicIdOfRow) {
          publicIdOfRow = publicId;
          account = state.findByPublicId(publicId);
          if (account >= 0) space = state.spaceOf(account);
        }
        if (account < 0) continue;
        keyWords(hash, hot.#words);
        if (type === null) throw loadError(`signal of ${publicId}`, 'an unknown signal type');
        check(state.loadHolder(space, account, type, hot.#words, 0, masked, firstSeen, lastSeen), `signal of ${publicId}`);
        counts.signals++;
      }
      const fromRows = linkRows === null ? null : hot.#loadLinkRows(linkRows, order, slots);
      if (fromRows !== null) {
        counts.links = fromRows;
        linksFromStartThread = true;
      }
      else {
        // Both directions of a link are written together with the same times: one row per pair.
        const links = readDb.prepare(kLinkRowsQuery).raw().iterate() as IterableIterator<[string, SignalType | null, string, string, number, number]>;
        // In the table's order: an account's links come together, so its number is looked up once.
        let publicIdOfLink = '';
        let a = -1;
        for (const [publicId, type, otherId, masked, firstSeen, lastSeen] of links) {
          if (publicId !== publicIdOfLink) {
            publicIdOfLink = publicId;
            a = state.findByPublicId(publicId);
          }
          const b = state.findByPublicId(otherId);
          if (a < 0 || b < 0) continue;
          if (type === null) throw loadError(`link of ${publicId}`, 'an unknown link type');
          check(state.loadLink(a, b, type, masked, firstSeen, lastSeen), `link of ${publicId}`);
          counts.links++;
        }
      }
      const labelled = readDb.prepare(
        "SELECT account_id, count(*) FROM event_labels WHERE label = 'fraud' AND account_id IS NOT NULL GROUP BY account_id",
      ).raw().iterate() as IterableIterator<[string, number]>;
      for (const [publicId, count] of labelled) {
        const account = state.findByPublicId(publicId);
        if (account >= 0) hot.#labelledFraud.set(account, count);
      }
      counts.replayed = hot.#replay(readDb, stamp.scored_order, stamp.from_seq, secret);
    })();
    return { accounts: hot, counts: { ...counts, ms: performance.now() - started, readAheadMs: readAhead.ms, linksFromStartThread } };
  }

  /**
   * The links from the start's thread (link-rows.ts): null, with nothing loaded, when its accounts
   * are not in the order loaded here (then the table is read). Throws when the thread failed or
   * stopped after rows were taken (the start fails, as when its other loads fail).
   */
  #loadLinkRows(receiver: LinkRowsReceiver, order: AccountOrder, slots: Int32Array): number | null {
    try {
      const first = receiver.next();
      if (first.kind === 'failed') throw loadError('links from the start thread', first.message);
      // Another order, or accounts other than counted here (then `slots` does not number them all).
      if (first.kind !== 'order' || first.count !== order.count || first.hash !== order.hash || order.count !== slots.length) return null;
      let loaded = 0;
      for (;;) {
        const message = receiver.next();
        if (message.kind === 'end') return loaded;
        if (message.kind === 'failed') throw loadError('links from the start thread', message.message);
        if (message.kind === 'chunk') loaded += this.#loadLinkChunk(message.chunk, slots);
      }
    } catch (error) {
      if (error instanceof StateLoadError) throw error;
      throw loadError('links from the start thread', error instanceof Error ? error.message : String(error));
    } finally {
      receiver.close();
    }
  }

  #loadLinkChunk(chunk: LinkChunk, slots: Int32Array): number {
    const state = this.#state;
    for (let i = 0; i < chunk.length; i++) {
      const a = slots[chunk.a[i]!]!;
      const b = slots[chunk.b[i]!]!;
      const type = chunk.type[i]!;
      if (type === 255) throw loadError(`link of ${state.publicId(a)}`, 'an unknown link type');
      check(state.loadLink(a, b, type as SignalType, chunk.masks[chunk.mask[i]!]!, chunk.firstSeen[i]!, chunk.lastSeen[i]!), `link of ${state.publicId(a)}`);
    }
    return chunk.length;
  }

  /**
   * Its state for the start snapshot (scoring/start-snapshot.ts), or null when the tables do not
   * hold all of it yet (rows waiting or held, or the last bulk write failed): the next start then
   * loads the tables and replays the log. These accounts are not used after.
   */
  snapshotParts(): HotAccountsParts | null {
    if (!this.#rows.caughtUp) return null;
    return {
      stampedOrder: this.#rows.stampedOrder,
      state: this.#state.parts(),
      spaces: [...this.#spaces],
      projectIds: [...this.#projectIds],
      labelledFraud: [...this.#labelledFraud],
    };
  }

  /**
   * The accounts of a start snapshot taken when the tables held all of them at derived stamp
   * `stampedOrder`; null when the database's stamp is another (then load() reads the tables).
   */
  static fromSnapshot(readDb: Db, hasher: KeyHasher, parts: HotAccountsParts): { accounts: HotAccounts; counts: LoadCounts } | null {
    const started = performance.now();
    const stamp = readDb.prepare('SELECT scored_order FROM derived_stamp WHERE id = 1').get() as { scored_order: number };
    if (stamp.scored_order !== parts.stampedOrder) return null;
    const hot = new HotAccounts(readDb, hasher, stamp.scored_order, parts.state);
    for (const [key, space] of parts.spaces) hot.#spaces.set(key, space);
    parts.projectIds.forEach((projectId, project) => {
      hot.#projects.set(projectId, project);
      hot.#projectIds.push(projectId);
    });
    for (const [account, count] of parts.labelledFraud) hot.#labelledFraud.set(account, count);
    const stats = hot.#state.stats;
    return { accounts: hot, counts: { accounts: stats.accounts, signals: stats.holders, links: stats.links, replayed: 0, ms: performance.now() - started, readAheadMs: 0, linksFromStartThread: false } };
  }

  /**
   * Records the events scored after the stamp, in the order they were scored, as after their
   * commit: their values hashed again from the stored payloads. Their rows go with the next batch.
   * An account row written past the stamp (counted_order) already counts its events up to there.
   */
  #replay(readDb: Db, stampedOrder: number, fromSeq: number, secret: Buffer): number {
    const countedOrders = new Map(
      readDb.prepare('SELECT account_id, counted_order FROM accounts WHERE counted_order > ?').raw().all(stampedOrder) as Array<[string, number]>,
    );
    const events = readDb.prepare(
      `SELECT e.project_id, p.tenant_id, p.environment, e.account_id, e.payload, e.decision, e.scored_at, e.scored_order, e.seq
       FROM events e JOIN projects p ON p.project_id = e.project_id
       WHERE e.seq >= ? AND e.scored_order > ? AND e.state = 'scored' AND e.account_id IS NOT NULL ORDER BY e.scored_order`,
    ).raw().iterate(fromSeq, stampedOrder) as IterableIterator<[string, string, Environment, string, string, Decision, number, number, number]>;
    let replayed = 0;
    for (const [projectId, tenantId, environment, accountId, payload, decision, scoredAt, order, seq] of events) {
      const event = JSON.parse(payloadText(payload)) as EventInput;
      // An id sent as a number is stored (and recorded) as its decimal string.
      const externalId = externalAccountIdOf(event);
      if (externalId === null) continue;
      const identifiers = storedIdentifiers(event, analyzeEventPhone(event), secret, velocityIdentifiers(event));
      const space = this.space(tenantId, environment);
      const counted = order <= (countedOrders.get(accountId) ?? 0);
      check(this.recorded(space, tenantId, environment, projectId, externalId, accountId, decision, scoredAt, this.eventSignals(identifiers), identifiers, order, seq, false, counted), `event of ${accountId}`);
      replayed++;
    }
    return replayed;
  }

  /**
   * The account of an event: the stored one, or a new acc_ id that every event of the same new
   * account gets until the first of them is stored (whichever commits first creates the row).
   */
  account(space: number, tenantId: string, environment: Environment, externalId: string): EventAccount {
    const slot = this.#state.findAccount(space, externalId);
    if (slot >= 0) return { publicId: this.#state.publicId(slot), slot };
    const key = provisionalKey(tenantId, environment, externalId);
    let publicId = this.#provisional.get(key);
    if (publicId === undefined) {
      publicId = newSortableId('acc');
      this.#provisional.set(key, publicId);
    }
    return { publicId, slot: -1 };
  }

  /**
   * An event of a new account (account() gave it an acc_ id) was not stored: another had stored
   * it first (`already_scored`). Its id is forgotten, as recording the event would have done: an
   * erasure between the two would otherwise leave the external id here.
   */
  notStored(tenantId: string, environment: Environment, externalId: string): void {
    this.#provisional.delete(provisionalKey(tenantId, environment, externalId));
  }

  /** An event's signal values as the hot state takes them. */
  eventSignals(identifiers: readonly StoredIdentifier[]): EventSignals {
    const signals = new EventSignals(identifiers.length);
    const words = this.#words;
    for (const identifier of identifiers) {
      keyWords(identifier.hash, words);
      signals.add(kTypes[identifier.type], words, 0, identifier.masked);
    }
    return signals;
  }

  /** Whether the account (-1: not stored yet) was used from the project before. */
  usedFrom(account: number, projectId: string): boolean {
    return account >= 0 && this.#state.usedBy(account, this.#project(projectId));
  }

  /** The `links` signal of an event (account -1: none, or not stored yet). */
  links(space: number, account: number, signals: EventSignals, now: number): LinkSignals {
    return this.#state.linkSignals(space, account, signals, now);
  }

  /** The `account` signal of an event's account (-1: not stored yet). */
  accountSignals(account: number, now: number): AccountSignals {
    const signals = this.#state.accountSignals(account, now);
    if (!signals.known) return signals;
    return { ...signals, labelled_fraud: this.#labelledFraud.get(account) ?? 0 };
  }

  /**
   * A scored event without an account was committed, the `order`-th scored: it has no rows, but the
   * next batch's stamp may pass it, so that a stretch of such events does not hold the stamp's
   * from_seq (where erasures and a start read the log from) until the next event with an account.
   */
  scoredWithoutAccount(order: number): void {
    this.#rows.advance(order);
  }

  /**
   * A scored event of the account was committed (persistScoredEvent), as the writer stored it,
   * the `order`-th scored, at row `seq`; its rows (the account's counts and list of seqs, the
   * values it recorded, the links it made) wait for the next batch. `identifiers`: the event's
   * values, as `signals` holds them. `wasNew`: the event's account had no number when it was
   * scored (its acc_ id was provisional). `counted`: a replayed event that the account's row
   * already counts (and lists).
   */
  recorded(
    space: number, tenantId: string, environment: Environment, projectId: string, externalId: string, publicId: string, decision: Decision, now: number,
    signals: EventSignals, identifiers: readonly StoredIdentifier[], order: number, seq: number, wasNew: boolean, counted = false,
  ): StateError | null {
    // The account is in memory now (or a concurrent event put it there): its provisional id is done with.
    if (wasNew) this.#provisional.delete(provisionalKey(tenantId, environment, externalId));
    const state = this.#state;
    const changes = this.#changes;
    const outcome = state.recordEvent(space, this.#project(projectId), externalId, decision, now, signals, publicId, changes, counted);
    this.#rows.advance(order);
    if (!outcome.ok) {
      // Its counts are not recorded, but erasure must still find the event: a row of its seq only.
      if (!counted) this.#rows.eventSeq(publicId, seq);
      return outcome.error;
    }
    const account = outcome.account;
    const accountId = state.publicId(account);
    const rows = this.#rows;
    const counts = state.accountCounts(account);
    if (!counted) rows.account(accountId, counts.lastSeenAt, counts.events, counts.blocks, counts.reviews, order, seq);
    for (let k = 0; k < changes.values.length; k++) {
      const value = identifiers[changes.values[k]!]!;
      rows.signal(tenantId, environment, value.type, value.hash, accountId, value.masked, changes.valuesFirstSeen[k]!, now);
    }
    if (changes.linkOthers.length === 0 && !changes.newProject) return null;
    const ownProjects = this.#projectList(account);
    for (let k = 0; k < changes.linkOthers.length; k++) {
      const other = changes.linkOthers[k]!;
      const value = identifiers[changes.linkValues[k]!]!;
      const type = value.type === 'ip' ? 'ip_24h' : value.type;
      const otherId = state.publicId(other);
      rows.link(accountId, type, otherId, state.externalId(other), this.#projectList(other), value.masked, now);
      rows.link(otherId, type, accountId, externalId, ownProjects, value.masked, now);
    }
    // Links to the account say which projects used it.
    if (changes.newProject && !outcome.created) {
      for (const { other, type } of state.linkedAccounts(account)) rows.linkProjects(state.publicId(other), kLinkTypeNames[type], accountId, ownProjects);
    }
    return null;
  }

  /** The rows to write (derived-rows.ts take), and the stamp they go from. */
  takeRows(): { readonly batch: DerivedRowBatch; readonly stampedBefore: number } | null {
    const batch = this.#rows.take();
    return batch === null ? null : { batch, stampedBefore: this.#rows.stampedBefore };
  }

  /** The last batch taken could not be written (derived-rows.ts restore). */
  restoreRows(batch: DerivedRowBatch): void {
    this.#rows.restore(batch);
  }

  /** What the state holds, and its bytes by part (for /metrics). */
  get stateStats(): HotStateStats {
    return this.#state.stats;
  }

  /** Rows waiting to be written. */
  get waitingRows(): number {
    return this.#rows.size;
  }

  /**
   * The account (of the space and external id) is about to be erased: its rows, and links to it,
   * wait until erased (dropped) or releaseRows (the erasure failed). Returns its acc_ id, its
   * links ([other account's acc_ id, link type as account_links names it]) and where its signal
   * rows are, or null.
   */
  holdRows(tenantId: string, environment: Environment, externalId: string): HeldAccount | null {
    const state = this.#state;
    const account = state.findAccount(this.space(tenantId, environment), externalId);
    if (account < 0) return null;
    const accountId = state.publicId(account);
    this.#rows.hold(accountId);
    const links = state.linkedAccounts(account).map(({ other, type }) => [state.publicId(other), kLinkTypeNames[type]] as const);
    return { accountId, links, signalFirstSeens: state.signalFirstSeens(account) };
  }

  releaseRows(accountId: string): void {
    this.#rows.release(accountId);
  }

  /** The acc_ id of the account the id names for a project (as linksJson reads it), or null. */
  accountNamed(tenantId: string, environment: Environment, projectId: string, id: string): string | null {
    const account = this.#state.resolve(this.space(tenantId, environment), this.#project(projectId), id);
    return account < 0 ? null : this.#state.publicId(account);
  }

  /**
   * GET /v1/accounts/{id}/links for a project (accounts-service.ts): the data as JSON text, or
   * null when the id names no account the project used (an acc_ id, else an external id).
   */
  linksJson(tenantId: string, environment: Environment, projectId: string, id: string): string | null {
    const project = this.#project(projectId);
    const account = this.#state.resolve(this.space(tenantId, environment), project, id);
    return account < 0 ? null : this.#state.linksJson(account, project);
  }

  /** The account was erased (committed): nothing of it is left here, and its next event starts a new account. */
  erased(tenantId: string, environment: Environment, externalId: string): void {
    this.#provisional.delete(provisionalKey(tenantId, environment, externalId));
    const account = this.#state.findAccount(this.space(tenantId, environment), externalId);
    if (account < 0) return;
    this.#labelledFraud.delete(account);
    this.#rows.drop(this.#state.publicId(account));
    this.#state.erase(account);
  }

  /** A case or a label of the account changed (committed): its fraud mark and fraud labels are read again. */
  refresh(publicId: string): void {
    const account = this.#state.findByPublicId(publicId);
    if (account < 0) return;
    const row = this.#refreshRow.get(publicId);
    if (row === undefined) return;
    this.#state.setFraud(account, row.fraud_confirmed === 1);
    if (row.labelled_fraud > 0) this.#labelledFraud.set(account, row.labelled_fraud);
    else this.#labelledFraud.delete(account);
  }

  /** The number of a (tenant, environment): accounts and signal values never cross it. */
  space(tenantId: string, environment: Environment): number {
    const key = `${tenantId}\u0000${environment}`;
    let space = this.#spaces.get(key);
    if (space === undefined) {
      space = this.#spaces.size;
      this.#spaces.set(key, space);
    }
    return space;
  }

  #project(projectId: string): number {
    let project = this.#projects.get(projectId);
    if (project === undefined) {
      project = this.#projects.size;
      this.#projects.set(projectId, project);
      this.#projectIds.push(projectId);
    }
    return project;
  }

  /** The projects that used the account as account_links.other_projects keeps them: ",prj_a,prj_b,". */
  #projectList(account: number): string {
    return `,${this.#state.projectsOf(account).map((project) => this.#projectIds[project]!).sort().join(',')},`;
  }
}

function provisionalKey(tenantId: string, environment: Environment, externalId: string): string {
  return `${tenantId}\u0000${environment}\u0000${externalId}`;
}

/** base64url digit values by character code (-1: not a digit). */
const kBase64Url = (() => {
  const table = new Int8Array(128).fill(-1);
  const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let i = 0; i < digits.length; i++) table[digits.charCodeAt(i)] = i;
  return table;
})();

/**
 * The first 128 bits of a stored keyed hash (base64url of 32 bytes) as four little-endian words,
 * decoded in place: this runs for every signal value of every event, where Buffer.from and its
 * allocation cost more than the decoding.
 */
export function keyWords(hash: string, out: Uint32Array): void {
  let word = 0;
  let bytes = 0;
  let bits = 0;
  let carry = 0;
  for (let i = 0; word < 4; i++) {
    carry = (carry << 6) | kBase64Url[hash.charCodeAt(i)]!;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      const byte = (carry >>> bits) & 0xff;
      out[word] = bytes === 0 ? byte : out[word]! | (byte << (8 * bytes));
      if (++bytes === 4) {
        out[word] = out[word]! >>> 0;
        bytes = 0;
        word++;
      }
    }
  }
}

function check(outcome: number | StateError | null, what: string): void {
  if (isStateError(outcome)) throw loadError(what, outcome.message);
}

function loadError(what: string, why: string): StateLoadError {
  return new StateLoadError(`the accounts in memory could not be loaded (${what}): ${why}`);
}
