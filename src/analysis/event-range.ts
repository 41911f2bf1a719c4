// The events of a project that arrived in a time range, read in chunks off the HTTP thread (rule
// statistics, backtests). The event log has no index on time (an index would cost every append,
// docs/pipeline.md): events are in arrival order by seq, so a time range is one seq range, found
// by binary search on received_at as at start (scoring/velocity-rebuild.ts), and read with the
// rowid. Each chunk is its own statement: no read transaction stays open across chunks, so the
// checkpointer is never held back for the length of a scan.
//
// Arrival order and seq order differ a little: a sync event gets its seq when its result commits,
// after it was scored. The seq range is widened by kArrivalDisorderMs on both sides, and the
// exact time bounds are applied to every row, so an event is missed only if it committed more than
// that long after it arrived (scoring is bounded far below: WORKER_TASK_TIMEOUT_MS, docs/events.md).
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';

export const kArrivalDisorderMs = 10 * 60_000;

/** Seqs from `low` to `high`, both inclusive; empty when low > high. */
export interface SeqRange {
  readonly low: number;
  readonly high: number;
}

/**
 * The first and last seq of the log (null when it is empty). Two subqueries: SQLite reads the end
 * of the rowid B-tree for a lone min() or max(), but min() and max() in one query scan the table —
 * the whole log, 9 GB at 10M events (bench/README.md, step 34).
 */
export function logSeqBounds(db: Db): { low: number | null; high: number | null } {
  return db.prepare(kLogSeqBoundsQuery).get() as { low: number | null; high: number | null };
}

export const kLogSeqBoundsQuery = 'SELECT (SELECT min(seq) FROM events) AS low, (SELECT max(seq) FROM events) AS high';

/** The seq range that holds every event that arrived in [from, to) (epoch ms). */
export function seqRangeOf(db: Db, from: number, to: number): SeqRange {
  const bounds = logSeqBounds(db);
  if (bounds.low === null || bounds.high === null) return { low: 1, high: 0 };
  const first = db.prepare('SELECT received_at FROM events WHERE seq >= ? ORDER BY seq LIMIT 1');
  /** The first seq (or high + 1) from which events arrived at or after `time`. */
  const firstAtOrAfter = (time: number): number => {
    let low = bounds.low!;
    let high = bounds.high! + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const row = first.get(middle) as { received_at: number } | undefined;
      if (row !== undefined && row.received_at < time) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  return { low: firstAtOrAfter(from - kArrivalDisorderMs), high: firstAtOrAfter(to + kArrivalDisorderMs) - 1 };
}

/**
 * The range of a backtest as the log stands at one moment (one read transaction): its seq range,
 * and how far scoring had gone then. An event of the range was scored by that moment when its
 * scored_order is at most `scoredThrough` (or null: scored before migration 013 numbered them); an
 * async event still pending then is scored later with a higher one, and a sync event committed
 * later has a seq past the range. So the events of the range scored at the moment stay exactly
 * those, however long the chunks take to read and whatever is scored meanwhile.
 */
export interface RangeSnapshot {
  readonly range: SeqRange;
  readonly scoredThrough: number;
}

/**
 * `scoredThrough` without a scan of the log (no index on scored_order, migration 013): every event
 * scored after the derived stamp has seq ≥ its from_seq (a pending event below from_seq moves it
 * down when it is scored, migration 027), and every event before from_seq was scored within the
 * stamp or not scored yet. So the highest scored_order of the range's rows from from_seq on, or the
 * stamp's, bounds the range's events scored so far — read over the tail of the range only
 * (normally seconds of events).
 */
export function snapshotRange(db: Db, from: number, to: number): RangeSnapshot {
  return db.transaction((): RangeSnapshot => {
    const range = seqRangeOf(db, from, to);
    const stamp = db.prepare(kStampQuery).get() as { scored_order: number; from_seq: number };
    const tail = db.prepare(kTailOrderQuery).pluck().get(Math.max(range.low, stamp.from_seq), range.high) as number | null;
    return { range, scoredThrough: Math.max(stamp.scored_order, tail ?? 0) };
  })();
}

const kStampQuery = 'SELECT scored_order, from_seq FROM derived_stamp WHERE id = 1';
export const kTailOrderQuery = 'SELECT max(scored_order) FROM events WHERE seq BETWEEN ? AND ?';

/**
 * The statement of a chunk. `+project_id`: without the unary plus SQLite picks the (project_id,
 * event_id) index, reads every event of the project and sorts them, for each chunk (quadratic: a
 * million events took minutes). The plan wanted is the rowid range: the rows of the range in
 * order, other projects' skipped as they come.
 */
export function chunkQuery(columns: string): string {
  return `SELECT seq, ${columns} FROM events
    WHERE seq > @after AND seq <= @high AND +project_id = @projectId AND received_at >= @from AND received_at < @to
    ORDER BY seq LIMIT @chunk`;
}

/**
 * A project's events that arrived in [from, to), in seq order, `chunk` rows at a time. `columns`
 * is a fixed list chosen by the caller (never input). Events still pending are included: callers
 * look at `state`.
 */
export class EventChunks<Row extends { seq: number }> {
  readonly #statement: Statement;
  readonly #args: { projectId: string; from: number; to: number; high: number; chunk: number };
  readonly #range: SeqRange;
  #after: number;
  #done = false;

  constructor(db: Db, columns: string, projectId: string, from: number, to: number, range: SeqRange, chunk: number) {
    this.#statement = db.prepare(chunkQuery(columns));
    this.#range = range;
    this.#after = range.low - 1;
    this.#args = { projectId, from, to, high: range.high, chunk };
  }

  /** The next rows; empty once the range is read. */
  next(): Row[] {
    if (this.#done) return [];
    const rows = this.#statement.all({ ...this.#args, after: this.#after }) as Row[];
    if (rows.length < this.#args.chunk) this.#done = true;
    if (rows.length > 0) this.#after = rows[rows.length - 1]!.seq;
    return rows;
  }

  /** How much of the seq range has been read, 0 to 1. */
  get fraction(): number {
    if (this.#done || this.#range.high < this.#range.low) return 1;
    return Math.min(1, (this.#after - this.#range.low + 1) / (this.#range.high - this.#range.low + 1));
  }
}
