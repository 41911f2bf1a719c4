// Accepted async events waiting in the event log (state 'pending'), read back for the background
// scorer: a queued event is held in memory as its seq only, and its body is read from the log when
// its turn comes (async-scorer.ts). Which are pending at start comes from the writer, which read the
// log for them (event-store.ts, pendingSeqsByEnvironment). Reads run on the read-only connection.
import type { Statement } from 'better-sqlite3';
import type { Environment } from '../auth/api-keys.js';
import type { Db } from '../store/database.js';
import type { EventInput } from '../validation/event-input.js';
import type { PendingJob } from './async-scorer.js';
import { payloadText } from './stored-payload.js';

type PendingRow = [seq: number, projectId: string, tenantId: string, environment: Environment, eventId: string, payload: string, receivedAt: number];

export class PendingEvents {
  readonly #bySeq: Statement<[number], PendingRow>;
  readonly #read: (seqs: readonly number[], into: PendingJob[]) => void;

  constructor(readDb: Db) {
    this.#bySeq = readDb.prepare(
      `SELECT e.seq, e.project_id, p.tenant_id, p.environment, e.event_id, e.payload, e.received_at
       FROM events e JOIN projects p ON p.project_id = e.project_id WHERE e.seq = ? AND e.state = 'pending'`,
    ).raw() as unknown as Statement<[number], PendingRow>;
    // One read transaction per call: neighbouring rows share pages, read once.
    this.#read = readDb.transaction((seqs: readonly number[], into: PendingJob[]) => {
      for (const seq of seqs) {
        const row = this.#bySeq.get(seq);
        if (row === undefined) continue;
        const [, projectId, tenantId, environment, eventId, stored, receivedAt] = row;
        const payload = payloadText(stored);
        into.push({ seq, projectId, tenantId, environment, eventId, event: JSON.parse(payload) as EventInput, payload, receivedAt });
      }
    });
  }

  /**
   * The events at `seqs` that are still pending, in the order given; the others (scored by a sync
   * request, erased) are left out.
   */
  jobs(seqs: readonly number[]): PendingJob[] {
    const jobs: PendingJob[] = [];
    this.#read(seqs, jobs);
    return jobs;
  }
}
