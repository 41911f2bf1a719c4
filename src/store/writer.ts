// The single writing connection, on its own thread, with group commit (DESIGN §2).
//
// Writes are named commands (src/write-commands.ts): plain functions of (db, ...args) that run on
// the writer thread. Every command called during one turn of this thread's event loop goes to the
// writer thread as one message and runs there in ONE transaction; each caller's promise resolves
// only after that transaction committed. A caller that answers 200/202 after `await
// writer.call(...)` has its data committed. The HTTP thread never waits for SQLite writes: it only
// copies the arguments into the message.
//
// Failure rules (applied on the writer thread): a command that throws rolls the batch back and the
// batch is re-run command by command, so one bad request never fails its neighbours; the database
// refusing the transaction (locked past the busy timeout, disk full) fails the whole batch at once.
import { Worker } from 'node:worker_threads';
import type { Db } from './database.js';
import { TransientMap } from '../state/transient-map.js';

export type CommandTable = Record<string, (db: Db, ...args: any[]) => unknown>;

type Arguments<F> = F extends (db: Db, ...args: infer A) => unknown ? A : never;

export interface WriterSetup {
  readonly dataDir: string;
  readonly busyTimeoutMs: number;
  /**
   * Int32 counters the thread counts into: [kLockWaitsCell] transactions that found the write lock
   * taken and waited, [kCommitsCell] transactions committed.
   */
  readonly counters: SharedArrayBuffer;
}

/** Messages between the writer and its thread. */
export interface CommandCall {
  readonly id: number;
  readonly name: string;
  readonly args: readonly unknown[];
}
export type CommandOutcome =
  /** `wrote`: the transaction changed rows (so pages were written). */
  | { readonly id: number; readonly ok: true; readonly value: unknown; readonly wrote: boolean }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly code: string | null };

export const kLockWaitsCell = 0;
export const kCommitsCell = 1;

export class WriterClosedError extends Error {}

/** SQLite result codes that say the database cannot be written at all, not that one command failed. */
const kStorageFailure = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|PERM)/;

/** An error raised by a command or by SQLite on the writer thread. */
export class WriteError extends Error {
  readonly code: string | null;

  constructor(message: string, code: string | null) {
    super(message);
    this.code = code;
  }
}

interface Waiting {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export class Writer<C extends CommandTable> {
  readonly #thread: Worker;
  readonly #waiting = new TransientMap<number, Waiting>();
  #batch: CommandCall[] = [];
  #scheduled = false;
  #nextId = 1;
  #closed = false;
  /** The thread ended (an error, or after close). */
  #exited = false;
  #ready: Promise<void>;
  /** Counters for /metrics. */
  batches = 0;
  writes = 0;
  /** Why the database refused the last transaction (locked, full, an I/O error) until one commits again; null when the last one committed. */
  #storageFailure: string | null = null;

  readonly #counters = new Int32Array(new SharedArrayBuffer(8));

  constructor(threadScript: URL, setup: Omit<WriterSetup, 'counters'>) {
    this.#thread = new Worker(threadScript, { workerData: { ...setup, counters: this.#counters.buffer } satisfies WriterSetup });
    let opened: () => void = () => {};
    this.#ready = new Promise((resolve, reject) => {
      opened = resolve;
      this.#thread.once('error', reject);
      this.#thread.once('exit', () => reject(new WriterClosedError('the writer thread stopped before it opened the database')));
    });
    // The thread's first message says it opened the database; every later one is outcomes.
    this.#thread.on('message', (message: CommandOutcome[] | 'opened') => (message === 'opened' ? opened() : this.#settle(message)));
    // A thread that ended answers nothing more: what waits fails, and so does every later call
    // (a call posted to it would wait for ever).
    this.#thread.on('error', (error) => this.#stopped(error));
    this.#thread.on('exit', () => this.#stopped(new WriterClosedError('the writer thread stopped')));
  }

  /** Resolves once the writer thread has opened the database. */
  ready(): Promise<void> {
    return this.#ready;
  }

  /**
   * Transactions that found the write lock held by another connection (the checkpointer starting
   * the WAL over, the command line) and waited for it.
   */
  get lockWaits(): number {
    return Atomics.load(this.#counters, kLockWaitsCell);
  }

  /** Transactions committed: with `writes`, the calls per commit (group commit across batches included). */
  get commits(): number {
    return Atomics.load(this.#counters, kCommitsCell);
  }

  /**
   * `code: message` of the database's refusal of the last transaction (a lock held past the busy
   * timeout, a full disk, an I/O error), until a transaction commits again; null when the last one
   * committed. What /healthz reports: every event fails while it is set.
   */
  get storageFailure(): string | null {
    return this.#storageFailure;
  }

  /** Calls in flight (sent or waiting for the next batch). */
  get queueDepth(): number {
    return this.#waiting.size;
  }

  call<K extends keyof C & string>(name: K, ...args: Arguments<C[K]>): Promise<Awaited<ReturnType<C[K]>>> {
    if (this.#exited) return Promise.reject(new WriterClosedError('the writer thread stopped'));
    if (this.#closed) return Promise.reject(new WriterClosedError('the writer is closed'));
    const id = this.#nextId++;
    this.#batch.push({ id, name, args });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#send());
    }
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #send(): void {
    this.#scheduled = false;
    if (this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    this.batches++;
    this.writes += batch.length;
    this.#thread.postMessage(batch);
  }

  #settle(outcomes: CommandOutcome[]): void {
    for (const outcome of outcomes) {
      const waiting = this.#waiting.get(outcome.id);
      if (waiting === undefined) continue;
      this.#waiting.delete(outcome.id);
      // Only a commit that wrote shows the database writable: one that changed nothing commits on a full disk too.
      if (outcome.ok && outcome.wrote) this.#storageFailure = null;
      else if (!outcome.ok && outcome.code !== null && kStorageFailure.test(outcome.code)) this.#storageFailure = `${outcome.code}: ${outcome.message}`;
      if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(new WriteError(outcome.message, outcome.code));
    }
  }

  #stopped(error: unknown): void {
    this.#exited = true;
    this.#batch = [];
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }

  /** Commits what is queued, then closes the connection (a final checkpoint) and the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#send();
    this.#closed = true;
    while (this.#waiting.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.#exited) return;
    await new Promise<void>((resolve) => {
      this.#thread.once('exit', () => resolve());
      this.#thread.postMessage('close');
    });
  }
}
