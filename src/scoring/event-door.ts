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
//
// Sandbox events have a share of their own (DESIGN §8, environments never mix): at most half of
// `overloadAt` of them at once (sandboxBound), and none while the server is overloaded. A sandbox
// load alone so never fills the door nor makes the server count as overloaded, and under overload
// the live events are served first. Live events count every event in flight, sandbox ones too.
import type { Environment } from '../auth/api-keys.js';

export interface DoorBounds {
  readonly max: number;
  readonly overloadAt: number;
  readonly afterMs: number;
}

/** Sandbox events in flight at most: half the overload count (of the hard bound if lower), at least one. */
export function sandboxBound(bounds: DoorBounds): number {
  return Math.max(1, Math.floor(Math.min(bounds.max, bounds.overloadAt) / 2));
}

export class EventDoor {
  readonly #max: number;
  readonly #sandboxMax: number;
  readonly #overloadAt: number;
  readonly #afterMs: number;
  readonly #now: () => number;
  #admitted = 0;
  #sandboxAdmitted = 0;
  /** Whether the count is at or above `overloadAt`, and since when it has been on that side. */
  #above = false;
  #crossedAt = Number.NEGATIVE_INFINITY;
  /** Whether the server was overloaded when the count last crossed `overloadAt`. */
  #overloadedAtCrossing = false;

  constructor(bounds: DoorBounds, now: () => number = () => performance.now()) {
    this.#max = bounds.max;
    // At or above the hard bound, the overload count never comes into play (docs/events.md): the
    // door full is not the server overloaded (that would refuse sandbox events once it emptied).
    this.#overloadAt = bounds.overloadAt >= bounds.max ? Number.POSITIVE_INFINITY : bounds.overloadAt;
    this.#afterMs = bounds.afterMs;
    this.#sandboxMax = sandboxBound(bounds);
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

  /** Sandbox events admitted and not yet answered (counted in `admitted` too). */
  get sandboxAdmitted(): number {
    return this.#sandboxAdmitted;
  }

  /** True when a new event of `environment` would be refused. */
  refuses(environment: Environment): boolean {
    if (this.#admitted >= this.#max) return true;
    if (environment === 'sandbox' && (this.#sandboxAdmitted >= this.#sandboxMax || this.overloaded)) return true;
    return this.#admitted >= this.#overloadAt && this.overloaded;
  }

  enter(environment: Environment): void {
    if (environment === 'sandbox') this.#sandboxAdmitted++;
    this.#count(this.#admitted + 1);
  }

  leave(environment: Environment): void {
    if (environment === 'sandbox') this.#sandboxAdmitted--;
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
