// The abort signal of one rule-pool task: its deadline. piscina takes, besides an AbortSignal, any
// object with `aborted`, `reason`, `once('abort', …)` and `off('abort', …)` (its types; its
// abort.js calls `removeListener`). An AbortController with a listener on it costs ~7 µs (Node's
// EventTarget), and below capacity a task carries one or two events; this costs ~0.2 µs
// (bench/README.md, step 58). Pure.

type Listener = () => void;

export class TaskAbort {
  aborted = false;
  reason: unknown = undefined;
  /** piscina hangs one listener on a task's signal (and takes it off when the task settles). */
  #listener: Listener | null = null;

  once(event: 'abort', listener: Listener): void {
    if (event === 'abort') this.#listener = listener;
  }

  off(event: 'abort', listener: Listener): void {
    if (event === 'abort' && this.#listener === listener) this.#listener = null;
  }

  removeListener(event: 'abort', listener: Listener): void {
    this.off(event, listener);
  }

  /** Aborts once; the listener, if one is still on, is called once. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.#listener;
    this.#listener = null;
    listener?.();
  }
}
