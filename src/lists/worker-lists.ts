// The lists as a rule worker sees them: the ListLookup that compiled rules call through in_list().
//
// Each list a ruleset reads is loaded from SQLite into a ListTable the first time an event needs
// it, then kept up to date from the change log (list_changes) instead of being read again: before
// the first lookup of an event, a worker whose copy is behind the lists clock (lists-clock.ts)
// applies the changes it lacks. A worker further behind than the log reaches (it is pruned after a
// few minutes) drops its copies and loads them again. A ruleset without in_list() never calls in,
// so lists cost it nothing.
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { ListLookup } from '../../compiler/index.js';
import { sipKey } from '../state/siphash.js';
import type { Db } from '../store/database.js';
import { kLookupUnits, type ListKind } from './list-kinds.js';
import { KeyHasher, ListTable } from './list-table.js';
import { ListsClock } from './lists-clock.js';

interface ListRef {
  readonly lid: number;
  readonly kind: ListKind;
}

interface LoadedList {
  readonly table: ListTable;
  /** The list_clock.seq the items were read at: later changes apply, earlier ones are in. */
  readonly loadedSeq: number;
}

interface ChangeRow {
  seq: number;
  lid: number;
  op: 'create' | 'drop' | 'add' | 'remove' | 'reload';
  value: string | null;
  expires_at: number | null;
}

/** Changes read per statement while catching up. */
const kChangeBatch = 5_000;
/** Items read per statement while loading a list. */
const kLoadPage = 10_000;

/** An event's user.country, as forEvent takes it (what national phone numbers on lists are read in). */
export function userCountry(event: { readonly user?: unknown }): string | null {
  const country = (event.user as { country?: unknown } | undefined)?.country;
  return typeof country === 'string' ? country : null;
}

export class WorkerLists implements ListLookup {
  readonly #db: Db;
  readonly #clock: ListsClock;
  readonly #hasher = new KeyHasher(sipKey(randomBytes(16)));
  readonly #clockRow: Statement<[], { seq: number; pruned_through: number }>;
  readonly #changes: Statement<[number, number], ChangeRow>;
  readonly #listRef: Statement<[string, string], ListRef>;
  readonly #items: Statement<[number, string, number], [string, number | null]>;
  readonly #count: Statement<[number], { item_count: number }>;
  /** project → list_id → its list, or null when the project has none of that name. */
  readonly #names = new Map<string, Map<string, ListRef | null>>();
  readonly #tables = new Map<number, LoadedList>();
  #applied = 0;
  // The event being evaluated (forEvent).
  #projectId = '';
  #now = 0;
  #country: string | null = null;
  #current: Map<string, ListRef | null> | null = null;
  #synced = false;
  /**
   * Why the lists could not be read during the current event (SQLite failed), or null. Rules
   * cannot tell a lookup that failed from one that found nothing, so the worker checks this after
   * the rules ran and scores nothing then (pool/worker.ts).
   */
  failure: string | null = null;

