// The door of POST /v1/events (docs/events.md, "Overload"): how many events may be scored or
// stored at once. Pure logic; the clock is given.
//
// Two bounds. Past `max` (MAX_EVENTS_IN_FLIGHT) an event is always refused. `overloadAt`
// (OVERLOAD_EVENTS_IN_FLIGHT) is a count the server should not stay at: past it an event is refused
// only while the server is overloaded — once the count has stayed at or above it for `afterMs`
// (OVERLOAD_AFTER_MS) without a break, until it has stayed below it for as long. A short stall (a
// scavenge, a WAL reset, a core taken by another process) piles arrivals past the count for a few
// milliseconds: they are served a little late instead of refused, which a bound on the count alone
// did at half capacity (bench/README.md, step 41). A load above capacity keeps the count there,
// and past it is refused as before. With `afterMs` 0 the door refuses past `overloadAt` at once.
export interface DoorBounds {
  readonly max: number;
  readonly overloadAt: number;
  readonly afterMs: number;
}

export class EventDoor {
  readonly #max: number;
  readonly #overloadAt: number;
  readonly #afterMs: number;
  readonly #now: () => number;
  #admitted = 0;
  /** Whether the count is at or above `overloadAt`, and since when it has been on that side. */
  #above = false;
  #crossedAt = Number.NEGATIVE_INFINITY;
  /** Whether the server was overloaded when the count last crossed `overloadAt`. */
  #overloadedAtCrossing = false;

  constructor(bounds: DoorBounds, now: () => number = () => performance.now()) {
    this.#max = bounds.max;
    this.#overloadAt = bounds.overloadAt;
    this.#afterMs = bounds.afterMs;
    this.#now = now;
  }

  /** Events admitted and not yet answered. */
  get admitted(): number {
    return this.#admitted;
  }

  /**
   * Overloaded: the count has stayed at or above `overloadAt` for `afterMs` (and not yet below it
   * for as long). A state that lasts less than `afterMs` does not change it.
   */
  get overloaded(): boolean {
    return this.#overloadedAt(this.#now());
  }

  /** True when a new event would be refused. */
  get refuses(): boolean {
    if (this.#admitted >= this.#max) return true;
    return this.#admitted >= this.#overloadAt && this.overloaded;
  }

  enter(): void {
    this.#count(this.#admitted + 1);
  }

  leave(): void {
    this.#count(this.#admitted - 1);
  }

  #overloadedAt(now: number): boolean {
    return now - this.#crossedAt >= this.#afterMs ? this.#above : this.#overloadedAtCrossing;
  }

  #count(admitted: number): void {
    const above = admitted >= this.#overloadAt;
    // The clock is read when the count crosses the bound (and by `refuses` at or above it only):
    // below the bound an event costs two integer compares.
    if (above !== this.#above) {
      const now = this.#now();
      this.#overloadedAtCrossing = this.#overloadedAt(now);
      this.#above = above;
      this.#crossedAt = now;
    }
    this.#admitted = admitted;
  }
}
