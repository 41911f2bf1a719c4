// Resolves the caller's external_account_id to the account's public id (acc_...), per tenant and
// environment (DESIGN §8: a sandbox project never shares an account with a live one).
//
// An unknown external id gets a new random id at once, before the event that introduces it is
// committed, and the id is cached: concurrent events of the same new account share it, and each
// event's transaction upserts the account row, so whichever commits first creates it (and if that
// event fails, the next one does). A bounded cache keeps memory flat.
import type { Statement } from 'better-sqlite3';
import { newId } from '../shared/ids.js';
import type { Db } from '../store/database.js';

export const kAccountCacheSize = 100_000;

export class AccountDirectory {
  readonly #byExternalId: Statement<[string, string, string], { account_id: string }>;
  readonly #cache = new Map<string, string>();

  constructor(readDb: Db) {
    this.#byExternalId = readDb.prepare('SELECT account_id FROM accounts WHERE tenant_id = ? AND environment = ? AND external_account_id = ?');
  }

  resolve(tenantId: string, environment: string, externalId: string): string {
    const key = `${tenantId}\u0000${environment}\u0000${externalId}`;
    let accountId = this.#cache.get(key);
    if (accountId !== undefined) return accountId;
    accountId = this.#byExternalId.get(tenantId, environment, externalId)?.account_id ?? newId('acc');
    if (this.#cache.size >= kAccountCacheSize) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(key, accountId);
    return accountId;
  }

  /** Drops an erased account's id. */
  forget(tenantId: string, environment: string, externalId: string): void {
    this.#cache.delete(`${tenantId}\u0000${environment}\u0000${externalId}`);
  }
}
