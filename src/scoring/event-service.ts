// POST /v1/events and GET /v1/scores/{event_id} (interface: "POST /v1/events", "Idempotency",
// "States and transitions").
//
//   sync, new event     → score, commit, 200 with the result
//   sync, same body     → 200 with the stored result, not scored again (a pending async event is
//                          scored now)
//   any, other body     → 409 EVENT_ID_CONFLICT (the async flag is not part of the body)
//   async, new event    → commit as pending, 202 receipt; the background scorer finishes it
//   async, same body    → a new 202 receipt
//
// Concurrent requests for one event id are serialised through an in-flight map: the second waits
// for the first to finish and then answers from what the first stored, so an event is scored once.
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import { AccountGate } from '../accounts/account-gate.js';
import type { Environment } from '../auth/api-keys.js';
import { externalAccountIdOf } from '../signals/identifiers.js';
import type { LiveRulesets } from '../rulesets/live-rulesets.js';
import type { AppWriter } from '../write-commands.js';
import type { EventInput } from '../validation/event-input.js';
import type { AsyncScorers, PendingJob, PendingOutcome } from './async-scorer.js';
import { EventDoor, type DoorBounds } from './event-door.js';
import { EventReader, type StoredEvent } from './event-store.js';
import { canonicalBodyHash } from './idempotency.js';
import type { ScoreJob, Scorer } from './scorer.js';
import { TransientMap } from '../state/transient-map.js';

export type EventReply =
  /** 200 with this score result, already serialised (fresh, or stored). */
  | { readonly kind: 'result'; readonly json: string }
  /** 202 with this receipt. */
  | { readonly kind: 'receipt'; readonly receipt: AsyncReceipt }
  /** An error; 503s carry the seconds to wait before retrying (the Retry-After header). */
  | { readonly kind: 'error'; readonly error: ApiError; readonly retryAfterSeconds?: number }
  /** None: the client went away before its event was scored (the front end answered 499 then). */
  | { readonly kind: 'dropped' };

export interface AsyncReceipt {
  readonly event_id: string;
  readonly state: 'pending' | 'scored' | 'erased';
  readonly accepted_at: string;
}

export interface Submission {
  readonly projectId: string;
  readonly tenantId: string;
  readonly environment: Environment;
  readonly event: EventInput;
  /** The body text as received. */
  readonly payload: string;
  readonly receivedAt: number;
  /** True once the client has gone: its event is not scored if its scoring has not started. */
  readonly clientGone?: () => boolean;
  /** x-request-id, carried to the rule pool's log. */
  readonly requestId?: string;
}

export interface EventServiceDeps {
  readonly reader: EventReader;
  readonly writer: AppWriter;
  readonly rulesets: LiveRulesets;
  readonly scorer: Scorer;
  /** Each environment's background scorer: an async event queues in its own environment's. */
  readonly asyncScorers: AsyncScorers;
  readonly gate: AccountGate;
  /**
   * The door's bounds (event-door.ts): events being scored or stored at once, never more than
   * `max` (MAX_EVENTS_IN_FLIGHT), and more than `overloadAt` (OVERLOAD_EVENTS_IN_FLIGHT) only for
   * `afterMs` (OVERLOAD_AFTER_MS). Past them POST /v1/events answers 503 at once and stores
   * nothing: under overload the server keeps serving what it admitted at full speed instead of
   * queueing everything until every answer comes too late.
   */
  readonly door: DoorBounds;
}

/** Seconds a refused client waits before retrying (Retry-After on 503s of POST /v1/events). */
export const kRetryAfterSeconds = 1;

// Made once: under overload most requests get one of these (frozen, so the front end keeps their body too).
const kSyncAtCapacity: EventReply = Object.freeze({
  kind: 'error',
  error: Object.freeze(apiError('COMPILED_RULES_UNAVAILABLE', 'The server is at capacity. Nothing was scored or stored; retry with backoff.')),
  retryAfterSeconds: kRetryAfterSeconds,
});
const kAsyncAtCapacity: EventReply = Object.freeze({
  kind: 'error',
  error: Object.freeze(apiError('ASYNC_UNAVAILABLE', 'The server is at capacity. Nothing was stored; retry with backoff.')),
  retryAfterSeconds: kRetryAfterSeconds,
});

export class EventService {
  readonly #deps: EventServiceDeps;
  readonly #inFlight = new TransientMap<string, Promise<unknown>>();
  readonly #door: EventDoor;
  /** Refused at the door (overload), for /metrics. */
  refused = 0;

  constructor(deps: EventServiceDeps) {
    this.#deps = deps;
    this.#door = new EventDoor(deps.door);
  }

  /** Events admitted and not yet answered (for /metrics). */
  get admitted(): number {
    return this.#door.admitted;
  }

  /** Whether the door refuses past OVERLOAD_EVENTS_IN_FLIGHT (for /metrics). */
  get overloaded(): boolean {
    return this.#door.overloaded;
  }

