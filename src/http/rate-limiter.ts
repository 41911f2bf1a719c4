// Fixed-window counters (interface, "Limits"): every counter resets when the window turns.
// Pure: the clock is injected. Memory is bounded by the number of distinct keys in one window,
// because the whole map is dropped when the window turns.

export interface LimitVerdict {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until the window turns (at least 1): Retry-After and RateLimit-Reset. */
  readonly resetSeconds: number;
}

export class FixedWindowCounter {
  readonly #windowMs: number;
  readonly #now: () => number;
  #windowIndex = -1;
  #counts = new Map<string, number>();

  constructor(windowSeconds: number, now: () => number) {
    this.#windowMs = windowSeconds * 1000;
    this.#now = now;
  }

  /** Counts one hit for `key` and says whether it is within `limit`. */
  hit(key: string, limit: number): LimitVerdict {
    const now = this.#rollWindow();
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return this.#verdict(now, count, limit);
  }

  /** Whether `key` is already at or over `limit`, without counting. */
  isExhausted(key: string, limit: number): LimitVerdict {
    const now = this.#rollWindow();
    const count = this.#counts.get(key) ?? 0;
    return this.#verdict(now, count + 1, limit);
  }

  #rollWindow(): number {
    const now = this.#now();
    const index = Math.floor(now / this.#windowMs);
    if (index !== this.#windowIndex) {
      this.#windowIndex = index;
      this.#counts = new Map();
    }
    return now;
  }

  #verdict(now: number, count: number, limit: number): LimitVerdict {
    const windowEnd = (this.#windowIndex + 1) * this.#windowMs;
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    };
  }
}
