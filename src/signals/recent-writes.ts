// Which (account, signal) pairs were written to the store recently. The scorer leaves those out of
// an event's record, so a busy account does not rewrite the same signal row on every event: the
// store itself refreshes a signal's last_seen at most once per kSignalRefreshMs anyway. Bounded;
// forgetting an entry only costs one redundant write.

const kCapacity = 200_000;

export class RecentSignalWrites {
  readonly #writtenAt = new Map<string, number>();
  readonly #refreshMs: number;

  constructor(refreshMs: number) {
    this.#refreshMs = refreshMs;
  }

  /** True when the pair needs writing at `now`. */
  isDue(accountId: string, type: string, hash: string, now: number): boolean {
    const written = this.#writtenAt.get(`${accountId}\u0000${type}\u0000${hash}`);
    return written === undefined || now - written >= this.#refreshMs;
  }

  markWritten(accountId: string, type: string, hash: string, now: number): void {
    const key = `${accountId}\u0000${type}\u0000${hash}`;
    this.#writtenAt.delete(key);
    if (this.#writtenAt.size >= kCapacity) this.#writtenAt.delete(this.#writtenAt.keys().next().value!);
    this.#writtenAt.set(key, now);
  }

  forgetAccount(accountId: string): void {
    const prefix = `${accountId}\u0000`;
    for (const key of this.#writtenAt.keys()) if (key.startsWith(prefix)) this.#writtenAt.delete(key);
  }
}
