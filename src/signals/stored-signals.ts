// The `links` and `account` signals, read from the store (schema: migrations/004-accounts.ts).
// Runs in the rule workers on their own read-only connections, so the HTTP thread never waits for
// these reads. Only committed data is seen: an event counts the links and history that exist
// before it.
import type { Database, Statement } from 'better-sqlite3';
import type { SignalType } from './keyed-hash.js';

export interface LinkSignals {
  email: number;
  phone: number;
  fp: number;
  ip_24h: number;
  card: number;
  /** Distinct other accounts linked by any signal. */
  total: number;
  /** Linked accounts with confirmed fraud or a block. */
  fraud: number;
}

export interface AccountSignals {
  known: boolean;
  age_days?: number;
  events?: number;
  blocks?: number;
  reviews?: number;
  fraud_confirmed?: boolean;
  /** The account's events labelled fraud (docs/events.md, "Labels"). */
  labelled_fraud?: number;
}

export interface HashedSignal {
  readonly type: SignalType;
  readonly hash: string;
}

/** Other accounts examined per signal value; beyond it a value is a hub (a shared office IP). */
export const kMaxLinkedPerSignal = 1000;
const kDayMs = 86_400_000;

interface OtherAccount {
  account_id: string;
  fraud_confirmed: number;
  blocks: number;
}

export class StoredSignals {
  readonly #holders: Statement<[string, string, string, string, string], OtherAccount>;
  readonly #recentHolders: Statement<[string, string, string, string, string, number], OtherAccount>;
  readonly #links: Statement<[string], OtherAccount & { signal_type: string }>;
  readonly #account: Statement<[string], { created_at: number; events: number; blocks: number; reviews: number; fraud_confirmed: number; labelled_fraud: number }>;

  constructor(db: Database) {
    const joined = `SELECT s.account_id, a.fraud_confirmed, a.blocks FROM account_signals s JOIN accounts a ON a.account_id = s.account_id
      WHERE s.tenant_id = ? AND s.environment = ? AND s.signal_type = ? AND s.signal_hash = ? AND s.account_id != ?`;
    this.#holders = db.prepare(`${joined} LIMIT ${kMaxLinkedPerSignal}`);
    this.#recentHolders = db.prepare(`${joined} AND s.last_seen >= ? LIMIT ${kMaxLinkedPerSignal}`);
    this.#links = db.prepare(
      `SELECT l.signal_type, l.other_account_id AS account_id, a.fraud_confirmed, a.blocks
       FROM account_links l JOIN accounts a ON a.account_id = l.other_account_id WHERE l.account_id = ?`,
    );
    // labelled_fraud: one range of the labels' account index (migrations/009).
    this.#account = db.prepare(
      `SELECT created_at, events, blocks, reviews, fraud_confirmed,
         (SELECT count(*) FROM event_labels l WHERE l.account_id = a.account_id AND l.label = 'fraud') AS labelled_fraud
       FROM accounts a WHERE account_id = ?`,
    );
  }

  /**
   * Other accounts sharing a signal with this event: those holding one of the event's own signal
   * values (an IP only if used within 24 hours), plus the account's stored links.
   */
  links(tenantId: string, environment: string, accountId: string | null, signals: readonly HashedSignal[], now: number): LinkSignals {
    const self = accountId ?? '';
    const byType: Record<keyof Omit<LinkSignals, 'total' | 'fraud'>, Set<string>> = {
      email: new Set(), phone: new Set(), fp: new Set(), ip_24h: new Set(), card: new Set(),
    };
    const all = new Map<string, boolean>();
    const add = (type: keyof typeof byType, other: OtherAccount): void => {
      byType[type].add(other.account_id);
      all.set(other.account_id, other.fraud_confirmed === 1 || other.blocks > 0);
    };
    for (const signal of signals) {
      const others = signal.type === 'ip'
        ? this.#recentHolders.all(tenantId, environment, signal.type, signal.hash, self, now - kDayMs)
        : this.#holders.all(tenantId, environment, signal.type, signal.hash, self);
      const type = signal.type === 'ip' ? 'ip_24h' : signal.type;
      for (const other of others) add(type, other);
    }
    if (accountId !== null) {
      for (const link of this.#links.all(accountId)) add(link.signal_type as keyof typeof byType, link);
    }
    let fraud = 0;
    for (const flagged of all.values()) if (flagged) fraud++;
    return {
      email: byType.email.size, phone: byType.phone.size, fp: byType.fp.size, ip_24h: byType.ip_24h.size, card: byType.card.size,
      total: all.size, fraud,
    };
  }

  account(accountId: string | null, now: number): AccountSignals {
    if (accountId === null) return { known: false };
    const row = this.#account.get(accountId);
    if (row === undefined) return { known: false };
    return {
      known: true,
      age_days: Math.max(0, (now - row.created_at) / kDayMs),
      events: row.events,
      blocks: row.blocks,
      reviews: row.reviews,
      fraud_confirmed: row.fraud_confirmed === 1,
      labelled_fraud: row.labelled_fraud,
    };
  }
}
