// The server's accounts, signal values and links in memory (DESIGN §8, docs/pipeline.md "Hot
// state"): what the rules read as `links` and `account` is answered here, on the HTTP thread that
// owns it, instead of by SQL in the rule workers. Loaded at start from the tables the writer keeps
// (accounts, account_projects, account_signals, account_links, event_labels); kept in step after
// each commit that changes them: a scored event (recorded), an erasure (erased), a case or a label
// (refreshed from its row). The tables stay the durable truth; this is their index in memory.
//
// Signal values are keyed by the first 128 bits of their stored keyed hash (HMAC-SHA256 under the
// install secret, account_signals.signal_hash), so the rows load without the raw values and an
// event's values are found with the hashes the writer stores.
import type { Statement } from 'better-sqlite3';
import type { Environment } from '../auth/api-keys.js';
import { newId } from '../shared/ids.js';
import type { SignalType as SignalTypeName } from '../signals/keyed-hash.js';
import type { StoredIdentifier } from '../signals/stored-identifiers.js';
import type { AccountSignals, LinkSignals } from '../signals/state-signals.js';
import { EventSignals, HotState, SignalType, type Decision } from '../state/hot-state.js';
import type { KeyHasher } from '../state/keys.js';
import { isStateError, type StateError } from '../state/state-error.js';
import type { Db } from '../store/database.js';

const kTypes: Readonly<Record<SignalTypeName, SignalType>> = {
  email: SignalType.Email, phone: SignalType.Phone, fp: SignalType.Fp, ip: SignalType.Ip, card: SignalType.Card,
};
const kLinkTypes: Readonly<Record<string, SignalType>> = { ...kTypes, ip_24h: SignalType.Ip };
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
  readonly ms: number;
}

export class StateLoadError extends Error {}

/** A row of account_signals: tenant, environment, type, hash, account, mask, first and last seen. */
type SignalRow = [string, Environment, SignalTypeName, string, string, string, number, number];

export class HotAccounts {
  readonly #state: HotState;
  readonly #spaces = new Map<string, number>();
  readonly #projects = new Map<string, number>();
  /** Events labelled fraud per account number (account.labelled_fraud); only accounts with some. */
  readonly #labelledFraud = new Map<number, number>();
  readonly #provisional = new Map<string, string>();
  readonly #words = new Uint32Array(4);
  readonly #refreshRow: Statement<[string], { fraud_confirmed: number; labelled_fraud: number }>;

