// A bounded map from which the oldest entry goes first when it is full. The usual way,
// `map.delete(map.keys().next().value)`, looks constant-time and is not in V8: a Map keeps deleted
// entries as holes until it is rehashed, and a new iterator steps over them one by one from the
// start, so with 200,000 entries each eviction cost ~50 µs (bench/README.md, step 20). Here the
// entries' order is a ring of 2 × capacity slots and the Map gives a key's place in it: an
// eviction is one delete. Deleted entries leave holes in the ring; so that it never has to be
// compacted, an entry also goes once 2 × capacity entries were added after it (only a
// long-lived entry among many deleted ones can meet that before the capacity). Pure.
// `undefined` is not a key.
export class FifoCache<K, V> {
  readonly #capacity: number;
  readonly #ringSize: number;
  /** Key → its position: the count of entries added before it, ever. Its slot: position % ringSize. */
  readonly #positions = new Map<K, number>();
  readonly #keys: Array<K | undefined> = [];
  readonly #values: Array<V | undefined> = [];
  /** Every position below it is empty. */
  #oldest = 0;
  #added = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`a cache holds at least one entry, not ${capacity}`);
    this.#capacity = capacity;
    this.#ringSize = 2 * capacity;
  }

  get(key: K): V | undefined {
    const position = this.#positions.get(key);
    return position === undefined ? undefined : this.#values[position % this.#ringSize];
  }

  has(key: K): boolean {
    return this.#positions.has(key);
  }

  /** Adds or replaces; a replaced entry keeps its age. When full, the oldest entry goes. */
  set(key: K, value: V): void {
    const existing = this.#positions.get(key);
    if (existing !== undefined) {
      this.#values[existing % this.#ringSize] = value;
      return;
    }
    if (this.#positions.size >= this.#capacity) {
      while (this.#keys[this.#oldest % this.#ringSize] === undefined) this.#oldest++;
      this.#empty(this.#oldest++);
    }
    if (this.#added - this.#oldest === this.#ringSize) this.#empty(this.#oldest++);
    const position = this.#added++;
    const slot = position % this.#ringSize;
    if (slot === this.#keys.length) {
      this.#keys.push(key);
      this.#values.push(value);
    } else {
      this.#keys[slot] = key;
      this.#values[slot] = value;
    }
    this.#positions.set(key, position);
  }

  delete(key: K): boolean {
    const position = this.#positions.get(key);
    if (position === undefined) return false;
    this.#empty(position);
    return true;
  }

  get size(): number {
    return this.#positions.size;
  }

  #empty(position: number): void {
    const slot = position % this.#ringSize;
    const key = this.#keys[slot];
    if (key === undefined) return;
    this.#positions.delete(key);
    this.#keys[slot] = undefined;
    this.#values[slot] = undefined;
  }
}
