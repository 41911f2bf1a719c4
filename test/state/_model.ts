// The reference for the hot state: the SQL that src/scoring/event-store.ts ran per event before
// the rows were derived from memory (git history: persistScoredEvent, recordSignal), the SQL that answered the `links` and `account` signals before they came from
// memory (git history of src/signals/stored-signals.ts) and src/accounts/accounts-service.ts (the links route, eraseAccount), followed literally with Maps
// of rows — account_signals and account_links rows with their own masks and times, both
// directions of a link as two rows, orderings by sorting. Slow and plain on purpose.
//
// Where SQL leaves an order open, the model fixes the one the hot state promises:
//   - "most recent holders" sorts by last seen, then by the latest write (SQL: ORDER BY last_seen
//     DESC, ties in index order);
//   - the `links` signal examines the 1000 most recent holders of a value (SQL: LIMIT 1000 with
//     no ORDER BY, the first 1000 by account id) — see docs/pipeline.md.

import type { LinkSignals } from '../../src/signals/state-signals.js';

export type ModelType = 'email' | 'phone' | 'fp' | 'ip' | 'card';
export type ModelDecision = 'allow' | 'review' | 'block';

export interface ModelSignal {
  readonly type: ModelType;
  /** The normalised value (the model keys rows by it; the hot state by its keyed hash). */
  readonly value: string;
  readonly masked: string;
}

interface AccountRow {
  readonly accountId: string;
  readonly space: number;
  readonly externalId: string;
  readonly createdAt: number;
  lastSeenAt: number;
  events: number;
  blocks: number;
  reviews: number;
  fraud: boolean;
  readonly projects: Set<number>;
}

interface SignalRow {
  readonly masked: string;
  readonly firstSeen: number;
  lastSeen: number;
  /** When the row was last written, in writes: breaks ties of last seen. */
  written: number;
}

interface LinkRow {
  masked: string;
  readonly firstSeen: number;
  lastSeen: number;
}

export interface ModelRouteEntry {
  signal_type: string;
  account_public_id: string;
  external_account_id: string;
  masked_signal: string;
  first_seen: string;
  last_seen: string;
}

export interface ModelErasure {
  readonly signals: number;
  readonly links: number;
  /** `${type}:${value}` of each value the account held. */
  readonly values: string[];
  /** How many of those no one holds afterwards. */
  readonly dropped: number;
}

/** The rows the model holds, as the tables hold them (dump()). */
export interface ModelRows {
  /** accounts, with the projects of account_projects in the order they were first used. */
  readonly accounts: readonly {
    readonly accountId: string; readonly space: number; readonly externalId: string; readonly createdAt: number; readonly lastSeenAt: number;
    readonly events: number; readonly blocks: number; readonly reviews: number; readonly fraud: boolean; readonly projects: readonly number[];
  }[];
  /** account_signals: one per (value, account). */
  readonly signals: readonly {
    readonly space: number; readonly type: ModelType; readonly value: string; readonly accountId: string;
    readonly masked: string; readonly firstSeen: number; readonly lastSeen: number;
  }[];
  /** account_links: both directions of each link. */
  readonly links: readonly {
    readonly accountId: string; readonly linkType: string; readonly other: string; readonly masked: string; readonly firstSeen: number; readonly lastSeen: number;
  }[];
}

const kRefreshMs = 3_600_000;
const kDayMs = 86_400_000;
const kMaxLinksPerSignal = 100;
const kMaxLinkedPerSignal = 1000;

const linkTypeOf = (type: ModelType): string => (type === 'ip' ? 'ip_24h' : type);

export class Model {
  readonly accounts = new Map<string, AccountRow>();
  readonly #byExternal = new Map<string, string>();
  /** account_signals: `${space}|${type}|${value}` → account id → row. */
  readonly #signals = new Map<string, Map<string, SignalRow>>();
  /** account_links: account id → `${linkType}|${other}` → row. */
  readonly #links = new Map<string, Map<string, LinkRow>>();
  #writes = 0;

  accountOf(space: number, externalId: string): string | null {
    return this.#byExternal.get(`${space}|${externalId}`) ?? null;
  }