  constructor(db: Db, clock: ListsClock) {
    this.#db = db;
    this.#clock = clock;
    this.#clockRow = db.prepare('SELECT seq, pruned_through FROM list_clock WHERE id = 1');
    this.#changes = db.prepare('SELECT seq, lid, op, value, expires_at FROM list_changes WHERE seq > ? ORDER BY seq LIMIT ?');
    this.#listRef = db.prepare('SELECT lid, kind FROM lists WHERE project_id = ? AND list_id = ? AND deleted_at IS NULL');
    this.#items = db.prepare<[number, string, number], [string, number | null]>(
      'SELECT value, expires_at FROM list_items WHERE lid = ? AND value > ? ORDER BY value LIMIT ?',
    ).raw(true) as unknown as Statement<[number, string, number], [string, number | null]>;
    this.#count = db.prepare('SELECT item_count FROM lists WHERE lid = ?');
  }

  /**
   * Sets the event the next lookups are for: its project (lists are per project), its `now`
   * (expired items do not match) and its user.country (national phone numbers). Costs three
   * assignments; nothing is read until a rule looks something up.
   */
  forEvent(projectId: string, now: number, country: string | null): this {
    if (projectId !== this.#projectId) {
      this.#projectId = projectId;
      this.#current = null;
    }
    this.#now = now;
    this.#country = country;
    this.#synced = false;
    this.failure = null;
    return this;
  }

  has(listId: string, value: string): boolean | null {
    try {
      return this.#has(listId, value);
    } catch (error) {
      this.failure ??= (error as Error).message ?? String(error);
      return null;
    }
  }

  /** Budget units of one lookup in `listId` (its kind's kLookupUnits); 0 for a list it does not know. */
  lookupUnits(listId: string): number {
    try {
      const ref = this.#ref(listId);
      return ref === null ? 0 : kLookupUnits[ref.kind];
    } catch (error) {
      this.failure ??= (error as Error).message ?? String(error);
      return 0;
    }
  }

  #has(listId: string, value: string): boolean | null {
    const ref = this.#ref(listId);
    if (ref === null) return null;
    const loaded = this.#tables.get(ref.lid) ?? this.#load(ref);
    return loaded.table.has(value, this.#now, this.#country);
  }

  /** The project's list `listId` as of this event (lists changed since the last event applied first). */
  #ref(listId: string): ListRef | null {
    if (!this.#synced) {
      this.#sync();
      this.#synced = true;
    }
    let names = this.#current;
    if (names === null) {
      names = this.#names.get(this.#projectId) ?? new Map<string, ListRef | null>();
      this.#names.set(this.#projectId, names);
      this.#current = names;
    }
    let ref = names.get(listId);
    if (ref === undefined) {
      ref = this.#listRef.get(this.#projectId, listId) ?? null;
      names.set(listId, ref);
    }
    return ref;
  }

  /** Lists held and their bytes (the bench reports bytes per item from it). */
  stats(): { lists: number; items: number; bytes: number } {
    let items = 0;
    let bytes = 0;
    for (const { table } of this.#tables.values()) {
      items += table.size;
      bytes += table.bytes;
    }
    return { lists: this.#tables.size, items, bytes };
  }

  #sync(): void {
    if (this.#clock.seq <= this.#applied) return;
    // One read transaction: the clock and the changes as of one moment.
    this.#db.transaction(() => {
      const clock = this.#clockRow.get()!;
      if (clock.pruned_through > this.#applied || this.#tables.size === 0) {
        // Nothing held to bring up to date (a worker's first lookup), or changes this worker lacks
        // are gone from the log: start from the lists themselves.
        this.#tables.clear();
        this.#forgetNames();
      } else {
        for (let from = this.#applied; ; ) {
          const rows = this.#changes.all(from, kChangeBatch);
          for (const row of rows) this.#apply(row);
          if (rows.length < kChangeBatch) break;
          from = rows[rows.length - 1]!.seq;
        }
      }
      this.#applied = clock.seq;
    })();
  }

  #apply(row: ChangeRow): void {
    if (row.op === 'create' || row.op === 'drop') this.#forgetNames();
    const loaded = this.#tables.get(row.lid);
    if (loaded === undefined || row.seq <= loaded.loadedSeq) return;
    switch (row.op) {
      case 'add':
        loaded.table.add(row.value!, row.expires_at);
        break;
      case 'remove':
        loaded.table.remove(row.value!);
        break;
      case 'drop':
      case 'reload':
        this.#tables.delete(row.lid);
        break;
    }
  }

  #forgetNames(): void {
    this.#names.clear();
    this.#current = null;
  }

  #load(ref: ListRef): LoadedList {
    return this.#db.transaction((): LoadedList => {
      const loadedSeq = this.#clockRow.get()!.seq;
      const table = new ListTable(ref.kind, this.#hasher, this.#count.get(ref.lid)?.item_count ?? 0);
      // In pages along the primary key: all() is several times cheaper per row than iterate().
      for (let after = ''; ; ) {
        const rows = this.#items.all(ref.lid, after, kLoadPage);
        for (let i = 0; i < rows.length; i++) table.add(rows[i]![0], rows[i]![1]);
        if (rows.length < kLoadPage) break;
        after = rows[rows.length - 1]![0];
      }
      const loaded = { table, loadedSeq };
      this.#tables.set(ref.lid, loaded);
      return loaded;
    })();
  }
}
