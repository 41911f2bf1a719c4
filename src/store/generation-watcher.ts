// Notices changes another process committed, through a counter in the meta table that triggers bump
// (keys_generation, rulesets_generation). A timer polls the counter and calls `onChange` when it
// moved; the caller drops its cache. Cheaper than reading the watched rows on every request, and
// the delay is bounded by the interval.
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';

export const kGenerationPollIntervalMs = 250;

export class GenerationWatcher {
  readonly #read: Statement<[], { value: string }>;
  readonly #onChange: () => void;
  #seen: string;
  #timer: NodeJS.Timeout | null = null;

  constructor(db: Db, counter: 'keys_generation' | 'rulesets_generation', onChange: () => void) {
    this.#read = db.prepare(`SELECT value FROM meta WHERE name = '${counter}'`);
    this.#onChange = onChange;
    this.#seen = this.#read.get()?.value ?? '0';
  }

  start(intervalMs = kGenerationPollIntervalMs): void {
    this.#timer = setInterval(() => this.check(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Calls onChange when the counter moved since the last look. */
  check(): void {
    const value = this.#read.get()?.value ?? '0';
    if (value !== this.#seen) {
      this.#seen = value;
      this.#onChange();
    }
  }
}
