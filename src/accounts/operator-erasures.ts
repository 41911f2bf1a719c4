// The operator's erasures, done by the server (docs/accounts.md, "The operator's erasure"): the
// command line `fraud-scorer accounts erase` writes a request row (accounts/operator-erasure-store.ts),
// this polls for it, erases through AccountsService.erase — the same barrier as DELETE
// /v1/accounts/{id}, with an account that several live projects used erased in all of them — and
// writes the answer back. A start does the requests already waiting before anything else runs.
import { kCliActor } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';
import type { Logger } from '../shared/log.js';
import { findProject } from '../tenancy/tenancy-store.js';
import type { AppWriter } from '../write-commands.js';
import type { AccountsService } from './accounts-service.js';
import { kOperatorAliveMs, kOperatorErasureWaitMs, openOperatorErasures, type OpenOperatorErasure, type OperatorErasureAnswer } from './operator-erasure-store.js';

/** How often the table is looked at: the command waits at most about this long for its start. */
export const kOperatorErasurePollMs = 250;

export interface OperatorErasuresOptions {
  /**
   * The request of the command that runs this server's parts in its own process (no HTTP): it
   * waits, though it cannot say so while the start loads.
   */
  readonly ownRequest?: number | null;
}

export class OperatorErasures {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #accounts: AccountsService;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #ownRequest: number | null;
  #timer: NodeJS.Timeout | null = null;
  /** The round under way, if any: rounds never overlap, and stop() waits for the last. */
  #round: Promise<void> | null = null;
  /** An id that named nothing left its row, and the WAL could not be emptied yet: tried each round. */
  #purgeOwed = false;
  #oldAnswersDropped = false;

  constructor(readDb: Db, writer: AppWriter, accounts: AccountsService, log: Logger, now: () => number, options: OperatorErasuresOptions = {}) {
    this.#readDb = readDb;
    this.#writer = writer;
    this.#accounts = accounts;
    this.#log = log;
    this.#now = now;
    this.#ownRequest = options.ownRequest ?? null;
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
      if (!this.#oldAnswersDropped) {
        await this.#writer.call('dropOldAnswers', this.#now());
        this.#oldAnswersDropped = true;
      }
      if (this.#purgeOwed) this.#purgeOwed = !(await this.#accounts.purgeOldPages());
      for (const request of openOperatorErasures(this.#readDb)) {
        const answer = request.taken ? kInterrupted : await this.#erase(request);
        if (answer !== null) await this.#answer(request.requestId, answer);
      }
    } catch (error) {
      this.#log.warn('an operator erasure could not be done; it is tried again', { error });
    }
  }

  /** The answer, or null to leave the request for a later round (its command may be busy). */
  async #erase(request: OpenOperatorErasure): Promise<OperatorErasureAnswer | null> {
    const now = this.#now();
    const waited = request.requestId === this.#ownRequest || now - request.aliveAt <= kOperatorAliveMs;
    // The command stopped waiting (it was killed, its terminal closed): nobody asks for this any more.
    if (!waited && now - request.requestedAt <= kOperatorErasureWaitMs) return null;
    const accountRef = await this.#writer.call('takeOperatorErasure', { requestId: request.requestId, now });
    if (accountRef === null) return kInterrupted;
    const answer = waited ? await this.#eraseNamed(accountRef, request.projectId) : kExpired;
    // The id given is personal data: when no erasure emptied the WAL after it left the row (it
    // named nothing, the erasure failed, nobody waits), this does — now, or at a later round.
    if (!answer.ok && !(await this.#accounts.purgeOldPages())) {
      this.#purgeOwed = true;
      this.#log.warn('operator erasure: the WAL could not be emptied yet (a reader held it); tried again at the next poll');
    }
    return answer;
  }

  async #eraseNamed(accountRef: string, projectId: string): Promise<OperatorErasureAnswer> {
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

/** The command stopped waiting long ago (it was killed); nothing was erased. */
const kExpired: OperatorErasureAnswer = {
  ok: false,
  code: 'EXPIRED',
  message: 'the command that asked for this erasure stopped waiting before a server took it; nothing was erased',
};
