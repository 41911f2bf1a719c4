// A case's events as the writer lists them (migration 18): seqs on the case's row, moved to rows of
// case_event_seqs as they fill, read back in the order they were added; new cases and events that
// join an open case wait in the writer's memory and are written in bulk (foldCaseEvents), exactly
// once, and not at all if their transaction rolled back. And a change of a case against the case
// as the analyst read it (its updated_at), which every change, every event that joins and an
// erasure of its account move.
import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caseEventIds } from '../../src/cases/case-events.js';
import { changeCase } from '../../src/cases/cases-service.js';
import { eraseAccount } from '../../src/accounts/accounts-service.js';
import { applyDerivedRows, foldCaseEvents, foldEventsOfCase, insertPendingEvent, persistScoredEvent, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';
import { transactionEnded } from '../../src/store/transaction-undo.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

/** Every case waiting, 250 at most: as a stop folds them. */
const kEvery = { limit: 250, waitedMs: 0 };

/** A database with a project, and a review event of `account` (null: none) scored at `at` as the writer stores it. */
interface ReviewStore {
  readonly db: Database.Database;
  readonly record: (eventId: string, at: number, account: string | null) => ScoredEventRecord;
  /** Stored and committed; returns the event's case. */
  readonly review: (eventId: string, at: number, account: string | null) => string;
}

function reviewStore(file = ':memory:'): ReviewStore {
  const db = new Database(file);
  migrate(db);
  const { tenant, live } = provisionTenant(db, 'shop', 1_000);
  const record = (eventId: string, at: number, account: string | null): ScoredEventRecord => ({
    projectId: live.project_id, tenantId: tenant.tenant_id, environment: 'live', eventId, eventType: 'payment', receivedAt: at, payload: '{}',
    account: account === null ? null : { accountId: account, externalId: account, isNew: at === 1, newProject: at === 1 },
    rulesetVersion: 1, decision: 'review', riskScore: at % 90, result: '{}', shadow: '[]', signals: '[]', scoredAt: at, webhookPayload: null,
  });
  const review = (eventId: string, at: number, account: string | null): string => {
    const stored = db.transaction(() => persistScoredEvent(db, record(eventId, at, account), null))();
    transactionEnded(true);
    if (stored.kind !== 'stored') throw new Error('not stored');
    return db.prepare('SELECT case_id FROM events WHERE seq = ?').pluck().get(stored.seq) as string;
  };
  return { db, record, review };
}

test('review events extend their account\'s open case, each listed once and in order, however many', (t) => {
  const { db, review } = reviewStore();
  t.teardown(() => db.close());
  const ids: string[] = [];
  let caseId = '';
  // 200 events: one-byte seqs, then two-byte ones; the 64 bytes on the case's row fill three times.
  // Folded every 7 events: one seq or several at a time.
  for (let i = 1; i <= 200; i++) {
    ids.push(`evt-${i}`);
    const eventCase = review(`evt-${i}`, i, 'acc_one');
    if (i === 1) caseId = eventCase;
    t.is(eventCase, caseId, `event ${i} in the account's open case`);
    if (i % 7 === 0) {
      t.is(caseEventIds(db, caseId).length, i - 7, 'listed: the events of the last fold (none before the first: no row yet)');
      db.transaction(() => foldCaseEvents(db, kEvery))();
      transactionEnded(true);
      t.deepEqual(caseEventIds(db, caseId), ids, `folded after event ${i}`);
    }
  }
  t.is(caseEventIds(db, caseId).length, 196, 'the last 4 wait');
  const alone = review('evt-anonymous', 500, null);
  t.not(alone, caseId, 'an event without an account: a case of its own');
  t.is(db.prepare('SELECT count(*) FROM cases WHERE case_id = ?').pluck().get(alone), 0, 'not written yet');
  const folds = db.transaction(() => foldCaseEvents(db, kEvery))();
  transactionEnded(true);
  t.deepEqual(folds, { folded: [[caseId, [197, 198, 199, 200]], [alone, [201]]], failed: [], waiting: 0, due: false }, 'in key order');

  t.deepEqual(caseEventIds(db, caseId), ids);
  t.deepEqual(caseEventIds(db, alone), ['evt-anonymous']);
  const chunks = db.prepare('SELECT seq_chunks FROM cases WHERE case_id = ?').pluck().get(caseId) as number;
  t.true(chunks >= 3, `${chunks} chunk rows`);
  t.is(db.prepare('SELECT count(*) FROM case_event_seqs WHERE case_id = ?').pluck().get(caseId), chunks);
  t.is(db.prepare('SELECT risk_score FROM cases WHERE case_id = ?').pluck().get(caseId), 89, 'the highest score of its events');
});

test('a rolled-back event or fold leaves nothing behind; a case being changed is written first; a restart writes what the log holds, once', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'case-folds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cases.db');
  const { db, record, review } = reviewStore(file);
  const caseId = review('evt-1', 1, 'acc_one');
  // An event whose transaction rolls back: its seq (2) goes to the next event, which joins the case too.
  db.exec('BEGIN');
  const lost = persistScoredEvent(db, record('evt-lost', 2, 'acc_one'), null);
  t.like(lost, { kind: 'stored', seq: 2, extendedCase: caseId });
  db.exec('ROLLBACK');
  transactionEnded(false);
  t.is(review('evt-2', 3, 'acc_one'), caseId);
  // A fold rolled back: the events wait again.
  db.exec('BEGIN');
  t.is(foldCaseEvents(db, kEvery).folded.length, 1);
  db.exec('ROLLBACK');
  transactionEnded(false);
  t.deepEqual(caseEventIds(db, caseId), [], 'no row yet');
  // A change to the case writes it first (changeCase calls this).
  t.false(db.transaction(() => foldEventsOfCase(db, 'prj_another', caseId))(), 'not for another project: nothing written');
  t.deepEqual(caseEventIds(db, caseId), []);
  t.true(db.transaction(() => foldEventsOfCase(db, record('evt-1', 1, 'acc_one').projectId, caseId))());
  transactionEnded(true);
  t.deepEqual(caseEventIds(db, caseId), ['evt-1', 'evt-2']);
  t.deepEqual(db.transaction(() => foldCaseEvents(db, kEvery))(), { folded: [], failed: [], waiting: 0, due: false });
  // An event that would open a case, rolled back: no case; the account's next review opens one.
  db.exec('BEGIN');
  const unopened = persistScoredEvent(db, record('evt-unopened', 4, 'acc_two'), null);
  db.exec('ROLLBACK');
  transactionEnded(false);
  const secondCase = review('evt-5', 5, 'acc_two');
  t.not(secondCase, (unopened as { openedCase: string }).openedCase);
  // evt-3 joins the first case, evt-6 the second (not written), then the process stops without a
  // word; the stamp says to read the log from its start, so the start finds evt-1 and evt-2
  // (listed), evt-3 (not) and the second case (no row: written from the log).
  review('evt-3', 6, 'acc_one');
  review('evt-6', 7, 'acc_two');
  t.deepEqual(db.prepare('SELECT count(*) FROM cases').pluck().get(), 1);
  db.prepare('UPDATE derived_stamp SET from_seq = 1 WHERE id = 1').run();
  db.close();
  const again = new Database(file);
  t.teardown(() => again.close());
  const folds = again.transaction(() => foldCaseEvents(again, kEvery))();
  transactionEnded(true);
  t.deepEqual(folds, { folded: [[caseId, [1, 2, 4]], [secondCase, [3, 5]]], failed: [], waiting: 0, due: false });
  t.deepEqual(caseEventIds(again, caseId), ['evt-1', 'evt-2', 'evt-3']);
  t.deepEqual(caseEventIds(again, secondCase), ['evt-5', 'evt-6']);
  t.is((again.prepare('SELECT event_seqs FROM cases WHERE case_id = ?').pluck().get(caseId) as Buffer).length, 3, 'each seq once on the row');
  t.like(again.prepare('SELECT status, account_id, risk_score, created_at, updated_at FROM cases WHERE case_id = ?').get(secondCase), {
    status: 'open', account_id: 'acc_two', risk_score: 7, created_at: 5, updated_at: 7,
  });
  const fromSeq = (): number => again.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get() as number;
  t.is(fromSeq(), 1, 'the events scored after the stamp (order 0) still hold it: their rows are not written');
  const lastOrder = again.prepare('SELECT max(scored_order) FROM events').pluck().get() as number;
  again.transaction(() => applyDerivedRows(again, { order: lastOrder, accounts: [], signals: [], links: [], linkProjects: [] }))();
  transactionEnded(true);
  t.is(fromSeq(), 6, 'the stamp moved past the events folded');
});

