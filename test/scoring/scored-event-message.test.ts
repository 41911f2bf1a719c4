// The scored event and its outcome as tuples to and from the writer thread
// (src/scoring/scored-event-message.ts): every field arrives as it left, through a structured clone.
import { deserialize, serialize } from 'node:v8';
import test from 'ava';
import type { PersistOutcome, ScoredEventRecord } from '../../src/scoring/event-store.js';
import { persistOutcomeMessage, persistOutcomeOfMessage, scoredEventMessage, scoredEventOfMessage } from '../../src/scoring/scored-event-message.js';

const kRecord: ScoredEventRecord = {
  projectId: 'prj_1', tenantId: 'ten_1', environment: 'live', eventId: 'evt-1', eventType: 'payment', receivedAt: 1_700_000_000_001,
  payload: '{"event_id":"evt-1"}', account: { accountId: 'acc_1', externalId: 'user-1', isNew: true, newProject: false },
  rulesetVersion: 7, decision: 'review', riskScore: 61, result: '[1,[0],{}]', shadow: '[]', signals: 'sig', scoredAt: 1_700_000_000_002,
  webhookPayload: '{"webhook":1}',
};

function cloned<T>(value: T): T {
  return deserialize(serialize(value)) as T;
}

test('a record arrives with every field as sent, with and without an account', (t) => {
  t.deepEqual(scoredEventOfMessage(cloned(scoredEventMessage(kRecord))), kRecord);
  const anonymous: ScoredEventRecord = { ...kRecord, account: null, webhookPayload: null, decision: 'allow' };
  t.deepEqual(scoredEventOfMessage(cloned(scoredEventMessage(anonymous))), anonymous);
  const returning: ScoredEventRecord = { ...kRecord, account: { accountId: 'acc_2', externalId: 'user-2', isNew: false, newProject: true } };
  t.deepEqual(scoredEventOfMessage(cloned(scoredEventMessage(returning))), returning);
});

test('an outcome comes back as the writer made it, already_scored included', (t) => {
  const stored: PersistOutcome = { kind: 'stored', seq: 41, order: 39, accountId: 'acc_1', webhookQueued: true, openedCase: 'case_1', extendedCase: null, labelNamesAccount: false };
  t.deepEqual(persistOutcomeOfMessage(cloned(persistOutcomeMessage(stored))), stored);
  const joined: PersistOutcome = { kind: 'stored', seq: 42, order: 40, accountId: null, webhookQueued: false, openedCase: null, extendedCase: 'case_2', labelNamesAccount: true };
  t.deepEqual(persistOutcomeOfMessage(cloned(persistOutcomeMessage(joined))), joined);
  t.deepEqual(persistOutcomeOfMessage(cloned(persistOutcomeMessage({ kind: 'already_scored' }))), { kind: 'already_scored' });
});
