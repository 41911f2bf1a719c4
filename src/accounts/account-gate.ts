// Erasure is a barrier (DESIGN §8): per account, scoring and erasure never overlap.
//
//   scoring an event of the account   enter() … leave()   many at once
//   erasing the account               exclusive(fn)       alone: waits for the events being
//                                                          scored or stored, holds back new ones
//
// An event that arrives while the account is being erased waits, and runs once the erasure is
// done (committed and purged; its answer may still wait for webhook deliveries under way): it is
// then the first event of a new account. Everything of the account that entered
// before the erasure has been stored (or refused) by the time the erasure runs, so the erasure sees
// it. Lives on the HTTP thread, which is where scoring and erasure start; pure bookkeeping, no I/O.
import { TransientMap } from '../state/transient-map.js';

interface Entry {
  /** Events of the account between enter() and leave(). */
  active: number;
  /** Set while an erasure holds the account; resolves when it is done. */
  erasing: Promise<void> | null;
  /** Wakes the erasure waiting for `active` to reach 0. */
  drained: (() => void) | null;
}

export class AccountGate {
  readonly #entries = new TransientMap<string, Entry>();

  /** The gate key of an account: accounts are per tenant and environment. */
  static key(tenantId: string, environment: string, externalId: string): string {
    return `${tenantId}\u0000${environment}\u0000${externalId}`;
  }

  /** Resolves once no erasure holds the account; the caller must call leave(key) afterwards. */
  async enter(key: string): Promise<void> {
    for (;;) {
      const entry = this.#entries.get(key);
      if (entry === undefined) {
        this.#entries.set(key, { active: 1, erasing: null, drained: null });
        return;
      }
      if (entry.erasing === null) {
        entry.active++;
        return;
      }
      await entry.erasing;
    }
  }

  leave(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry.active--;
    if (entry.active > 0) return;
    if (entry.drained !== null) entry.drained();
    else if (entry.erasing === null) this.#entries.delete(key);
  }

  /** Runs `fn` once nothing else holds the account, holding back new events until it is done. */
  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let entry = this.#entries.get(key);
    while (entry?.erasing) {
      await entry.erasing;
      entry = this.#entries.get(key);
    }
    if (entry === undefined) {
      entry = { active: 0, erasing: null, drained: null };
      this.#entries.set(key, entry);
    }
    let release!: () => void;
    entry.erasing = new Promise((resolve) => (release = resolve));
    try {
      if (entry.active > 0) await new Promise<void>((resolve) => (entry!.drained = resolve));
      entry.drained = null;
      return await fn();
    } finally {
      entry.erasing = null;
      if (entry.active === 0) this.#entries.delete(key);
      release();
    }
  }

  /** Accounts with events being scored or an erasure running (for tests and /metrics). */
  get size(): number {
    return this.#entries.size;
  }
}