  /** persistScoredEvent with an account; `newId` names the account if it is created. Its id. */
  record(space: number, project: number, externalId: string, decision: ModelDecision, now: number, signals: readonly ModelSignal[], newId: () => string): string {
    const blocks = decision === 'block' ? 1 : 0;
    const reviews = decision === 'review' ? 1 : 0;
    let accountId = this.accountOf(space, externalId);
    if (accountId === null) {
      accountId = newId();
      this.accounts.set(accountId, { accountId, space, externalId, createdAt: now, lastSeenAt: now, events: 1, blocks, reviews, fraud: false, projects: new Set() });
      this.#byExternal.set(`${space}|${externalId}`, accountId);
    } else {
      const row = this.accounts.get(accountId)!;
      row.lastSeenAt = Math.max(row.lastSeenAt, now);
      row.events++;
      row.blocks += blocks;
      row.reviews += reviews;
    }
    this.accounts.get(accountId)!.projects.add(project);
    for (const signal of signals) this.#recordSignal(space, accountId, signal, now);
    return accountId;
  }

  #recordSignal(space: number, accountId: string, signal: ModelSignal, now: number): void {
    const key = `${space}|${signal.type}|${signal.value}`;
    let rows = this.#signals.get(key);
    if (rows === undefined) this.#signals.set(key, (rows = new Map()));
    const existing = rows.get(accountId);
    if (existing === undefined) {
      rows.set(accountId, { masked: signal.masked, firstSeen: now, lastSeen: now, written: ++this.#writes });
    } else if (now - existing.lastSeen >= kRefreshMs) {
      existing.lastSeen = now;
      existing.written = ++this.#writes;
    } else {
      return;
    }
    const since = signal.type === 'ip' ? now - kDayMs : -Infinity;
    const linkType = linkTypeOf(signal.type);
    for (const other of this.#mostRecent(rows, accountId, since, kMaxLinksPerSignal)) {
      this.#upsertLink(accountId, linkType, other, signal.masked, now);
      this.#upsertLink(other, linkType, accountId, signal.masked, now);
    }
  }

  /** Other holders, last seen ≥ since, by last seen then latest write, newest first; at most `limit`. */
  #mostRecent(rows: Map<string, SignalRow>, self: string, since: number, limit: number): string[] {
    return [...rows]
      .filter(([id, row]) => id !== self && row.lastSeen >= since)
      .sort(([, a], [, b]) => b.lastSeen - a.lastSeen || b.written - a.written)
      .slice(0, limit)
      .map(([id]) => id);
  }

