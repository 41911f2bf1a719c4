// A multiset of event seqs whose lowest is asked often, kept by the writer in memory instead of
// an index of the log: the async events stored and still pending (migration 22), and the events
// that wait to be folded into their case. The stamp needs the lowest of each at every part of a
// flush (pending_from_seq, from_seq); an erasure reads every pending one. Each change returns how to undo it, for the
// writer's rollbacks (store/transaction-undo.ts). Pure.
//
// A binary min-heap whose removals are counted and done when the entry reaches the top: events
// are stored in seq order and mostly leave in it, so the top is what leaves. Counted, not a set
// of marks: a rolled-back insert gives its rowid to the next one (the log has no AUTOINCREMENT),
// so the same seq can be added again while the undone add is still marked. A member that stays at
// the top (a case that cannot be written waits on) would keep every removed entry behind it: once
// removed entries are over half of the heap, it is rebuilt from the members.

/** Removed entries held before the heap may be rebuilt without them. */
const kCompactAfter = 1024;

export class SeqSet {
  readonly #heap: number[] = [];
  /** Per seq, how many of its entries in the heap are removed (taken out when they reach the top). */
  readonly #removed = new Map<number, number>();
  #removedCount = 0;

  /** `seqs`: the members at start, in any order. */
  constructor(seqs: Iterable<number> = []) {
    for (const seq of seqs) this.#push(seq);
  }

  get size(): number {
    return this.#heap.length - this.#removedCount;
  }

  /** Entries in the heap, removed ones not yet taken out included: at most about twice `size` (or 1,024 more). */
  get held(): number {
    return this.#heap.length;
  }

  /** `seq` is a member (once more); returns the undo. */
  add(seq: number): () => void {
    this.#push(seq);
    return () => this.#markRemoved(seq);
  }

  /** One entry of `seq`, a member, leaves; returns the undo. */
  remove(seq: number): () => void {
    this.#markRemoved(seq);
    return () => {
      // Still marked: unmark one. Taken out meanwhile (it reached the top): in again.
      if (!this.#unmark(seq)) this.#push(seq);
    };
  }

  /** The lowest member, or null. */
  lowest(): number | null {
    const heap = this.#heap;
    while (heap.length > 0 && this.#unmark(heap[0]!)) this.#popTop();
    return heap.length > 0 ? heap[0]! : null;
  }

  /** Every member, ascending (a seq added twice, twice). */
  values(): number[] {
    const sorted = [...this.#heap].sort((a, b) => a - b);
    if (this.#removedCount === 0) return sorted;
    const skip = new Map(this.#removed);
    return sorted.filter((seq) => {
      const count = skip.get(seq);
      if (count === undefined) return true;
      if (count === 1) skip.delete(seq);
      else skip.set(seq, count - 1);
      return false;
    });
  }

  #markRemoved(seq: number): void {
    this.#removed.set(seq, (this.#removed.get(seq) ?? 0) + 1);
    this.#removedCount++;
    if (this.#removedCount > kCompactAfter && this.#removedCount * 2 > this.#heap.length) this.#compact();
  }

  /** The heap rebuilt from the members alone (ascending: a sorted array is a min-heap). */
  #compact(): void {
    const members = this.values();
    this.#heap.length = 0;
    this.#heap.push(...members);
    this.#removed.clear();
    this.#removedCount = 0;
  }

  /** Unmarks one removed entry of `seq`; false when none is marked. */
  #unmark(seq: number): boolean {
    const count = this.#removed.get(seq);
    if (count === undefined) return false;
    if (count === 1) this.#removed.delete(seq);
    else this.#removed.set(seq, count - 1);
    this.#removedCount--;
    return true;
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

/**
 * SeqSets by project: the pending async events. The lowest of all is the stamp's pending_from_seq;
 * an erasure reads only its tenant and environment's projects' events, so that another tenant's
 * or the sandbox's backlog costs a live erasure nothing (DESIGN §8, environments never mix).
 */
export class SeqSetsByProject {
  readonly #sets = new Map<string, SeqSet>();

  /** `seqs`: the members at start, as [seq, project] pairs. */
  constructor(members: Iterable<readonly [number, string]> = []) {
    for (const [seq, projectId] of members) this.add(projectId, seq);
  }

  /** `seq` of `projectId` is a member; returns the undo. */
  add(projectId: string, seq: number): () => void {
    let set = this.#sets.get(projectId);
    if (set === undefined) {
      set = new SeqSet();
      this.#sets.set(projectId, set);
    }
    return set.add(seq);
  }

  /** `seq` of `projectId`, a member, leaves; returns the undo. */
  remove(projectId: string, seq: number): () => void {
    const set = this.#sets.get(projectId);
    if (set === undefined) throw new Error(`seq ${seq} of project ${projectId} is not a member`);
    return set.remove(seq);
  }

  /** The lowest member of any project, or null (one look per project: projects are few). */
  lowest(): number | null {
    let lowest: number | null = null;
    for (const set of this.#sets.values()) {
      const seq = set.lowest();
      if (seq !== null && (lowest === null || seq < lowest)) lowest = seq;
    }
    return lowest;
  }

  /** The members of `projectIds`, ascending. */
  valuesOf(projectIds: Iterable<string>): number[] {
    const seqs: number[] = [];
    for (const projectId of projectIds) {
      const set = this.#sets.get(projectId);
      if (set !== undefined) for (const seq of set.values()) seqs.push(seq);
    }
    return seqs.sort((a, b) => a - b);
  }
}