test('a case that cannot be written waits again, last, and holds no other case back', (t) => {
  const { db, review } = reviewStore();
  t.teardown(() => db.close());
  const blocked = review('evt-1', 1, 'acc_blocked');
  const other = review('evt-2', 2, 'acc_other');
  // An open case of the same account already stored (as no path of the service makes it): the
  // new case breaks the rule of one open case per account.
  const projectId = db.prepare('SELECT project_id FROM events WHERE seq = 1').pluck().get() as string;
  db.prepare(`INSERT INTO cases (case_id, project_id, status, account_id, decision, risk_score, created_at, updated_at) VALUES ('case_in_the_way', ?, 'open', 'acc_blocked', 'review', 1, 1, 1)`).run(projectId);
  const folds = db.transaction(() => foldCaseEvents(db, kEvery))();
  transactionEnded(true);
  t.deepEqual(folds.folded, [[other, [2]]]);
  t.deepEqual(folds.failed.map(([caseId]) => caseId), [blocked]);
  t.regex(folds.failed[0]![1], /UNIQUE constraint failed/);
  t.is(folds.waiting, 1);
  t.deepEqual(caseEventIds(db, other), ['evt-2'], 'the other case was written');
  t.is(review('evt-3', 3, 'acc_blocked'), blocked, 'the account\'s open case is still the one waiting');
  db.prepare(`UPDATE cases SET status = 'closed' WHERE case_id = 'case_in_the_way'`).run();
  const again = db.transaction(() => foldCaseEvents(db, kEvery))();
  transactionEnded(true);
  t.deepEqual(again, { folded: [[blocked, [1, 3]]], failed: [], waiting: 0, due: false });
  t.deepEqual(caseEventIds(db, blocked), ['evt-1', 'evt-3']);
});