  /** Sandbox events admitted and not yet answered (for /metrics). */
  get sandboxAdmitted(): number {
    return this.#door.sandboxAdmitted;
  }

  /** True when a new event of `environment` would be refused (event-door.ts). */
  atCapacity(environment: Environment): boolean {
    return this.#door.refuses(environment);
  }

  /** The refusal of an event at capacity (counted): 503, for an async event ASYNC_UNAVAILABLE. */
  refuseAtCapacity(async: boolean): EventReply {
    this.refused++;
    return async ? kAsyncAtCapacity : kSyncAtCapacity;
  }

  async submit(submission: Submission): Promise<EventReply> {
    if (this.atCapacity(submission.environment)) return this.refuseAtCapacity(submission.event.async === true);
    this.#door.enter(submission.environment);
    try {
      return await this.#submit(submission);
    } finally {
      this.#door.leave(submission.environment);
    }
  }

  async #submit(submission: Submission): Promise<EventReply> {
    const eventId = submission.event.event_id.toLowerCase();
    const flightKey = `${submission.projectId}\u0000${eventId}`;
    // Another request for the event first. Nothing is awaited between the last look and the
    // claim below (#inFlight.set): two requests waiting for the same one would otherwise both find
    // the event free, and both store it when that one stored nothing.
    for (let running = this.#inFlight.get(flightKey); running !== undefined; running = this.#inFlight.get(flightKey)) await running.catch(() => undefined);
    const existing = this.#deps.reader.find(submission.projectId, eventId);
    if (existing !== null && !sameBody(existing, submission.event)) {
      return { kind: 'error', error: apiError('EVENT_ID_CONFLICT', undefined, 'event_id') };
    }
    const work = submission.event.async === true
      ? this.#submitAsync(submission, eventId, existing)
      : this.#submitSync(submission, eventId, existing);
    this.#inFlight.set(flightKey, work);
    try {
      return await work;
    } finally {
      this.#inFlight.delete(flightKey);
    }
  }

  /**
   * The background scorer's entry: completes a pending async event unless something else scored it.
   * 'retry' when it cannot be scored now (no ruleset, a failed write); nothing was stored then.
   * 'gone' when it was no longer pending (a sync request scored it, or it was erased): not counted
   * as scored in the background.
   */
  async scorePending(job: PendingJob): Promise<PendingOutcome> {
    const flightKey = `${job.projectId}\u0000${job.eventId}`;
    // A job still queued is pending: what scores or erases its row first drops it from the queue
    // (AsyncScorer.drop). A sync request for the same event that ran meanwhile may have scored it.
    // As in #submit, nothing is awaited between the last look and the claim.
    let waited = false;
    for (let running = this.#inFlight.get(flightKey); running !== undefined; running = this.#inFlight.get(flightKey)) {
      waited = true;
      await running.catch(() => undefined);
    }
    if (waited) {
      const stored = this.#deps.reader.find(job.projectId, job.eventId);
      if (stored === null || stored.state !== 'pending') return 'gone';
    }
    const live = this.#deps.rulesets.get(job.projectId);
    if (!live.ok) return 'retry';
    const work = this.#deps.scorer.score(job, live.ruleset, job.seq);
    this.#inFlight.set(flightKey, work);
    try {
      const outcome = await work;
      // No result: the writer found the row no longer pending when this write came.
      return !outcome.ok ? 'retry' : outcome.result === null ? 'gone' : 'done';
    } finally {
      this.#inFlight.delete(flightKey);
    }
  }