  #upsertLink(accountId: string, linkType: string, other: string, masked: string, now: number): void {
    let rows = this.#links.get(accountId);
    if (rows === undefined) this.#links.set(accountId, (rows = new Map()));
    const key = `${linkType}|${other}`;
    const row = rows.get(key);
    if (row === undefined) {
      rows.set(key, { masked, firstSeen: now, lastSeen: now });
    } else {
      row.lastSeen = Math.max(row.lastSeen, now);
      row.masked = masked;
    }
  }

  /** The `links` signal as the SQL computed it (before it came from memory). */
  linkSignals(space: number, accountId: string | null, signals: readonly ModelSignal[], now: number): LinkSignals {
    const self = accountId ?? '';
    const byType = new Map<string, Set<string>>(['email', 'phone', 'fp', 'ip_24h', 'card'].map((type) => [type, new Set()]));
    const all = new Map<string, boolean>();
    const add = (type: string, other: string): void => {
      byType.get(type)!.add(other);
      const row = this.accounts.get(other)!;
      all.set(other, row.fraud || row.blocks > 0);
    };
    for (const signal of signals) {
      const rows = this.#signals.get(`${space}|${signal.type}|${signal.value}`);
      if (rows === undefined) continue;
      const since = signal.type === 'ip' ? now - kDayMs : -Infinity;
      for (const other of this.#mostRecent(rows, self, since, kMaxLinkedPerSignal)) add(linkTypeOf(signal.type), other);
    }
    if (accountId !== null) {
      for (const key of this.#links.get(accountId)?.keys() ?? []) {
        const [type, other] = key.split('|') as [string, string];
        add(type, other);
      }
    }
    return {
      email: byType.get('email')!.size, phone: byType.get('phone')!.size, fp: byType.get('fp')!.size, ip_24h: byType.get('ip_24h')!.size,
      card: byType.get('card')!.size, total: all.size, fraud: [...all.values()].filter(Boolean).length,
    };
  }

  /** The `account` signal as the SQL computed it. */
  accountSignals(accountId: string | null, now: number): Record<string, unknown> {
    const row = accountId === null ? undefined : this.accounts.get(accountId);
    if (row === undefined) return { known: false };
    return { known: true, age_days: Math.max(0, (now - row.createdAt) / kDayMs), events: row.events, blocks: row.blocks, reviews: row.reviews, fraud_confirmed: row.fraud };
  }

  /** The links route's data: links whose other account `project` used, by type then other id. */
  route(accountId: string, project: number): { account_public_id: string; external_account_id: string; links: ModelRouteEntry[] } {
    const own = this.accounts.get(accountId)!;
    const links: ModelRouteEntry[] = [];
    for (const [key, row] of this.#links.get(accountId) ?? []) {
      const [type, other] = key.split('|') as [string, string];
      const otherRow = this.accounts.get(other)!;
      if (!otherRow.projects.has(project)) continue;
      links.push({
        signal_type: type, account_public_id: other, external_account_id: otherRow.externalId, masked_signal: row.masked,
        first_seen: new Date(row.firstSeen).toISOString(), last_seen: new Date(row.lastSeen).toISOString(),
      });
    }
    const binary = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    links.sort((a, b) => binary(a.signal_type, b.signal_type) || binary(a.account_public_id, b.account_public_id));
    return { account_public_id: accountId, external_account_id: own.externalId, links };
  }

  /** eraseAccount's part about accounts, signals and links. */
  erase(accountId: string): ModelErasure {
    const row = this.accounts.get(accountId)!;
    let signals = 0;
    let dropped = 0;
    const values: string[] = [];
    for (const [key, rows] of this.#signals) {
      if (!rows.delete(accountId)) continue;
      signals++;
      values.push(key.slice(key.indexOf('|') + 1).replace('|', ':'));
      if (rows.size === 0) {
        this.#signals.delete(key);
        dropped++;
      }
    }
    const own = this.#links.get(accountId) ?? new Map<string, LinkRow>();
    for (const key of own.keys()) {
      const [type, other] = key.split('|') as [string, string];
      this.#links.get(other)!.delete(`${type}|${accountId}`);
    }
    this.#links.delete(accountId);
    this.accounts.delete(accountId);
    this.#byExternal.delete(`${row.space}|${row.externalId}`);
    return { signals, links: own.size, values: values.sort(), dropped };
  }

  setFraud(accountId: string, fraud: boolean): void {
    this.accounts.get(accountId)!.fraud = fraud;
  }

  /** Every row, copied (what a load at start reads). */
  dump(): ModelRows {
    const accounts = [...this.accounts.values()].map((row) => ({
      accountId: row.accountId, space: row.space, externalId: row.externalId, createdAt: row.createdAt, lastSeenAt: row.lastSeenAt,
      events: row.events, blocks: row.blocks, reviews: row.reviews, fraud: row.fraud, projects: [...row.projects],
    }));
    const signals: ModelRows['signals'][number][] = [];
    for (const [key, rows] of this.#signals) {
      const [space, type] = key.split('|', 2) as [string, ModelType];
      const value = key.slice(space.length + type.length + 2);
      for (const [accountId, row] of rows) signals.push({ space: Number(space), type, value, accountId, masked: row.masked, firstSeen: row.firstSeen, lastSeen: row.lastSeen });
    }
    const links: ModelRows['links'][number][] = [];
    for (const [accountId, rows] of this.#links) {
      for (const [key, row] of rows) {
        const [linkType, other] = key.split('|') as [string, string];
        links.push({ accountId, linkType, other, masked: row.masked, firstSeen: row.firstSeen, lastSeen: row.lastSeen });
      }
    }
    return { accounts, signals, links };
  }

  /** Rows held: account_signals, account_links (both directions), and values with a holder. */
  get counts(): { holders: number; linkRows: number; values: number } {
    let holders = 0;
    for (const rows of this.#signals.values()) holders += rows.size;
    let linkRows = 0;
    for (const rows of this.#links.values()) linkRows += rows.size;
    return { holders, linkRows, values: this.#signals.size };
  }
}
