// Every stored event's (project, event id) → its row (seq), in memory: a new event id — nearly
// every POST /v1/events — is known to be new without reading SQLite, and a known one is read by
// its rowid. Loaded once at start (from the runs kept beside the log, event-id-runs.ts, and the
// log after them), then told of each event the writer stores. Held in src/state's compact event
// index: 8 bytes of keyed hash, 8 of seq and a few of table per id, not a JS string.
import { logSeqBounds } from '../analysis/event-range.js';
import type { Db } from '../store/database.js';
import { EventIndex, type EventIndexParts } from '../state/event-index.js';
import type { KeyHasher } from '../state/keys.js';
import type { Bytes } from '../state/slots.js';
import { EventProjectNumbers, readEventIdRuns, runLength, runSeq } from './event-id-runs.js';

const kLoadChunkRows = 65_536;
const kSeparator = '\u001f';

/** EventIds as plain data, to move them from the thread that loaded them (start-loads.ts). */
export interface EventIdsParts {
  readonly index: EventIndexParts;
  readonly projects: ReadonlyArray<readonly [string, number]>;
}

/** How a load found the ids: from runs (events in them), then from the log itself. */
export interface EventIdsLoad {
  readonly fromRuns: number;
  readonly fromLog: number;
}

export class EventIds {
  readonly #index: EventIndex;
  /** Each project's number in the index's keys (the same at every start). */
  readonly #projects: EventProjectNumbers;
  /** What load() read (zero for ids made otherwise). */
  loaded: EventIdsLoad = { fromRuns: 0, fromLog: 0 };

  /** `index`: new (an EventIndex of `hasher`), or one moved from another thread with its `projects`. */
  constructor(hasher: KeyHasher, index: EventIndex, projects: Iterable<readonly [string, number]> = []) {
    this.#index = index;
    this.#projects = new EventProjectNumbers(hasher, projects);
  }

  /** Its state as plain data; these ids are not used after. */
  parts(): EventIdsParts {
    return { index: this.#index.parts(), projects: this.#projects.entries() };
  }

  /** The ids whose parts() these are; `hasher` under the same install secret. */
  static fromParts(hasher: KeyHasher, parts: EventIdsParts): EventIds {
    return new EventIds(hasher, EventIndex.fromParts(hasher, parts.index), parts.projects);
  }

  /**
   * Every event stored in `db`: those in runs (event-id-runs.ts) as their keys, then the rest of
   * the log from its rows. Rows are read in chunks joined into one string by SQLite: about twice
   * as fast as a row at a time, and the load never holds more than one chunk. Event ids are UUIDs
   * and project ids `prj_…`: neither can contain the separator.
   */
  static load(db: Db, hasher: KeyHasher, chunkRows = kLoadChunkRows): EventIds {
    // Room for the seq range, not count(*): the table has no full index to count, so count(*)
    // would read every page of the log.
    const bounds = logSeqBounds(db);
    const range = { n: bounds.low === null || bounds.high === null ? null : bounds.high - bounds.low + 1 };
    const ids = new EventIds(hasher, new EventIndex(hasher, range.n ?? 0));
    let fromRuns = 0;
    let after = 0;
    for (const run of readEventIdRuns(db)) {
      const { keys } = run;
      const length = runLength(run);
      for (let i = 0; i < length; i++) {
        const error = ids.#index.addKey(keys[i * 2]!, keys[i * 2 + 1]!, runSeq(run, i));
        if (error !== null) throw new Error(`event ids: ${error.message}`);
      }
      fromRuns += length;
      after = run.lastSeq;
    }
    const chunk = db.prepare<[number], { last: number | null; text: string | null }>(
      `SELECT max(seq) AS last, group_concat(seq || char(31) || project_id || char(31) || event_id, char(31)) AS text
       FROM (SELECT seq, project_id, event_id FROM events WHERE seq > ? ORDER BY seq LIMIT ${chunkRows})`,
    );
    let fromLog = 0;
    for (;;) {
      const { last, text } = chunk.get(after)!;
      if (last === null || text === null) break;
      const fields = text.split(kSeparator);
      for (let i = 0; i + 2 < fields.length; i += 3) ids.add(fields[i + 1]!, fields[i + 2]!, Number(fields[i]));
      fromLog += fields.length / 3;
      after = last;
    }
    ids.loaded = { fromRuns, fromLog };
    return ids;
  }

  /**
   * The rows that may hold (project, event id): the caller reads each and compares, since two ids
   * can share a 64-bit key. Empty when the event id was never stored in the project.
   */
  candidates(projectId: string, eventId: string): number[] {
    const project = this.#projects.of(projectId);
    const found: number[] = [];
    for (let seq = this.#index.find(project, eventId); seq >= 0; seq = this.#index.findNext()) found.push(seq);
    return found;
  }

  /** Ids held. */
  get size(): number {
    return this.#index.size;
  }

  /** The index's bytes (for /metrics). */
  get bytes(): Bytes {
    return this.#index.bytes;
  }

  /** An event the writer has committed at row `seq`. */
  add(projectId: string, eventId: string, seq: number): void {
    const error = this.#index.add(this.#projects.of(projectId), eventId, seq);
    if (error !== null) throw new Error(`event ids: ${error.message}`);
  }

}
