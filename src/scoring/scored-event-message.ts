// A scored event and its outcome as they cross to the writer thread and back: tuples, not objects.
// postMessage's structured clone writes and reads every property name of every object: a record of
// 16 fields (and its account's 4) and its outcome of 8 cost 6.2–7.9 µs per event to clone and
// read back as objects, 4.2–4.8 as tuples (bench/README.md, step 56).
// The write command persistScoredEventMessage unpacks the record, stores it with
// persistScoredEvent (event-store.ts) and packs the outcome. Pure but for that command.
import type { Db } from '../store/database.js';
import { persistScoredEvent, type PersistOutcome, type ScoredEventRecord } from './event-store.js';
import type { Decision } from './score-result.js';

export type ScoredEventMessage = readonly [
  projectId: string,
  tenantId: string,
  environment: string,
  eventId: string,
  eventType: string,
  receivedAt: number,
  payload: string,
  /** accountId, externalId, isNew, newProject (RecordAccount), or null. */
  account: readonly [accountId: string, externalId: string, isNew: boolean, newProject: boolean] | null,
  rulesetVersion: number,
  decision: Decision,
  riskScore: number,
  result: string,
  shadow: string,
  signals: string,
  scoredAt: number,
  webhookPayload: string | null,
];

/** PersistOutcome: `null` for already_scored. */
export type PersistOutcomeMessage = readonly [
  seq: number,
  order: number,
  accountId: string | null,
  webhookQueued: boolean,
  openedCase: string | null,
  extendedCase: string | null,
  labelNamesAccount: boolean,
] | null;

export function scoredEventMessage(record: ScoredEventRecord): ScoredEventMessage {
  const account = record.account;
  return [
    record.projectId, record.tenantId, record.environment, record.eventId, record.eventType, record.receivedAt, record.payload,
    account === null ? null : [account.accountId, account.externalId, account.isNew, account.newProject],
    record.rulesetVersion, record.decision, record.riskScore, record.result, record.shadow, record.signals, record.scoredAt, record.webhookPayload,
  ];
}

export function scoredEventOfMessage(message: ScoredEventMessage): ScoredEventRecord {
  const account = message[7];
  return {
    projectId: message[0],
    tenantId: message[1],
    environment: message[2],
    eventId: message[3],
    eventType: message[4],
    receivedAt: message[5],
    payload: message[6],
    account: account === null ? null : { accountId: account[0], externalId: account[1], isNew: account[2], newProject: account[3] },
    rulesetVersion: message[8],
    decision: message[9],
    riskScore: message[10],
    result: message[11],
    shadow: message[12],
    signals: message[13],
    scoredAt: message[14],
    webhookPayload: message[15],
  };
}

export function persistOutcomeMessage(outcome: PersistOutcome): PersistOutcomeMessage {
  if (outcome.kind === 'already_scored') return null;
  return [outcome.seq, outcome.order, outcome.accountId, outcome.webhookQueued, outcome.openedCase, outcome.extendedCase, outcome.labelNamesAccount];
}

export function persistOutcomeOfMessage(message: PersistOutcomeMessage): PersistOutcome {
  if (message === null) return { kind: 'already_scored' };
  return {
    kind: 'stored',
    seq: message[0],
    order: message[1],
    accountId: message[2],
    webhookQueued: message[3],
    openedCase: message[4],
    extendedCase: message[5],
    labelNamesAccount: message[6],
  };
}

/** Write command: persistScoredEvent of a record sent as a message, its outcome as one. */
export function persistScoredEventMessage(db: Db, message: ScoredEventMessage, pendingSeq: number | null): PersistOutcomeMessage {
  return persistOutcomeMessage(persistScoredEvent(db, scoredEventOfMessage(message), pendingSeq));
}
