// Scores one event and stores the result: the part that sync requests and the background scorer
// share. The account, its signal values' keyed hashes, and what the rules read from the service's
// state (velocity, links, account) are found on this thread, in memory (accounts/hot-accounts.ts);
// the enrichment and the rules run in the worker pool; the result is committed by the group-commit
// writer before anyone is told about it, and only then does the state in memory record it.
import type { LiveRuleset } from '../rulesets/live-rulesets.js';
import { AccountGate } from '../accounts/account-gate.js';
import type { Environment } from '../auth/api-keys.js';
import type { FaultLatch } from '../shared/fault-latch.js';
import type { HotAccounts } from '../accounts/hot-accounts.js';
import type { UnfoldedCases } from '../cases/unfolded-cases.js';
import type { EvaluateItem } from '../pool/protocol.js';
import type { RulesPool } from '../pool/rules-pool.js';
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import { LatencyTally } from '../shared/latency-tally.js';
import { externalAccountIdOf, velocityIdentifiers } from '../signals/identifiers.js';
import { VelocityHashes, type VelocityKeys, type VelocityWindows } from '../signals/velocity.js';
import type { AppWriter } from '../write-commands.js';
import type { EventInput } from '../validation/event-input.js';
import type { ScoredEventRecord } from './event-store.js';
import { persistOutcomeOfMessage, scoredEventMessage } from './scored-event-message.js';
import { analyzeEventPhone, type PhoneAnalysis } from '../signals/phone.js';
import { storedIdentifiers, type StoredIdentifier } from '../signals/stored-identifiers.js';
import type { KeyedHashCache } from '../signals/keyed-hash-cache.js';
import type { EventSignals } from '../state/hot-state.js';
import type { Logger } from '../shared/log.js';
import { decisionWebhookJson, responseResultJson } from './score-result.js';

export interface ScoreJob {
  readonly projectId: string;
  readonly tenantId: string;
  /** The project's environment: accounts, signals and links never cross it (DESIGN §8). */
  readonly environment: Environment;
  readonly eventId: string;
  readonly event: EventInput;
  /** The body as received: stored as the event's payload. */
  readonly payload: string;
  readonly receivedAt: number;
  /** A sync event's client has gone: its scoring is skipped if it has not started. */
  readonly clientGone?: (() => boolean) | undefined;
  /** x-request-id of the request that brought the event (for the pool's log); absent after a restart. */
  readonly requestId?: string;
}

export type ScoreOutcome =
  /** The sync response's result, JSON text; the event is stored at row `seq`. */
  | { readonly ok: true; readonly result: string; readonly seq: number }
  /** An async event that was scored meanwhile (by a sync retry): nothing was written. */
  | { readonly ok: true; readonly result: null }
  | { readonly ok: false; readonly error: ApiError }
  /** The sync client went away before its event was scored: nothing was scored or stored, and nobody waits for an answer. */
  | { readonly ok: false; readonly dropped: true };

export interface ScorerDeps {
  readonly pool: RulesPool;
  readonly writer: AppWriter;
  readonly accounts: HotAccounts;
  /** Cases opened and events that joined an open case, until the writer writes them into the case's row. */
  readonly unfoldedCases: UnfoldedCases;
  /** Signal values are stored and found by their keyed hashes (under the install secret). */
  readonly hashes: KeyedHashCache;
  readonly log: Logger;
  readonly velocity: VelocityWindows;
  /** Erasure is a barrier: an event of an account being erased waits (accounts/account-gate.ts). */
  readonly gate: AccountGate;
  readonly latch: FaultLatch;
  readonly now: () => number;
  /**
   * Called after a decision webhook message was committed (the webhook deliverer looks for work
   * at once rather than at its next poll); not for events of projects without a webhook.
   */
  readonly onWebhookQueued?: (projectId: string) => void;
}

export class Scorer {
  readonly #deps: ScorerDeps;
  /** Sync events not scored because their client had gone (for /metrics). */
  dropped = 0;
  /**
   * How long events waited for each hop of their scoring (for /metrics): `rules` from the hand-off
   * to the rule pool to the result back on this thread (the batch's wait included), `commit` from
   * the hand-off to the writer to its acknowledgement. What an answer took beyond them is this
   * thread's own work and its queue.
   */
  readonly stageTimes = { rules: new LatencyTally(), commit: new LatencyTally() } as const;
  /** When each event being scored began (its case's created_at, if it opens one), by a number of its own. */
  readonly #scoringSince = new Map<number, number>();
  #scorings = 0;

