// The operator's erasures, done by the server (docs/accounts.md, "The operator's erasure"): the
// command line `fraud-scorer accounts erase` writes a request row (accounts/operator-erasure-store.ts),
// this polls for it, erases through AccountsService.erase — the same barrier as DELETE
// /v1/accounts/{id}, with an account that several live projects used erased in all of them — and
// writes the answer back. A start does the requests already waiting before it takes any request.
import { kCliActor } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';
import type { Logger } from '../shared/log.js';
import { findProject } from '../tenancy/tenancy-store.js';
import type { AppWriter } from '../write-commands.js';
import type { AccountsService } from './accounts-service.js';
import { kOperatorErasureWaitMs, openOperatorErasures, type OpenOperatorErasure, type OperatorErasureAnswer } from './operator-erasure-store.js';

/** How often the table is looked at: the command waits at most about this long for its start. */
export const kOperatorErasurePollMs = 250;

export class OperatorErasures {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #accounts: AccountsService;
  readonly #log: Logger;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | null = null;
  /** The round under way, if any: rounds never overlap, and stop() waits for the last. */
  #round: Promise<void> | null = null;

  constructor(readDb: Db, writer: AppWriter, accounts: AccountsService, log: Logger, now: () => number) {
    this.#readDb = readDb;
    this.#writer = writer;
    this.#accounts = accounts;
    this.#log = log;
    this.#now = now;
  }

  start(intervalMs = kOperatorErasurePollMs): void {
    this.#timer = setInterval(() => void this.runWaiting(), intervalMs);
    this.#timer.unref();
  }

  /** No new round; the one under way (an erasure half done) finishes. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#round;
  }

  /** Does every request waiting, one after the other. A round that fails is tried at the next poll. */
  runWaiting(): Promise<void> {
    this.#round ??= this.#runRound().finally(() => (this.#round = null));
    return this.#round;
  }

  async #runRound(): Promise<void> {
    try {
      for (const request of openOperatorErasures(this.#readDb)) {
        await this.#answer(request.requestId, request.taken ? kInterrupted : await this.#erase(request));
      }
    } catch (error) {
      this.#log.warn('an operator erasure could not be done; it is tried again', { error });
    }
  }

  async #erase({ requestId, projectId, requestedAt }: OpenOperatorErasure): Promise<OperatorErasureAnswer> {
    const accountRef = await this.#writer.call('takeOperatorErasure', { requestId, now: this.#now() });
    if (accountRef === null) return kInterrupted;
    const answer = await this.#eraseNamed(accountRef, projectId, requestedAt);
    // The id given is personal data: when no erasure emptied the WAL after it left the row (it
    // named nothing, the erasure failed), this does.
    if (!answer.ok) await this.#accounts.purgeOldPages();
    return answer;
  }

  async #eraseNamed(accountRef: string, projectId: string, requestedAt: number): Promise<OperatorErasureAnswer> {
    // The command stopped waiting (it was killed, or gave up): nobody asks for this any more.
    if (this.#now() - requestedAt > kOperatorErasureWaitMs) return kExpired;
    const project = findProject(this.#readDb, projectId);
    if (project === null) return { ok: false, code: 'NOT_FOUND', message: `there is no project ${projectId}` };
    const scope = { tenantId: project.tenant_id, environment: project.environment, projectId };
    const erased = await this.#accounts.erase(scope, accountRef, true, kCliActor);
    return erased.ok ? { ok: true, body: erased.body } : { ok: false, code: erased.error.code, message: erased.error.message };
  }

  async #answer(requestId: number, answer: OperatorErasureAnswer): Promise<void> {
    await this.#writer.call('answerOperatorErasure', { requestId, answer, now: this.#now() });
  }
}

/** The request was taken by a server that stopped before it answered; its id is no longer stored. */
const kInterrupted: OperatorErasureAnswer = {
  ok: false,
  code: 'INTERRUPTED',
  message: 'the server stopped before it answered this erasure; run the command again (an account already erased is answered as such)',
};

/** The request waited longer than its command waits for an answer; nothing was erased. */
const kExpired: OperatorErasureAnswer = {
  ok: false,
  code: 'EXPIRED',
  message: `no server took the request within ${kOperatorErasureWaitMs / 1000} s of it, and the command stopped waiting; nothing was erased: run the command again`,
};
