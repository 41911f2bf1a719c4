// The single writing connection, with group commit (DESIGN §2).
//
// Work submitted during one turn of the event loop is run in ONE transaction, committed once, and
// only then are the callers' promises resolved: a caller that answers 200/202 after `await
// writer.run(...)` has its data committed. With WAL and synchronous=NORMAL a commit is an append
// to the WAL (no fsync), so batching mostly saves the per-transaction overhead; it also bounds how
// often the HTTP thread stops for SQLite.
//
// Work functions are synchronous and should not throw for expected outcomes (use INSERT OR IGNORE,
// return a verdict). If one does throw, the batch is rolled back and each piece of work is re-run
// in its own transaction, so one bad request never fails its neighbours.
import type { Db } from './database.js';

type Work<T> = (db: Db) => T;

interface Pending {
  readonly work: Work<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export class WriterClosedError extends Error {}

export class Writer {
  readonly #db: Db;
  #queue: Pending[] = [];
  #scheduled = false;
  #closed = false;
  /** Counters for /metrics. */
  batches = 0;
  writes = 0;

  constructor(db: Db) {
    this.#db = db;
  }

  get queueDepth(): number {
    return this.#queue.length;
  }

  run<T>(work: Work<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new WriterClosedError('the writer is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs and commits everything queued, now. Called by the scheduler and on shutdown. */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    this.batches++;
    this.writes += batch.length;
    // The database refusing the transaction (locked past the busy timeout, disk full, I/O error)
    // fails the whole batch at once: retrying piece by piece would only wait again for each.
    try {
      this.#db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    const results = new Array<unknown>(batch.length);
    try {
      for (let i = 0; i < batch.length; i++) results[i] = batch[i]!.work(this.#db);
    } catch {
      this.#db.exec('ROLLBACK');
      this.#runOneByOne(batch);
      return;
    }
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      for (const pending of batch) pending.reject(error);
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]);
  }

  /** After a piece of work threw: each piece in its own transaction, so only the bad one fails. */
  #runOneByOne(batch: Pending[]): void {
    for (const pending of batch) {
      try {
        pending.resolve(this.#db.transaction(pending.work).immediate(this.#db));
      } catch (error) {
        if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
        pending.reject(error);
      }
    }
  }

  /** Commits what is queued and refuses further work. */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}