  constructor(deps: ScorerDeps) {
    this.#deps = deps;
  }

  /**
   * The time before which every case is listed: the start of the oldest event still being scored
   * (a case it opens has that created_at and shows once it is stored), else now. GET
   * /v1/cases?order=oldest lists cases created before it only, so that no case can appear behind a
   * page already read (cases/cases-service.ts).
   */
  casesSettledBefore(): number {
    let oldest = this.#deps.now();
    for (const since of this.#scoringSince.values()) if (since < oldest) oldest = since;
    return oldest;
  }

  /**
   * Scores `job` with `ruleset` and stores it: as a new scored event, or by completing the stored
   * pending event at row `pendingSeq`, with a decision webhook message when the project has a
   * webhook.
   */
  async score(job: ScoreJob, ruleset: LiveRuleset, pendingSeq: number | null): Promise<ScoreOutcome> {
    const externalId = externalAccountIdOf(job.event);
    if (externalId === null) return this.#score(job, ruleset, pendingSeq, null);
    const gateKey = AccountGate.key(job.tenantId, job.environment, externalId);
    await this.#deps.gate.enter(gateKey);
    try {
      return await this.#score(job, ruleset, pendingSeq, externalId);
    } finally {
      this.#deps.gate.leave(gateKey);
    }
  }

  async #score(job: ScoreJob, ruleset: LiveRuleset, pendingSeq: number | null, externalId: string | null): Promise<ScoreOutcome> {
    const { accounts, velocity } = this.#deps;
    if (this.#deps.latch.enabled) await this.#holdIfAsked(job.event, 'fault_hold_before');
    // Nobody would read the answer: a client that gave up (a timeout under load) costs nothing more.
    if (job.clientGone?.() === true) {
      this.dropped++;
      return { ok: false, dropped: true };
    }
    const space = accounts.space(job.tenantId, job.environment);
    const account = externalId === null ? null : accounts.account(space, job.tenantId, job.environment, externalId);
    const accountId = account?.publicId ?? null;
    const ids = velocityIdentifiers(job.event);
    const velocityKeys: VelocityKeys = { cardToken: ids.cardToken, ip: ids.ip, accountId, email: ids.email, fp: ids.fp };
    // The keys as the read hashes them, for the record right after (not hashed twice).
    const velocityHashes = ruleset.reads.velocity ? new VelocityHashes() : null;
    const velocitySignals = velocityHashes !== null ? velocity.read(job.projectId, velocityKeys, job.receivedAt, velocityHashes) : null;
    // Counted from now, not from its commit: the events scored meanwhile (a burst of card tests sent
    // in parallel) see this one, as they would had it been stored. Withdrawn if it is not stored.
    velocity.record(job.projectId, velocityKeys, ids.amountCents, job.receivedAt, velocityHashes);
    let stored = false;
    const scoring = ++this.#scorings;
    try {
      const pending = pendingSeq !== null;
      const { pool, writer } = this.#deps;
      const slot = account?.slot ?? -1;
      const now = this.#deps.now();
      this.#scoringSince.set(scoring, now);

      // The signal values are hashed when they are stored (an account's) or looked up (links).
      let phone: PhoneAnalysis | null = null;
      let identifiers: StoredIdentifier[] = [];
      let eventSignals: EventSignals | null = null;
      if (accountId !== null || ruleset.reads.links) {
        phone = analyzeEventPhone(job.event);
        identifiers = storedIdentifiers(job.event, phone, this.#deps.hashes, ids);
        eventSignals = accounts.eventSignals(identifiers);
      }
      const item: EvaluateItem = {
        projectId: job.projectId,
        eventId: job.eventId,
        version: ruleset.version,
        policy: ruleset.policy,
        payload: job.payload,
        phone,
        velocity: velocitySignals,
        links: ruleset.reads.links ? accounts.links(space, slot, eventSignals!, now) : null,
        account: ruleset.reads.account ? accounts.accountSignals(slot, now) : null,
        now,
        requestId: job.requestId ?? null,
      };
      const handedToRules = performance.now();
      const evaluated = await pool.evaluate(item);
      this.stageTimes.rules.record((performance.now() - handedToRules) / 1000);
      if (!evaluated.ok) return { ok: false, error: causedBy(apiError(evaluated.code, evaluated.code === 'INTERNAL_ERROR' ? undefined : evaluated.message), evaluated.message) };

      const record: ScoredEventRecord = {
        projectId: job.projectId,
        tenantId: job.tenantId,
        environment: job.environment,
        eventId: job.eventId,
        eventType: job.event.event_type,
        receivedAt: job.receivedAt,
        payload: job.payload,
        account: accountId === null ? null : { accountId, externalId: externalId!, isNew: slot < 0, newProject: !accounts.usedFrom(slot, job.projectId) },
        rulesetVersion: ruleset.version,
        decision: evaluated.decision,
        riskScore: evaluated.riskScore,
        result: evaluated.compactResult,
        shadow: evaluated.compactShadow,
        signals: evaluated.recordedSignals,
        scoredAt: now,
        webhookPayload: pending ? decisionWebhookJson(evaluated.storedJson, accountId, now, job.projectId, job.environment) : null,
      };
      if (this.#deps.latch.enabled) await this.#holdIfAsked(job.event, 'fault_hold');
      let persisted;
      const handedToWriter = performance.now();
      try {
        persisted = persistOutcomeOfMessage(await writer.call('persistScoredEventMessage', scoredEventMessage(record), pendingSeq));
      } catch (error) {
        return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The score could not be stored; retry the same request.'), error) };
      } finally {
        this.stageTimes.commit.record((performance.now() - handedToWriter) / 1000);
      }
      if (persisted.kind === 'already_scored') {
        if (externalId !== null && slot < 0) accounts.notStored(job.tenantId, job.environment, externalId);
        return { ok: true, result: null };
      }
      // Committed: the count stays, whatever follows.
      stored = true;
      // Before anything else waits: the fold's reply (a later message) must find it here.
      if (persisted.openedCase !== null) {
        const opened = { projectId: job.projectId, accountId: persisted.accountId, externalAccountId: persisted.accountId === null ? null : externalId!, createdAt: now };
        this.#deps.unfoldedCases.opened(persisted.openedCase, opened, evaluated.riskScore, persisted.seq);
      }
      if (persisted.extendedCase !== null) this.#deps.unfoldedCases.added(persisted.extendedCase, evaluated.riskScore, now, persisted.seq);
      if (persisted.accountId !== null) {
        const failure = accounts.recorded(
          space, job.tenantId, job.environment, job.projectId, externalId!, persisted.accountId, evaluated.decision, now, eventSignals!, identifiers, persisted.order, persisted.seq, slot < 0,
        );
        // Stored, so answered; only the state in memory lacks it (until a restart loads it).
        if (failure !== null) this.#deps.log.error('a scored event could not be recorded in memory', { request_id: job.requestId, code: failure.code, cause: failure.message });
        if (persisted.labelNamesAccount) accounts.refresh(persisted.accountId);
      } else {
        accounts.scoredWithoutAccount(persisted.order);
      }
      if (persisted.accountId !== accountId) {
        // Stored under another account than the one it was counted for: counted again under that one.
        velocity.withdraw(job.projectId, velocityKeys, ids.amountCents, job.receivedAt, velocityHashes);
        velocity.record(job.projectId, { ...velocityKeys, accountId: persisted.accountId }, ids.amountCents, job.receivedAt);
      }
      if (persisted.webhookQueued) this.#deps.onWebhookQueued?.(job.projectId);
      return { ok: true, result: responseResultJson(evaluated.storedJson, evaluated.degraded, persisted.accountId, evaluated.evalMs), seq: persisted.seq };
    } finally {
      this.#scoringSince.delete(scoring);
      if (!stored) velocity.withdraw(job.projectId, velocityKeys, ids.amountCents, job.receivedAt, velocityHashes);
    }
  }

  /**
   * Tests only (FAULT_INJECTION=hold_points): an event naming a hold point waits there —
   * `fault_hold_before` before its scoring starts, `fault_hold` scored but not stored.
   */
  async #holdIfAsked(event: EventInput, member: 'fault_hold' | 'fault_hold_before'): Promise<void> {
    const name = (event.extras as Record<string, unknown> | undefined)?.[member];
    if (typeof name === 'string') await this.#deps.latch.hold(name);
  }
}
