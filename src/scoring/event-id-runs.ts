// Every stored event's id key kept beside the log, in runs (docs/pipeline.md, "The event log"): a
// start after a crash reads them (8 bytes per event) instead of reading the whole log for its
// event ids — 9 GB at 10M events, which made the start grow with everything ever stored.
//
// A run is one row of event_id_runs (migration 20) for kRunEvents events in a row of the log:
// their keys as the in-memory index makes them (EventIndex.keyOf: the keyed 64-bit hash of the
// project's number and the event id, both stable under the install secret) and their seqs — none
// when they are first_seq, first_seq + 1, … (always, unless rows of the log were deleted by hand:
// nothing deletes them), else each as an offset from first_seq (4 bytes more per event). The
// writer appends a run in the transaction of the event that completes one, reading those events
// back from the log, so a run holds exactly what was committed; runs follow each other with no gap
// (a run's first_seq is the last one's last_seq + 1). The events after the last run (fewer than
// kRunEvents) are read from the log at start, as are the events after any gap found.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { EventIndex } from '../state/event-index.js';
import { KeyDomain, KeyHasher } from '../state/keys.js';

/** Events per run: a run is read back and written once per this many events (a millisecond or two). */
export const kRunEvents = 1024;

/**
 * The numbers that stand for projects in the keys of their event ids: the low word of a keyed hash
 * of the project id, the same at every start. Two projects sharing a number only share the keys'
 * scope: the rows a key names are read and compared anyway. Each computed once.
 */
export class EventProjectNumbers {
  readonly #hasher: KeyHasher;
  readonly #numbers: Map<string, number>;
  readonly #words = new Uint32Array(2);

  constructor(hasher: KeyHasher, numbers: Iterable<readonly [string, number]> = []) {
    this.#hasher = hasher;
    this.#numbers = new Map(numbers);
  }

  of(projectId: string): number {
    let number = this.#numbers.get(projectId);
    if (number === undefined) {
      this.#hasher.key64(KeyDomain.EventProject, 0, projectId, this.#words, 0);
      number = this.#words[0]!;
      this.#numbers.set(projectId, number);
    }
    return number;
  }

  entries(): Array<[string, number]> {
    return [...this.#numbers];
  }
}

/** A run as stored: keys (two words per event) and seqs as offsets from firstSeq, or null when they are firstSeq, firstSeq + 1, …. */
export interface EventIdRun {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly keys: Uint32Array;
  readonly offsets: Uint32Array | null;
}

/** Events in a run. */
export function runLength(run: EventIdRun): number {
  return run.keys.length / 2;
}

/** The seq of the run's `i`th event. */
export function runSeq(run: EventIdRun, i: number): number {
  return run.firstSeq + (run.offsets === null ? i : run.offsets[i]!);
}

/** The runs of a database, in order, as far as they follow each other from the log's first seq. */
export function* readEventIdRuns(db: Db): Generator<EventIdRun> {
  const rows = db.prepare('SELECT first_seq, last_seq, keys, seqs FROM event_id_runs ORDER BY last_seq').raw().iterate() as IterableIterator<
    [number, number, Buffer, Buffer]
  >;
  let expected = 1;
  for (const [firstSeq, lastSeq, keys, seqs] of rows) {
    const dense = seqs.length === 0;
    const fits = dense ? keys.length === (lastSeq - firstSeq + 1) * 8 : keys.length === seqs.length * 2 && seqs.length % 4 === 0;
    if (firstSeq !== expected || !fits) return;
    yield { firstSeq, lastSeq, keys: wordsOf(keys), offsets: dense ? null : wordsOf(seqs) };
    expected = lastSeq + 1;
  }
}

/**
 * Appends the runs of the writer's database (its only writer): each event is read back from the
 * log once, when its run is complete.
 */
export class EventIdRunWriter {
  readonly #hasher: KeyHasher;
  readonly #projects: EventProjectNumbers;
  readonly #lastCovered: Statement<[], number | null>;
  readonly #events: Statement<[number, number], [number, string, string]>;
  readonly #insert: Statement<[number, number, Buffer, Buffer]>;
  /** The last seq in a run, as last read (a run written by a transaction rolled back since makes it ahead: the next run only comes later). */
  #coveredSeq: number;

