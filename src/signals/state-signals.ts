// The `links` and `account` signals: what the rules read of the accounts, signal values and links
// the service has stored (docs/rules.md). Answered from memory by accounts/hot-accounts.ts, from the
// state as of the last commit: an event counts the links and history that exist before it.

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
