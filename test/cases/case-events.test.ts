// A case's events as the writer lists them (migration 18): seqs on the case's row, moved to rows of
// case_event_seqs as they fill, read back in the order they were added.
import test from 'ava';
import Database from 'better-sqlite3';
import { caseEventIds } from '../../src/cases/case-events.js';
import { persistScoredEvent, type ScoredEventRecord } from '../../src/scoring/event-store.js';
import { migrate } from '../../src/store/migrate.js';
import { provisionTenant } from '../../src/tenancy/provision.js';

test('review events extend their account\'s open case, each listed once and in order, however many', (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  migrate(db);
  const { tenant, live } = provisionTenant(db, 'shop', 1_000);
  const review = (eventId: string, at: number, account: string | null): string => {
    const record: ScoredEventRecord = {
      projectId: live.project_id, tenantId: tenant.tenant_id, environment: 'live', eventId, eventType: 'payment', receivedAt: at, payload: '{}',
      account: account === null ? null : { accountId: account, externalId: account, isNew: at === 1, newProject: at === 1 },
      rulesetVersion: 1, decision: 'review', riskScore: at % 90, result: '{}', shadow: '[]', signals: '[]', scoredAt: at, webhookPayload: null,
    };
    const stored = db.transaction(() => persistScoredEvent(db, record, null))();
    if (stored.kind !== 'stored') throw new Error('not stored');
    return db.prepare('SELECT case_id FROM events WHERE seq = ?').pluck().get(stored.seq) as string;
  };
  const ids: string[] = [];
  let caseId = '';
  // 200 events: one-byte seqs, then two-byte ones; the 64 bytes on the case's row fill three times.
  for (let i = 1; i <= 200; i++) {
    ids.push(`evt-${i}`);
    const eventCase = review(`evt-${i}`, i, 'acc_one');
    if (i === 1) caseId = eventCase;
    t.is(eventCase, caseId, `event ${i} in the account's open case`);
  }
  const alone = review('evt-anonymous', 500, null);
  t.not(alone, caseId, 'an event without an account: a case of its own');

  t.deepEqual(caseEventIds(db, caseId), ids);
  t.deepEqual(caseEventIds(db, alone), ['evt-anonymous']);
  const chunks = db.prepare('SELECT seq_chunks FROM cases WHERE case_id = ?').pluck().get(caseId) as number;
  t.true(chunks >= 3, `${chunks} chunk rows`);
  t.is(db.prepare('SELECT count(*) FROM case_event_seqs WHERE case_id = ?').pluck().get(caseId), chunks);
  t.is(db.prepare('SELECT risk_score FROM cases WHERE case_id = ?').pluck().get(caseId), 89, 'the highest score of its events');
});
