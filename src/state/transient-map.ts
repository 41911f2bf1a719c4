// A map for entries that live about as long as one request: the calls waiting for the writer, the
// events in flight. Pure.
//
// Why not a plain Map: V8's Map rebuilds its hash table every few deletions, and keeps each table
// it replaced pointing to its successor (for live iterators). Once a table has been promoted to the
// old generation, the dead tables that follow keep each other — and every value they held — alive
// through each scavenge until the next mark-compact: a long-lived Map with an entry per request
// made every request's objects (its parsed body, its result, the promise chain awaiting it)
// outlive the young generation. On the HTTP thread that was ~4 KB per event and scavenges of
// 2.6–2.9 ms (bench/README.md, step 36). Here the Map holds only slot numbers; the values sit in an
// array whose slot is cleared when the entry goes, so a dead table keeps nothing but keys.
export class TransientMap<K, V> {
  readonly #slots = new Map<K, number>();
  readonly #values: Array<V | undefined> = [];
  /** Slots free for reuse (a stack: the most recently freed slot is reused first). */
  readonly #free: number[] = [];

  get size(): number {
    return this.#slots.size;
  }

  get(key: K): V | undefined {
    const slot = this.#slots.get(key);
    return slot === undefined ? undefined : this.#values[slot];
  }

  has(key: K): boolean {
    return this.#slots.has(key);
  }

  set(key: K, value: V): void {
    const existing = this.#slots.get(key);
    if (existing !== undefined) {
      this.#values[existing] = value;
      return;
    }
    const slot = this.#free.pop() ?? this.#values.length;
    this.#values[slot] = value;
    this.#slots.set(key, slot);
  }

  delete(key: K): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    this.#slots.delete(key);
    this.#values[slot] = undefined;
    this.#free.push(slot);
    return true;
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [key, slot] of this.#slots) yield [key, this.#values[slot]!];
  }

  *values(): IterableIterator<V> {
    for (const slot of this.#slots.values()) yield this.#values[slot]!;
  }

  clear(): void {
    for (const slot of this.#slots.values()) {
      this.#values[slot] = undefined;
      this.#free.push(slot);
    }
    this.#slots.clear();
  }
}
