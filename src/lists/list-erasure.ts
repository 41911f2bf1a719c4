// What erasing an account does to lists (docs/lists.md, "Erasure"; docs/accounts.md): every item of
// the environment's lists that holds one of the account's values is removed, with the change-log
// rows that carry it, inside the erasure's transaction. The account's values are those of its
// events, normalised as items are: its external id (account lists), emails, phones, IP addresses,
// device ids and cards, and for `string` lists every string the events carried but those that say
// where or how, not who (kNotThePerson). Ranges, domains, BINs and countries are not one person's
// and stay. The rule workers reload the lists concerned
// (a 'reload' change carries no value), so the erased values are in no file and no memory.
import type { Db } from '../store/database.js';
import type { EventInput } from '../validation/event-input.js';
import { canonicalPhone, normalizeListItem, type ListKind } from './list-kinds.js';
import { logListChanges, listClock } from './list-store.js';

/** Event members kept by erasure (accounts/erasure.ts): not the person's. */
const kKept = new Set(['event_id', 'event_type', 'brand_id', 'async']);
/**
 * Members of the interface's objects that say where or how the person paid, not who they are: a
 * `string` item equal to one of them ("EUR", "card", "GB") is shared by countless accounts, and
 * erasing one of them must not take it off a list for all the others.
 */
const kNotThePerson: Readonly<Record<string, ReadonlySet<string>>> = {
  user: new Set(['country']),
  context: new Set(['country']),
  payment: new Set(['currency', 'method', 'billing_country']),
};
/** Strings nested deeper than this in extras are not looked at (the body is 32 levels at most). */
const kMaxDepth = 32;

/** The values of one account that lists may hold, by kind. */
export class ErasableValues {
  readonly #byKind = new Map<ListKind, Set<string>>();

  constructor(externalId: string) {
    this.#add('account', externalId);
    this.#add('string', externalId);
  }

  /** Adds the values of one of the account's events (before erasure scrubs it). */
  addEvent(event: EventInput): void {
    const user = event.user;
    const context = event.context;
    const payment = event.payment;
    if (typeof user?.email === 'string') this.#add('email', user.email);
    if (typeof user?.phone === 'string') {
      // As signals read it: a national number with the user's country.
      const phone = canonicalPhone(user.phone, typeof user.country === 'string' ? user.country : null);
      if (phone !== null) this.#add('phone', phone);
    }
    if (typeof context?.ip === 'string') this.#add('ip', context.ip);
    if (typeof context?.fp_id === 'string') this.#add('fp', context.fp_id);
    if (typeof payment?.bin === 'string' && typeof payment.last4 === 'string') this.#add('card', `${payment.bin}:${payment.last4}`);
    for (const [name, value] of Object.entries(event)) {
      if (kKept.has(name)) continue;
      const skipped = kNotThePerson[name];
      if (skipped !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [member, item] of Object.entries(value)) if (!skipped.has(member)) this.#strings(item, 1);
      } else {
        this.#strings(value, 0);
      }
    }
  }

  /** The values a list of `kind` may hold (as stored: normalised). */
  of(kind: ListKind): ReadonlySet<string> {
    return this.#byKind.get(kind) ?? new Set();
  }

  /** Every value, of every kind. */
  all(): Set<string> {
    const out = new Set<string>();
    for (const values of this.#byKind.values()) for (const value of values) out.add(value);
    return out;
  }

  #add(kind: ListKind, raw: string): void {
    const normalized = normalizeListItem(kind, raw);
    if (!normalized.ok) return;
    let values = this.#byKind.get(kind);
    if (values === undefined) this.#byKind.set(kind, (values = new Set()));
    values.add(normalized.value);
  }

  #strings(value: unknown, depth: number): void {
    if (depth > kMaxDepth) return;
    if (typeof value === 'string') this.#add('string', value);
    else if (Array.isArray(value)) for (const item of value) this.#strings(item, depth + 1);
    else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) this.#strings(item, depth + 1);
  }
}

export interface ListErasure {
  /** Items removed, in all lists together. */
  readonly removed: number;
  /** The lists (not deleted) items were removed from, with how many each: lists of other projects of the tenant's side too. */
  readonly lists: readonly ErasedFromList[];
  /** The lists clock afterwards. */
  readonly seq: number;
}

export interface ErasedFromList {
  readonly projectId: string;
  readonly listId: string;
  readonly removed: number;
}

/** Inside the erasure's transaction: removes the account's values from the environment's lists. */
export function eraseListValues(db: Db, tenantId: string, environment: string, values: ErasableValues, now: number): ListErasure {
  // Deleted lists too: their items are purged in the background, and until then they are there.
  const lists = db.prepare(
    `SELECT l.lid, l.project_id, l.list_id, l.kind, l.deleted_at FROM lists l JOIN projects p ON p.project_id = l.project_id
     WHERE p.tenant_id = ? AND p.environment = ?`,
  ).all(tenantId, environment) as Array<{ lid: number; project_id: string; list_id: string; kind: ListKind; deleted_at: number | null }>;
  const removeItem = db.prepare('DELETE FROM list_items WHERE lid = ? AND value = ?');
  let removed = 0;
  const touched: ErasedFromList[] = [];
  const reload = new Set<number>();
  for (const list of lists) {
    let fromList = 0;
    for (const value of values.of(list.kind)) fromList += removeItem.run(list.lid, value).changes;
    if (fromList === 0) continue;
    removed += fromList;
    if (list.deleted_at !== null) continue;
    touched.push({ projectId: list.project_id, listId: list.list_id, removed: fromList });
    reload.add(list.lid);
    db.prepare('UPDATE lists SET item_count = item_count - ?, updated_at = ? WHERE lid = ?').run(fromList, now, list.lid);
  }
  // The change log may hold the values too, even of items gone before (added, then removed): one
  // pass over the log (it keeps minutes of changes) takes them out. A worker that had not applied
  // a row taken out reloads the list instead. Rows of a list purged entirely (no lists row) go too,
  // whatever their environment: they serve nobody. (The purge now takes such values out of the
  // log itself; only a database an older build swept still holds them.)
  const lids = JSON.stringify(lists.map((list) => list.lid));
  const all = JSON.stringify([...values.all()]);
  const inLog = `FROM list_changes WHERE (lid IN (SELECT value FROM json_each(?)) OR lid NOT IN (SELECT lid FROM lists)) AND value IN (SELECT value FROM json_each(?))`;
  for (const lid of db.prepare(`SELECT DISTINCT lid ${inLog}`).pluck().all(lids, all) as number[]) reload.add(lid);
  db.prepare(`DELETE ${inLog}`).run(lids, all);
  const live = new Set(lists.filter((list) => list.deleted_at === null).map((list) => list.lid));
  let seq = listClock(db);
  for (const lid of reload) if (live.has(lid)) seq = logListChanges(db, lid, [['reload', null, null]], now);
  return { removed, lists: touched, seq };
}
