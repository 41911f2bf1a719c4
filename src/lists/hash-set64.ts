// A set of 64-bit keyed hashes with an optional expiry per member: the in-memory form of one list
// in a rule worker (src/lists/list-table.ts). A list of a million values costs ~17 MiB here (8
// bytes per slot, at most half the slots used, and 8 more per slot once any member expires),
// where a JavaScript Set of the strings costs several times that per thread, and a lookup is one
// probe run in one typed array.
//
//   slots: Int32Array, two per slot: [lo, hi] of the hash; lo is forced odd, so 0 marks an empty
//          slot (63 bits of the hash are kept: with a million members a value that is not one
//          collides with one with probability ~1e-13, and the SipHash key is random per thread,
//          so no input can be crafted to collide)
//   expiry: Float64Array, epoch ms per slot (0: never), allocated when a member first expires
//
// Open addressing with linear probing from the low bits (the hash is uniform: no further mixing),
// load at most 1/2 (probe runs stay short for the lookups that miss, which are most of them),
// deletion by backward shift (no tombstones). Pure.

const kMinSlots = 16;

export class HashSet64 {
  #slots: Int32Array;
  #expiry: Float64Array | null = null;
  #mask: number;
  #size = 0;

  constructor(expected = 0) {
    let slots = kMinSlots;
    while (slots < expected * 2) slots *= 2;
    this.#slots = new Int32Array(slots * 2);
    this.#mask = slots - 1;
  }

  get size(): number {
    return this.#size;
  }

  /** Bytes held by the typed arrays. */
  get bytes(): number {
    return this.#slots.byteLength + (this.#expiry?.byteLength ?? 0);
  }

  /** Whether the set holds the hash (lo, hi) and, if it expires, not before `now`. */
  has(lo: number, hi: number, now: number): boolean {
    const slots = this.#slots;
    const mask = this.#mask;
    const l = lo | 1;
    let p = l & mask;
    for (;;) {
      const at = p << 1;
      const sl = slots[at]!;
      if (sl === 0) return false;
      if (sl === l && slots[at + 1] === (hi | 0)) {
        const expiry = this.#expiry;
        if (expiry === null) return true;
        const until = expiry[p]!;
        return until === 0 || until > now;
      }
      p = (p + 1) & mask;
    }
  }

  /** Adds the hash, or sets its expiry when present (null: never expires). True when it was new. */
  set(lo: number, hi: number, expiresAt: number | null): boolean {
    if ((this.#size + 1) * 2 > this.#mask + 1) this.#grow();
    const slots = this.#slots;
    const mask = this.#mask;
    const l = lo | 1;
    const h = hi | 0;
    let p = l & mask;
    for (;;) {
      const at = p << 1;
      const sl = slots[at]!;
      if (sl === 0) {
        slots[at] = l;
        slots[at + 1] = h;
        this.#size++;
        this.#setExpiry(p, expiresAt);
        return true;
      }
      if (sl === l && slots[at + 1] === h) {
        this.#setExpiry(p, expiresAt);
        return false;
      }
      p = (p + 1) & mask;
    }
  }

  /** Removes the hash; true when it was there. */
  delete(lo: number, hi: number): boolean {
    const slots = this.#slots;
    const mask = this.#mask;
    const l = lo | 1;
    const h = hi | 0;
    let hole = l & mask;
    for (;;) {
      const at = hole << 1;
      const sl = slots[at]!;
      if (sl === 0) return false;
      if (sl === l && slots[at + 1] === h) break;
      hole = (hole + 1) & mask;
    }
    this.#size--;
    // Backward shift: later members of the run move into the hole when their home allows, so no
    // run is ever broken by an empty slot.
    let p = (hole + 1) & mask;
    while (slots[p << 1] !== 0) {
      const home = slots[p << 1]! & mask;
      if (((hole - home) & mask) < ((p - home) & mask)) {
        slots[hole << 1] = slots[p << 1]!;
        slots[(hole << 1) + 1] = slots[(p << 1) + 1]!;
        if (this.#expiry !== null) this.#expiry[hole] = this.#expiry[p]!;
        hole = p;
      }
      p = (p + 1) & mask;
    }
    slots[hole << 1] = 0;
    slots[(hole << 1) + 1] = 0;
    if (this.#expiry !== null) this.#expiry[hole] = 0;
    return true;
  }

  #setExpiry(p: number, expiresAt: number | null): void {
    if (expiresAt === null) {
      if (this.#expiry !== null) this.#expiry[p] = 0;
      return;
    }
    this.#expiry ??= new Float64Array(this.#mask + 1);
    this.#expiry[p] = expiresAt;
  }

  #grow(): void {
    const old = this.#slots;
    const oldExpiry = this.#expiry;
    // Twice the slots: the old array held two int32 per slot.
    const slots = old.length;
    this.#slots = new Int32Array(slots * 2);
    this.#mask = slots - 1;
    this.#expiry = oldExpiry === null ? null : new Float64Array(slots);
    const mask = this.#mask;
    for (let q = 0; q < old.length / 2; q++) {
      const l = old[q << 1]!;
      if (l === 0) continue;
      let p = l & mask;
      while (this.#slots[p << 1] !== 0) p = (p + 1) & mask;
      this.#slots[p << 1] = l;
      this.#slots[(p << 1) + 1] = old[(q << 1) + 1]!;
      if (oldExpiry !== null) this.#expiry![p] = oldExpiry[q]!;
    }
  }
}