test('the stamp\'s from_seq stays at the oldest event waiting for its case, through failed folds and rolled-back ones', (t) => {
  const { db, review } = reviewStore();
  t.teardown(() => db.close());
  const fromSeq = (): number => db.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get() as number;
  // The derived rows of every event so far written (none to write here): only the waiting cases hold from_seq back.
  const stamp = (order: number): void => {
    db.transaction(() => applyDerivedRows(db, { order, accounts: [], signals: [], links: [], linkProjects: [] }))();
    transactionEnded(true);
  };
  const blocked = review('evt-1', 1, 'acc_blocked');
  review('evt-2', 2, 'acc_other');
  const projectId = db.prepare('SELECT project_id FROM events WHERE seq = 1').pluck().get() as string;
  db.prepare(`INSERT INTO cases (case_id, project_id, status, account_id, decision, risk_score, created_at, updated_at) VALUES ('case_in_the_way', ?, 'open', 'acc_blocked', 'review', 1, 1, 1)`).run(projectId);
  // A fold in which one case fails, then the whole transaction rolls back: both wait again, each once.
  db.exec('BEGIN');
  t.is(foldCaseEvents(db, kEvery).failed.length, 1);
  db.exec('ROLLBACK');
  transactionEnded(false);
  stamp(2);
  t.is(fromSeq(), 1);
  // Committed: the other case is written, the blocked one (seq 1) still holds from_seq.
  t.deepEqual(db.transaction(() => foldCaseEvents(db, kEvery))().waiting, 1);
  transactionEnded(true);
  stamp(2);
  t.is(fromSeq(), 1);
  review('evt-3', 3, 'acc_blocked');
  db.prepare(`UPDATE cases SET status = 'closed' WHERE case_id = 'case_in_the_way'`).run();
  t.deepEqual(db.transaction(() => foldCaseEvents(db, kEvery))().folded, [[blocked, [1, 3]]]);
  transactionEnded(true);
  t.is(fromSeq(), 3, 'no case waits; evt-3 was scored after the stamp');
  stamp(3);
  t.is(fromSeq(), 4, 'past every event');
});