  constructor(db: Db, hasher: KeyHasher) {
    this.#hasher = hasher;
    this.#projects = new EventProjectNumbers(hasher);
    this.#lastCovered = db.prepare('SELECT coalesce(max(last_seq), 0) FROM event_id_runs').pluck() as unknown as Statement<[], number | null>;
    this.#events = db.prepare('SELECT seq, project_id, event_id FROM events WHERE seq > ? ORDER BY seq LIMIT ?').raw() as unknown as Statement<
      [number, number],
      [number, string, string]
    >;
    this.#insert = db.prepare('INSERT INTO event_id_runs (last_seq, first_seq, keys, seqs) VALUES (?, ?, ?, ?)');
    this.#coveredSeq = this.#lastCovered.get() ?? 0;
  }

  /** The writer for `db`, or null when it has no install secret yet (no event can be stored then). */
  static forDatabase(db: Db): EventIdRunWriter | null {
    const secret = db.prepare("SELECT value FROM meta WHERE name = 'install_secret'").pluck().get() as string | undefined;
    return secret === undefined ? null : new EventIdRunWriter(db, new KeyHasher(Buffer.from(secret, 'base64')));
  }

  /**
   * An event was stored at row `seq`: the run it completes is appended (in the caller's
   * transaction). Runs missing before it (deleted by hand) are written again two per event, so
   * that no event's transaction reads more than a few thousand rows.
   */
  stored(seq: number): void {
    if (seq - this.#coveredSeq >= kRunEvents) this.appendRuns(seq, 2);
  }

  /** Appends up to `maxRuns` runs of kRunEvents events stored up to row `lastSeq` and not in a run yet; `all`: the rest too. */
  appendRuns(lastSeq: number, maxRuns: number, all = false): void {
    let covered = this.#lastCovered.get() ?? 0;
    for (let runs = 0; runs < maxRuns && (lastSeq - covered >= kRunEvents || (all && lastSeq > covered)); runs++) {
      const rows = this.#events.all(covered, kRunEvents);
      if (rows.length === 0) break;
      const keys = new Uint32Array(rows.length * 2);
      const offsets = new Uint32Array(rows.length);
      const firstSeq = covered + 1;
      for (let i = 0; i < rows.length; i++) {
        const [seq, projectId, eventId] = rows[i]!;
        EventIndex.keyOf(this.#hasher, this.#projects.of(projectId), eventId, keys, i * 2);
        offsets[i] = seq - firstSeq;
      }
      covered = rows[rows.length - 1]![0];
      const dense = covered - firstSeq + 1 === rows.length;
      this.#insert.run(covered, firstSeq, bytesOf(keys), dense ? kNoSeqs : bytesOf(offsets));
    }
    this.#coveredSeq = covered;
  }
}

/** Migration 20: the runs of every event stored before it. */
export function writeEventIdRunsOfLog(db: Db): void {
  const last = db.prepare('SELECT max(seq) FROM events').pluck().get() as number | null;
  if (last === null) return;
  EventIdRunWriter.forDatabase(db)?.appendRuns(last, Infinity, true);
}

/** The seqs of a run whose events are at firstSeq, firstSeq + 1, …: none. */
const kNoSeqs = Buffer.alloc(0);

function bytesOf(words: Uint32Array): Buffer {
  return Buffer.from(words.buffer, words.byteOffset, words.byteLength);
}

/** A blob's bytes as words (copied: a Buffer from SQLite may sit at any offset of a shared pool). */
function wordsOf(bytes: Buffer): Uint32Array {
  const words = new Uint32Array(bytes.length >>> 2);
  new Uint8Array(words.buffer).set(bytes.subarray(0, words.length * 4));
  return words;
}