  private constructor(readDb: Db, hasher: KeyHasher) {
    this.#state = new HotState({ hasher, newPublicId: () => newId('acc') });
    this.#refreshRow = readDb.prepare(
      `SELECT fraud_confirmed, (SELECT count(*) FROM event_labels l WHERE l.account_id = a.account_id AND l.label = 'fraud') AS labelled_fraud
       FROM accounts a WHERE account_id = ?`,
    );
  }

  /** Loads every account, signal value and link of the store. Throws StateLoadError when a row does not fit. */
  static load(readDb: Db, hasher: KeyHasher): { accounts: HotAccounts; counts: LoadCounts } {
    const started = performance.now();
    const hot = new HotAccounts(readDb, hasher);
    const state = hot.#state;
    const counts = { accounts: 0, signals: 0, links: 0 };
    readDb.transaction(() => {
      const accounts = readDb.prepare(
        'SELECT account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews, fraud_confirmed FROM accounts',
      ).raw().iterate() as IterableIterator<[string, string, Environment, string, number, number, number, number, number, number]>;
      for (const [publicId, tenantId, environment, externalId, createdAt, lastSeenAt, events, blocks, reviews, fraud] of accounts) {
        const space = hot.space(tenantId, environment);
        check(state.loadAccount(space, externalId, publicId, createdAt, lastSeenAt, events, blocks, reviews, fraud === 1), `account ${publicId}`);
        counts.accounts++;
      }
      const projects = readDb.prepare('SELECT account_id, project_id FROM account_projects').raw().iterate() as IterableIterator<[string, string]>;
      for (const [publicId, projectId] of projects) {
        const account = state.findByPublicId(publicId);
        if (account >= 0) state.addProject(account, hot.#project(projectId));
      }
      // In the table's key order the holders of one value come together; each value's holders go
      // in by ascending last seen, so that each goes to the head of the value's list at once.
      const signals = readDb.prepare(
        `SELECT tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen FROM account_signals
         ORDER BY tenant_id, environment, signal_type, signal_hash`,
      ).raw().iterate() as IterableIterator<SignalRow>;
      let value: SignalRow[] = [];
      const flush = (): void => {
        value.sort((x, y) => x[7] - y[7]);
        for (const [tenantId, environment, type, hash, publicId, masked, firstSeen, lastSeen] of value) {
          const account = state.findByPublicId(publicId);
          if (account < 0) continue;
          keyWords(hash, hot.#words);
          check(state.loadHolder(hot.space(tenantId, environment), account, kTypes[type], hot.#words, 0, masked, firstSeen, lastSeen), `signal of ${publicId}`);
          counts.signals++;
        }
        value = [];
      };
      for (const row of signals) {
        const first = value[0];
        if (first !== undefined && (first[3] !== row[3] || first[2] !== row[2] || first[1] !== row[1] || first[0] !== row[0])) flush();
        value.push(row);
      }
      flush();
      // Both directions of a link are written together with the same times: one row per pair.
      const links = readDb.prepare(
        'SELECT account_id, signal_type, other_account_id, masked, first_seen, last_seen FROM account_links WHERE account_id < other_account_id',
      ).raw().iterate() as IterableIterator<[string, string, string, string, number, number]>;
      for (const [publicId, type, otherId, masked, firstSeen, lastSeen] of links) {
        const a = state.findByPublicId(publicId);
        const b = state.findByPublicId(otherId);
        if (a < 0 || b < 0) continue;
        check(state.loadLink(a, b, kLinkTypes[type]!, masked, firstSeen, lastSeen), `link of ${publicId}`);
        counts.links++;
      }
      const labelled = readDb.prepare(
        "SELECT account_id, count(*) FROM event_labels WHERE label = 'fraud' AND account_id IS NOT NULL GROUP BY account_id",
      ).raw().iterate() as IterableIterator<[string, number]>;
      for (const [publicId, count] of labelled) {
        const account = state.findByPublicId(publicId);
        if (account >= 0) hot.#labelledFraud.set(account, count);
      }
    })();
    return { accounts: hot, counts: { ...counts, ms: performance.now() - started } };
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
      publicId = newId('acc');
      if (this.#provisional.size >= kMaxProvisional) this.#provisional.delete(this.#provisional.keys().next().value!);
      this.#provisional.set(key, publicId);
    }
    return { publicId, slot: -1 };
  }

  /** An event's signal values as the hot state takes them. */
  eventSignals(identifiers: readonly StoredIdentifier[]): EventSignals {
    const signals = new EventSignals();
    const words = this.#words;
    for (const identifier of identifiers) {
      keyWords(identifier.hash, words);
      signals.add(kTypes[identifier.type], words, 0, identifier.masked);
    }
    return signals;
  }

  /**
   * The event's values the store has to write for the account (slot -1: not stored yet): those it
   * never used or last used an hour or more ago. The rest would change nothing in the store
   * (its recordSignal skips them too), so they are left out of the event's record.
   */
  dueIdentifiers(space: number, slot: number, identifiers: readonly StoredIdentifier[], signals: EventSignals, now: number): StoredIdentifier[] {
    const due: StoredIdentifier[] = [];
    for (let i = 0; i < identifiers.length; i++) if (this.#state.isDue(space, slot, signals, i, now)) due.push(identifiers[i]!);
    return due;
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
   * A scored event of the account was committed (persistScoredEvent), as the writer stored it.
   * `wasNew`: the event's account had no number when it was scored (its acc_ id was provisional).
   */
  recorded(
    space: number, tenantId: string, environment: Environment, projectId: string, externalId: string, publicId: string, decision: Decision, now: number,
    signals: EventSignals, wasNew: boolean,
  ): StateError | null {
    // The account is in memory now (or a concurrent event put it there): its provisional id is done with.
    if (wasNew) this.#provisional.delete(provisionalKey(tenantId, environment, externalId));
    const outcome = this.#state.recordEvent(space, this.#project(projectId), externalId, decision, now, signals, publicId);
    return outcome.ok ? null : outcome.error;
  }

  /** The account was erased (committed): nothing of it is left here, and its next event starts a new account. */
  erased(tenantId: string, environment: Environment, externalId: string): void {
    this.#provisional.delete(provisionalKey(tenantId, environment, externalId));
    const account = this.#state.findAccount(this.space(tenantId, environment), externalId);
    if (account < 0) return;
    this.#labelledFraud.delete(account);
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
    }
    return project;
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
  if (isStateError(outcome)) throw new StateLoadError(`the accounts in memory could not be loaded (${what}): ${outcome.message}`);
}