test('a stamp whose transaction rolled back does not let a later fold move from_seq past the events it would have stamped', (t) => {
  const { db, review } = reviewStore();
  t.teardown(() => db.close());
  const fromSeq = (): number => db.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get() as number;
  review('evt-1', 1, 'acc_one');
  // The flush's last part (up to order 1) fails and rolls back: the event's rows are not written.
  db.exec('BEGIN');
  applyDerivedRows(db, { order: 1, accounts: [], signals: [], links: [], linkProjects: [] });
  db.exec('ROLLBACK');
  transactionEnded(false);
  // Then the new case is folded, which writes from_seq too: a start must still replay evt-1.
  t.deepEqual(db.transaction(() => foldCaseEvents(db, kEvery))().folded.length, 1);
  transactionEnded(true);
  t.is(db.prepare('SELECT scored_order FROM derived_stamp WHERE id = 1').pluck().get(), 0);
  t.is(fromSeq(), 1);
});

test('after a restart, a fold does not move from_seq past the events scored after the stamp, which the start replays', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-case-events-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'db');
  const first = reviewStore(file);
  first.review('evt-1', 1, 'acc_one');
  first.review('evt-2', 2, 'acc_two');
  first.db.close();
  // A crash before the bulk write: the stamp is still at order 0. The start's first fold runs
  // (its bulk write failed, say) before any stamp.
  const again = new Database(file);
  t.teardown(() => again.close());
  t.is(again.transaction(() => foldCaseEvents(again, kEvery))().folded.length, 2);
  transactionEnded(true);
  const fromSeq = (): number => again.prepare('SELECT from_seq FROM derived_stamp WHERE id = 1').pluck().get() as number;
  t.is(fromSeq(), 1, 'both events still to be replayed');
  again.transaction(() => applyDerivedRows(again, { order: 2, accounts: [], signals: [], links: [], linkProjects: [] }))();
  transactionEnded(true);
  t.is(fromSeq(), 3);
});

test('a case written at a start was created when its first event was scored, even one that an async event joined with an earlier seq', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fraud-scorer-case-events-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'db');
  const { db, record, review } = reviewStore(file);
  // Accepted async (seq 1), then a sync review opens the account's case at 20, then the async one is scored at 30 and joins it.
  const base = record('evt-async', 30, 'acc_one');
  const pendingSeq = db.transaction(() => insertPendingEvent(db, { projectId: base.projectId, eventId: 'evt-async', eventType: 'payment', receivedAt: 10, payload: '{}' }))();
  transactionEnded(true);
  const caseId = review('evt-sync', 20, 'acc_one');
  const joined = db.transaction(() => persistScoredEvent(db, { ...base, account: { accountId: 'acc_one', externalId: 'acc_one', isNew: false, newProject: false } }, pendingSeq))();
  transactionEnded(true);
  t.true(joined.kind === 'stored' && joined.extendedCase === caseId);
  db.close();
  // A crash before the case was written: the start writes it from the log.
  const again = new Database(file);
  t.teardown(() => again.close());
  again.transaction(() => foldCaseEvents(again, kEvery))();
  transactionEnded(true);
  t.deepEqual(again.prepare('SELECT created_at, updated_at FROM cases WHERE case_id = ?').get(caseId), { created_at: 20, updated_at: 30 });
});

