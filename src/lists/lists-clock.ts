// The lists clock: the sequence number of the last committed list change (list_clock.seq), shared
// between the HTTP thread and the rule workers through one SharedArrayBuffer.
//
// The HTTP thread advances it after the writer committed a change (the API answers after that), so
// an event submitted after a list change was answered sees the change: a worker whose copy of the
// lists is behind the clock reads the changes it lacks from SQLite before its next lookup
// (worker-lists.ts). A ruleset that reads no list never looks at the clock.
export class ListsClock {
  readonly buffer: SharedArrayBuffer;
  readonly #view: BigInt64Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.buffer = buffer;
    this.#view = new BigInt64Array(buffer);
  }

  get seq(): number {
    return Number(Atomics.load(this.#view, 0));
  }

  /** Moves the clock to `seq` (never backwards: only the HTTP thread writes it). */
  advance(seq: number): void {
    if (seq > this.seq) Atomics.store(this.#view, 0, BigInt(seq));
  }
}
