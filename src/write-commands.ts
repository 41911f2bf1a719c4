// Every write the service makes, by name: the command table of the writer thread
// (store/writer.ts, store/writer-thread.ts). A command is a synchronous function of the writing
// connection and plain-data arguments, returning plain data; it runs inside the batch's
// transaction. Adding a write means adding its function here.
import { checkpointTruncate, eraseAccount } from './accounts/accounts-service.js';
import { answerOperatorErasure, dropOldAnswers, takeOperatorErasure } from './accounts/operator-erasure-store.js';
import { changeCase } from './cases/cases-service.js';
import { recordFingerprintSighting } from './fingerprint/fingerprint-store.js';
import { purgeAudit } from './audit/audit-store.js';
import { putLabel, removeLabel } from './labels/labels-store.js';
import { addListItems, createList, deleteList, removeListItems, sweepLists } from './lists/list-store.js';
import { createBacktest, failBacktest, failUnfinishedBacktests, finishBacktest, startBacktest } from './analysis/backtest-store.js';
import { createDraftRule, replaceDraftPolicy, replaceDraftRule, storePublishedRuleset, storeRestoredRuleset } from './rulesets/ruleset-store.js';
import { applyDerivedRows, foldCaseEvents, insertPendingEvent, pendingSeqsByEnvironment, waitingCases } from './scoring/event-store.js';
import { persistScoredEventMessage } from './scoring/scored-event-message.js';
import type { Writer } from './store/writer.js';
import { probeWrite } from './store/write-probe.js';
import { recordKeyUse } from './tenancy/tenancy-store.js';
import { markDelivered, markFailed, pruneFinished, redeliver } from './webhooks/webhook-store.js';

export const kWriteCommands = {
  probeWrite,
  insertPendingEvent,
  persistScoredEventMessage,
  applyDerivedRows,
  foldCaseEvents,
  waitingCases,
  pendingSeqsByEnvironment,
  recordFingerprintSighting,
  changeCase,
  eraseAccount,
  checkpointTruncate,
  takeOperatorErasure,
  answerOperatorErasure,
  dropOldAnswers,
  markDelivered,
  markFailed,
  pruneFinished,
  redeliver,
  recordKeyUse,
  createDraftRule,
  replaceDraftRule,
  replaceDraftPolicy,
  storePublishedRuleset,
  createList,
  deleteList,
  addListItems,
  removeListItems,
  sweepLists,
  purgeAudit,
  putLabel,
  removeLabel,
  storeRestoredRuleset,
  createBacktest,
  startBacktest,
  finishBacktest,
  failBacktest,
  failUnfinishedBacktests,
};

export type WriteCommands = typeof kWriteCommands;

/** Commands that cannot run inside a transaction (a checkpoint): run alone, after the batch. */
export const kStandaloneCommands: ReadonlySet<keyof WriteCommands> = new Set(['checkpointTruncate']);
export type AppWriter = Writer<WriteCommands>;

/** The writer thread's script (compiled next to this module). */
export const kWriterThreadScript = new URL('./store/writer-thread.js', import.meta.url);