test('a case\'s events read while a fold moves its row\'s list to a chunk row are all there', (t) => {
  const { db, review } = reviewStore();
  t.teardown(() => db.close());
  const ids: string[] = [];
  const waiting: number[] = [];
  let caseId = '';
  let moves = 0;
  for (let i = 1; i <= 200; i++) {
    ids.push(`evt-${i}`);
    caseId = review(`evt-${i}`, i, 'acc_one');
    waiting.push(i);
    if (i % 7 !== 0) continue;
    // The fold commits between the reader's two statements (whichever it runs first), as the
    // writer thread can between two reads of the read-only connection.
    const chunksBefore = db.prepare('SELECT count(*) FROM case_event_seqs').pluck().get() as number;
    const read = caseEventIds(foldingBetweenReads(db, () => {
      db.transaction(() => foldCaseEvents(db, kEvery))();
      transactionEnded(true);
    }), caseId, waiting);
    if ((db.prepare('SELECT count(*) FROM case_event_seqs').pluck().get() as number) > chunksBefore) moves++;
    t.deepEqual(read, ids, `read while folding after event ${i}`);
    waiting.length = 0;
  }
  t.true(moves >= 2, `${moves} folds moved the list`);
});

/** `db` whose reads of a case's seqs run `fold` once, right after the first of them. */
function foldingBetweenReads(db: Database.Database, fold: () => void): Database.Database {
  let folded = false;
  const wrap = (statement: object): object => new Proxy(statement, {
    get(target, name) {
      const value = Reflect.get(target, name) as unknown;
      if (name === 'pluck') return (...args: unknown[]) => wrap((value as (...a: unknown[]) => object).apply(target, args));
      if (name !== 'get' && name !== 'all') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!folded) {
          folded = true;
          fold();
        }
        return result;
      };
    },
  });
  return new Proxy(db, {
    get(target, name) {
      const value = Reflect.get(target, name) as unknown;
      if (name === 'prepare') return (sql: string) => (/FROM case(s|_event_seqs) WHERE/.test(sql) ? wrap(target.prepare(sql)) : target.prepare(sql));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('with a wait, new cases are written at once and events that join a written case once the first has waited; the limit says when more are due', (t) => {
  const { db, review } = reviewStore();
  t.teardown(() => db.close());
  const fold = (limit: number, waitedMs: number) => {
    const folds = db.transaction(() => foldCaseEvents(db, { limit, waitedMs }))();
    transactionEnded(true);
    return folds;
  };
  const now = Date.now();
  const caseId = review('evt-1', now, 'acc_one');
  t.deepEqual(fold(250, 60_000), { folded: [[caseId, [1]]], failed: [], waiting: 0, due: false }, 'a new case is written');
  t.is(review('evt-2', now + 1, 'acc_one'), caseId);
  t.is(review('evt-3', now + 2, 'acc_one'), caseId);
  t.deepEqual(fold(250, 60_000), { folded: [], failed: [], waiting: 1, due: false }, 'its new events wait');
  t.deepEqual(caseEventIds(db, caseId), ['evt-1'], 'the row as it was');
  t.deepEqual(caseEventIds(db, caseId, [2, 3]), ['evt-1', 'evt-2', 'evt-3'], 'read with the seqs waiting');
  // Events that began to wait two minutes ago are due; new cases are, however young.
  const old = review('evt-4', now - 120_000, 'acc_old');
  t.deepEqual(fold(250, 60_000).folded, [[old, [4]]]);
  t.is(review('evt-5', now - 120_000, 'acc_old'), old);
  const fresh = [review('evt-6', now, 'acc_a'), review('evt-7', now, 'acc_b')];
  const first = fold(2, 60_000);
  t.deepEqual(first.folded.map(([id]) => id), [old, fresh[0]!].sort(), 'the two that waited longest, in key order');
  t.like(first, { waiting: 2, due: true });
  t.deepEqual(fold(2, 60_000), { folded: [[fresh[1]!, [7]]], failed: [], waiting: 1, due: false });
  t.deepEqual(caseEventIds(db, old), ['evt-4', 'evt-5']);
  t.deepEqual(fold(250, 0), { folded: [[caseId, [2, 3]]], failed: [], waiting: 0, due: false }, 'every one, as a stop writes them');
  t.deepEqual(caseEventIds(db, caseId), ['evt-1', 'evt-2', 'evt-3']);
});

test('every change moves updated_at forward, in the same millisecond or with the clock stepped back; a change made on an older updated_at is refused and writes nothing', (t) => {
  const { db, record, review } = reviewStore();
  t.teardown(() => db.close());
  const projectId = record('evt-1', 1, null).projectId;
  const caseId = review('evt-1', 1_000, 'acc_one');
  const change = (body: Parameters<typeof changeCase>[3], now: number): ReturnType<typeof changeCase> => {
    const outcome = db.transaction(() => changeCase(db, projectId, caseId, body, 'key_analyst', now))();
    transactionEnded(true);
    return outcome;
  };
  const updatedAt = (): number => db.prepare('SELECT updated_at FROM cases WHERE case_id = ?').pluck().get(caseId) as number;
  const notes = (): number => db.prepare('SELECT count(*) FROM case_notes WHERE case_id = ?').pluck().get(caseId) as number;

  t.is(change({ assignee: 'ana', ifUpdatedAt: 1_000 }, 2_000).refusal, null, 'the event that opened it set updated_at');
  t.is(updatedAt(), 2_000);
  t.is(change({ assignee: 'bo', ifUpdatedAt: 2_000 }, 2_000).refusal, null);
  t.is(updatedAt(), 2_001, 'in the same millisecond');
  t.is(change({ note: 'later, by a clock stepped back', ifUpdatedAt: 2_001 }, 1_500).refusal, null);
  t.is(updatedAt(), 2_002);

  const before = notes();
  const stale = change({ resolution: 'fraud', ifUpdatedAt: 2_001 }, 3_000).refusal;
  t.is(stale?.code, 'VALIDATION_ERROR');
  t.is(stale?.parameter, 'updated_at');
  t.is(updatedAt(), 2_002);
  t.is(notes(), before);
  t.is(db.prepare('SELECT resolution FROM cases WHERE case_id = ?').pluck().get(caseId), null);

  // An event that joins, not folded into the row yet: the change folds it first and sees it.
  t.is(review('evt-2', 4_000, 'acc_one'), caseId);
  t.is(change({ resolution: 'fraud', ifUpdatedAt: 2_002 }, 5_000).refusal?.parameter, 'updated_at');
  t.is(updatedAt(), 4_000);
  t.is(change({ resolution: 'fraud', ifUpdatedAt: 4_000 }, 5_000).refusal, null);
  t.is(db.prepare('SELECT resolution FROM cases WHERE case_id = ?').pluck().get(caseId), 'fraud');
});

test('an erasure of the case\'s account moves updated_at forward too, in the same millisecond as the last change', (t) => {
  const { db, record, review } = reviewStore();
  t.teardown(() => db.close());
  const { projectId, tenantId } = record('evt-1', 1, null);
  const caseId = review('evt-1', 1, 'acc_one'); // at 1: the account's first event, which makes its row
  t.is(db.transaction(() => changeCase(db, projectId, caseId, { assignee: 'ana' }, 'key_analyst', 2_000))().refusal, null);
  transactionEnded(true);
  const erased = db.transaction(() => eraseAccount(db, {
    tenantId, environment: 'live', projectId, externalId: 'acc_one', externalIdHash: 'hash', acrossProjects: false, now: 2_000, actor: 'key_test', signalFirstSeensInMemory: null, linksInMemory: [],
  }))();
  transactionEnded(true);
  t.is(erased.kind, 'erased');
  t.deepEqual(db.prepare('SELECT account_id, updated_at FROM cases WHERE case_id = ?').get(caseId), { account_id: null, updated_at: 2_001 });
  t.is(changeCase(db, projectId, caseId, { note: 'x', ifUpdatedAt: 2_000 }, 'key_analyst', 3_000).refusal?.parameter, 'updated_at', 'a read from before the erasure is stale');
});