  async #submitSync(submission: Submission, eventId: string, existing: StoredEvent | null): Promise<EventReply> {
    if (existing !== null && existing.state === 'scored') return { kind: 'result', json: existing.result! };
    if (existing !== null && existing.state === 'erased') return { kind: 'result', json: JSON.stringify(erasedView(eventId, existing)) };
    const live = this.#deps.rulesets.get(submission.projectId);
    if (!live.ok) return unavailable(existing === null ? live.error : stillPending(live.error));
    const job = { ...jobOf(submission, eventId, existing?.received_at ?? submission.receivedAt), clientGone: submission.clientGone };
    const outcome = await this.#deps.scorer.score(job, live.ruleset, existing?.seq ?? null);
    if (!outcome.ok && 'dropped' in outcome) return { kind: 'dropped' };
    if (!outcome.ok) return unavailable(existing === null ? outcome.error : stillPending(outcome.error));
    if (outcome.result !== null) {
      if (existing === null) this.#deps.reader.stored(submission.projectId, eventId, outcome.seq);
      else this.#deps.asyncScorers[submission.environment].drop([existing.seq]); // it was pending: its queued job is done with
      return { kind: 'result', json: outcome.result };
    }
    // No longer pending when our write came: scored by the background scorer meanwhile (answer
    // with its result), or erased with its account while we waited at the account's gate (answer
    // as for any erased event).
    const stored = this.#deps.reader.find(submission.projectId, eventId);
    if (stored?.state === 'erased') return { kind: 'result', json: JSON.stringify(erasedView(eventId, stored)) };
    return stored?.result ? { kind: 'result', json: stored.result } : { kind: 'error', error: apiError('INTERNAL_ERROR') };
  }

  async #submitAsync(submission: Submission, eventId: string, existing: StoredEvent | null): Promise<EventReply> {
    const acceptedAt = new Date(submission.receivedAt).toISOString();
    if (existing !== null) return { kind: 'receipt', receipt: { event_id: eventId, state: existing.state, accepted_at: acceptedAt } };
    const { writer } = this.#deps;
    const asyncScorer = this.#deps.asyncScorers[submission.environment];
    const refusal = asyncScorer.refusal(submission.projectId);
    if (refusal === 'project') {
      return unavailable(apiError('ASYNC_UNAVAILABLE', "This project's async events waiting to be scored reach the queue's bound: they cannot be scored yet (no published ruleset, or rules over the evaluation budget). Nothing was stored; publish a ruleset, then retry."));
    }
    if (refusal === 'queue') {
      return unavailable(apiError('ASYNC_UNAVAILABLE', `The ${submission.environment} async queue is full. Nothing was stored; retry with backoff.`));
    }
    // Storing a pending event of an account counts as work on it: an erasure waits for it, and an
    // event arriving during an erasure is stored after it (accounts/account-gate.ts).
    const externalId = externalAccountIdOf(submission.event);
    const gateKey = externalId === null ? null : AccountGate.key(submission.tenantId, submission.environment, externalId);
    // Counted against the bound from the check until queued: requests checked meanwhile see it.
    asyncScorer.reserve();
    let seq: number;
    try {
      if (gateKey !== null) await this.#deps.gate.enter(gateKey);
      try {
        seq = await writer.call('insertPendingEvent', { projectId: submission.projectId, eventId, eventType: submission.event.event_type, receivedAt: submission.receivedAt, payload: submission.payload });
        this.#deps.reader.stored(submission.projectId, eventId, seq);
      } catch (error) {
        return unavailable(causedBy(apiError('ASYNC_UNAVAILABLE', 'The event could not be stored. Nothing was stored; retry with backoff.'), error));
      } finally {
        if (gateKey !== null) this.#deps.gate.leave(gateKey);
      }
    } finally {
      asyncScorer.unreserve();
    }
    asyncScorer.enqueue({ ...jobOf(submission, eventId, submission.receivedAt), seq });
    return { kind: 'receipt', receipt: { event_id: eventId, state: 'pending', accepted_at: acceptedAt } };
  }

  /** GET /v1/scores/{event_id}: the stored result, or the pending state. */
  read(projectId: string, rawEventId: string): { kind: 'stored'; json: string } | { kind: 'pending'; body: object } | null {
    const eventId = rawEventId.toLowerCase();
    const stored = this.#deps.reader.find(projectId, eventId);
    if (stored === null) return null;
    if (stored.state === 'scored') return { kind: 'stored', json: stored.result! };
    if (stored.state === 'erased') return { kind: 'pending', body: erasedView(eventId, stored) };
    return { kind: 'pending', body: { event_id: eventId, state: 'pending', accepted_at: new Date(stored.received_at).toISOString() } };
  }
}

/** A 503 (nothing stored): the client retries after Retry-After seconds. */
function unavailable(error: ApiError): EventReply {
  return error.status === 503 ? { kind: 'error', error, retryAfterSeconds: kRetryAfterSeconds } : { kind: 'error', error };
}

/**
 * `error` for a sync request of an event accepted before as async: the event is stored, and stays
 * pending for the background scorer, whatever this request could not do.
 */
function stillPending(error: ApiError): ApiError {
  return { ...error, message: `This event was accepted earlier (async) and stays pending: it is scored in the background once it can be (GET /v1/scores/{event_id}). Scoring it now failed: ${error.message}` };
}

/** An async event whose account was erased before it was scored (docs/accounts.md). */
function erasedView(eventId: string, stored: StoredEvent): AsyncReceipt {
  return { event_id: eventId, state: 'erased', accepted_at: new Date(stored.received_at).toISOString() };
}

function jobOf(submission: Submission, eventId: string, receivedAt: number): ScoreJob {
  return {
    projectId: submission.projectId,
    tenantId: submission.tenantId,
    environment: submission.environment,
    eventId,
    event: submission.event,
    payload: submission.payload,
    receivedAt,
    ...(submission.requestId === undefined ? {} : { requestId: submission.requestId }),
  };
}

/** Interface, Idempotency 2: bodies are compared without `async`, in canonical form. */
function sameBody(existing: StoredEvent, event: EventInput): boolean {
  const storedHash = existing.body_hash ?? canonicalBodyHash(JSON.parse(existing.payload) as Record<string, unknown>);
  return storedHash === canonicalBodyHash(event as unknown as Record<string, unknown>);
}
