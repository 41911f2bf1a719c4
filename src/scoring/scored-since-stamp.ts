// The events the writer scored since the derived stamp, as (scored_order, seq), and the lowest seq
// among them: the stamp's from_seq must not pass it (applyDerivedRows, event-store.ts). Orders come
// in ascending; seqs mostly do too (an async event scored late keeps its earlier seq). Only the
// entries that can still be the lowest are kept — a later entry with a seq as low or lower outlives
// an earlier one — so the answer is the first entry's. A scan of every event since the stamp for
// each part of a flush cost the writer ~8 % of its time in the harsh mix (bench/README.md,
// step 47). Pure.
export class ScoredSinceStamp {
  readonly #orders: number[] = [];
  readonly #seqs: number[] = [];
  /** Entries before it are gone (stamped). */
  #head = 0;
  /** Times the stamped entries were dropped from the arrays (an undo then puts its entries back). */
  #compactions = 0;

  /** The `order`-th event scored was stored at row `seq`. */
  scored(order: number, seq: number): void {
    while (this.#seqs.length > this.#head && this.#seqs[this.#seqs.length - 1]! >= seq) {
      this.#seqs.pop();
      this.#orders.pop();
    }
    this.#orders.push(order);
    this.#seqs.push(seq);
  }

  /**
   * The rows of every event up to scored_order `order` are written: those events no longer count.
   * Returns how to count them again, should the stamp's transaction roll back (run before any
   * later call's undo is, newest first).
   */
  stamped(order: number): () => void {
    const from = this.#head;
    while (this.#head < this.#orders.length && this.#orders[this.#head]! <= order) this.#head++;
    if (this.#head === from) return () => {};
    const passedOrders = this.#orders.slice(from, this.#head);
    const passedSeqs = this.#seqs.slice(from, this.#head);
    const compactions = this.#compactions;
    // Dropped from the front now and then, so the arrays hold about what is left.
    if (this.#head > 1024 && this.#head * 2 > this.#orders.length) {
      this.#orders.splice(0, this.#head);
      this.#seqs.splice(0, this.#head);
      this.#head = 0;
      this.#compactions++;
    }
    return () => {
      // Those that an entry now at the head outlives (a seq as low, a later order) stay out.
      const next = this.#head < this.#seqs.length ? this.#seqs[this.#head]! : Number.POSITIVE_INFINITY;
      let kept = passedSeqs.length;
      while (kept > 0 && passedSeqs[kept - 1]! >= next) kept--;
      if (this.#compactions === compactions) {
        // Still in place, just before the head.
        this.#head -= passedSeqs.length;
        this.#orders.splice(this.#head + kept, passedSeqs.length - kept);
        this.#seqs.splice(this.#head + kept, passedSeqs.length - kept);
      } else {
        // Dropped since: put back before the head.
        this.#orders.splice(this.#head, 0, ...passedOrders.slice(0, kept));
        this.#seqs.splice(this.#head, 0, ...passedSeqs.slice(0, kept));
      }
    };
  }

  /** The lowest seq of an event scored and not yet stamped; null when there is none. */
  get lowestSeq(): number | null {
    return this.#head < this.#seqs.length ? this.#seqs[this.#head]! : null;
  }
}
