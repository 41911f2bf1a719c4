// The events of a case (migration 18): seqs on the case's row (cases.event_seqs) and, once those
// filled kOpenSeqsBytes, in rows of case_event_seqs; each seq is the event's row in the log. A
// crash can leave a seq listed twice (loadUnfoldedCaseEvents, scoring/event-store.ts): it counts once.
import type { Statement } from 'better-sqlite3';
import { decodeSeqs } from '../accounts/event-seqs.js';
import type { Db } from '../store/database.js';

interface Statements {
  readonly open: Statement<[string], Buffer>;
  readonly chunks: Statement<[string], Buffer>;
  readonly event: Statement<[number], { event_id: string; scored_at: number }>;
}

const kStatements = new WeakMap<Db, Statements>();

function statements(db: Db): Statements {
  let prepared = kStatements.get(db);
  if (prepared === undefined) {
    prepared = {
      open: db.prepare('SELECT event_seqs FROM cases WHERE case_id = ?').pluck() as Statement<[string], Buffer>,
      chunks: db.prepare('SELECT seqs FROM case_event_seqs WHERE case_id = ? ORDER BY chunk').pluck() as Statement<[string], Buffer>,
      event: db.prepare('SELECT event_id, scored_at FROM events WHERE seq = ?'),
    };
    kStatements.set(db, prepared);
  }
  return prepared;
}

/**
 * The ids of the case's events in the order they were added to it (then by id): those its rows
 * list and `unfolded`, the seqs of events not folded into its row yet (unfolded-cases.ts).
 */
export function caseEventIds(db: Db, caseId: string, unfolded: readonly number[] = []): string[] {
  const s = statements(db);
  const seqs: number[] = [];
  // The row first: a fold that moves its list to a chunk between the two reads (each sees the
  // database as it is then) makes seqs read twice, which count once, rather than none.
  const open = s.open.get(caseId);
  if (open !== undefined) decodeSeqs(open, seqs);
  for (const chunk of s.chunks.all(caseId)) decodeSeqs(chunk, seqs);
  const events: Array<{ event_id: string; scored_at: number }> = [];
  for (const seq of new Set([...seqs, ...unfolded])) {
    const event = s.event.get(seq);
    if (event !== undefined) events.push(event);
  }
  events.sort((a, b) => a.scored_at - b.scored_at || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
  return events.map((event) => event.event_id);
}
