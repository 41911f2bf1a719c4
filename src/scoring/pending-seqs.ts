// The seqs of the async events the writer stored that are still pending (accepted, not yet scored
// or erased), in the writer's memory instead of an index of the log (migration 22): the stamp's
// from_seq needs the lowest at every part of a flush, and an erasure every one. Each change
// returns how to undo it, for the writer's rollbacks (store/transaction-undo.ts). Pure.
//
// A binary min-heap with removal marked and done when the entry reaches the top: events are
// accepted in seq order and mostly scored in it, so the top is what leaves.

export class PendingSeqs {
  readonly #heap: number[] = [];
  /** Seqs removed but still in the heap (taken out when they reach the top). */
  readonly #removed = new Set<number>();

  /** `seqs`: the pending events at start, in any order. */
  constructor(seqs: Iterable<number> = []) {
    for (const seq of seqs) this.#push(seq);
  }

  /** Pending events. */
  get size(): number {
    return this.#heap.length - this.#removed.size;
  }

  /** An event stored pending at row `seq`; returns the undo. */
  add(seq: number): () => void {
    this.#push(seq);
    return () => {
      this.#removed.add(seq);
    };
  }

  /** The pending event at row `seq` is no longer pending (it is); returns the undo. */
  remove(seq: number): () => void {
    this.#removed.add(seq);
    return () => {
      // Still marked: unmark it. Taken out meanwhile (it reached the top): in again.
      if (!this.#removed.delete(seq)) this.#push(seq);
    };
  }

  /** The lowest pending seq, or null. */
  lowest(): number | null {
    const heap = this.#heap;
    while (heap.length > 0 && this.#removed.delete(heap[0]!)) this.#popTop();
    return heap.length > 0 ? heap[0]! : null;
  }

  /** Every pending seq, ascending. */
  values(): number[] {
    return this.#heap.filter((seq) => !this.#removed.has(seq)).sort((a, b) => a - b);
  }

  #push(seq: number): void {
    const heap = this.#heap;
    let at = heap.length;
    heap.push(seq);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent]! <= seq) break;
      heap[at] = heap[parent]!;
      at = parent;
    }
    heap[at] = seq;
  }

  #popTop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= last) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = last;
  }
}
