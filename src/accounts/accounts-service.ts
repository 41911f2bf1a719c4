// GET /v1/accounts/{id}/links and DELETE /v1/accounts/{id} (interface: Account link, the two
// routes; DESIGN: accounts belong to a tenant, a project sees the accounts it used).
import type { Statement } from 'better-sqlite3';
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import { keyedHash } from '../signals/keyed-hash.js';
import { externalAccountIdOf, velocityIdentifiers } from '../signals/identifiers.js';
import type { VelocityKeys, VelocityWindows } from '../signals/velocity.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { canonicalBodyHash } from '../scoring/idempotency.js';
import type { EventInput } from '../validation/event-input.js';
import { couldBeExternalId } from '../validation/external-id.js';
import type { DerivedFlusher } from './derived-flush.js';
import type { HotAccounts } from './hot-accounts.js';
import { AccountGate } from './account-gate.js';
import type { Environment } from '../auth/api-keys.js';
import type { Checkpointer } from '../store/checkpointer.js';
import type { FaultLatch } from '../shared/fault-latch.js';
import { scrubPayload } from './erasure.js';
import { decodeSeqs } from './event-seqs.js';
import { recordAudit } from '../audit/audit-store.js';
import { ErasableValues, eraseListValues } from '../lists/list-erasure.js';
import { eraseFingerprintSightings } from '../fingerprint/fingerprint-store.js';
import type { ListsClock } from '../lists/lists-clock.js';
import type { AsyncScorer } from '../scoring/async-scorer.js';
import { pendingEventErased, pendingEventSeqs, writeOpenedCasesOf } from '../scoring/event-store.js';
import { webhookAccountTail } from '../scoring/score-result.js';
import { payloadText } from '../scoring/stored-payload.js';
import type { UnfoldedCases } from '../cases/unfolded-cases.js';
import type { WebhookDeliverer } from '../webhooks/deliverer.js';

/** One entry of the links route (built by SQLite as account_links.entry; see migrations/004). */
export interface AccountLink {
  readonly signal_type: string;
  readonly account_public_id: string;
  readonly external_account_id: string;
  readonly masked_signal: string;
  readonly first_seen: string;
  readonly last_seen: string;
}

export interface ErasureSummary {
  /** null when the account had only async events that were not scored yet (no account yet). */
  readonly account_public_id: string | null;
  readonly erased_at: string;
  readonly erased: {
    /** Every event of the account, pending ones included. */
    readonly events: number;
    /** Of those, async events accepted and not yet scored: never scored now. */
    readonly pending_events: number;
    readonly signals: number;
    readonly links: number;
    readonly cases_unlinked: number;
    /** Items of the environment's lists that held the account's values (docs/lists.md, "Erasure"). */
    readonly list_items: number;
    /** Labels of its events, kept without the account (docs/events.md, "Labels"). */
    readonly labels_unlinked: number;
    /** Sightings of the devices its events named (docs/fingerprint.md, "What is stored"). */
    readonly device_sightings: number;
  };
  readonly already_erased: boolean;
}

export interface AccountsServiceDeps {
  readonly readDb: Db;
  readonly writer: AppWriter;
  /** The accounts in memory: an erased account leaves them when its erasure commits. */
  readonly hotAccounts: HotAccounts;
  /** Writes the rows that follow from scored events; an erasure has them written first. */
  readonly derived: DerivedFlusher;
  readonly velocity: VelocityWindows;
  readonly gate: AccountGate;
  readonly checkpointer: Checkpointer;
  readonly latch: FaultLatch;
  readonly secret: Buffer;
  readonly log: Logger;
  readonly now: () => number;
  /** Advanced after an erasure removed list items, so that no rule matches them again. */
  readonly listsClock: ListsClock;
  /** The account's erased pending events leave the background scorer's queue (and memory). */
  readonly asyncScorers: Readonly<Record<Environment, Pick<AsyncScorer, 'drop'>>>;
  /** Cases not written yet: the erasure writes the account's, to unlink them. */
  readonly unfoldedCases: Pick<UnfoldedCases, 'forget'>;
  /** Decision webhooks being sent: an erasure waits for those that read its account's id. */
  readonly webhooks: Pick<WebhookDeliverer, 'deliveriesUnderWay'>;
  /** Tests only (FAULT_INJECTION=erasure_read_fails): every erasure fails while reading its events. */
  readonly failErasureReads?: boolean;
}

/** The key's view: accounts are per tenant and environment; a project sees the accounts it used. */
export interface AccountScope {
  readonly tenantId: string;
  readonly environment: Environment;
  readonly projectId: string;
}

/**
 * How long an erasure keeps trying to empty the WAL before it answers 500 (the retry finishes it).
 * Each attempt waits for readers a few tens of milliseconds (writer-thread.ts, kStandaloneWaitMs),
 * holding the write lock meanwhile; between attempts the writer is free for kPurgePauseMs.
 */
const kPurgeBoundMs = 30_000;
const kPurgePauseMs = 100;

const kNotFound = (): ApiError => apiError('NOT_FOUND', 'No such account in this project.', 'id');

export class AccountsService {
  readonly #deps: AccountsServiceDeps;
  readonly #externalIdOf: Statement<[string, string, string], string>;
  readonly #erasedById: Statement<[string, string, string], ErasureRow>;
  readonly #erasedByExternalId: Statement<[string, string, string], ErasureRow>;

  constructor(deps: AccountsServiceDeps) {
    this.#deps = deps;
    const db = deps.readDb;
    this.#externalIdOf = db.prepare('SELECT external_account_id FROM accounts WHERE tenant_id = ? AND environment = ? AND account_id = ?')
      .pluck() as unknown as Statement<[string, string, string], string>;
    this.#erasedById = db.prepare('SELECT project_id, summary FROM erasures WHERE tenant_id = ? AND environment = ? AND account_id = ?');
    // Every erasure of the external id, newest first: the same external id may have named
    // accounts of other projects since, erased in their turn, which must not hide this project's.
    this.#erasedByExternalId = db.prepare(
      'SELECT project_id, summary FROM erasures WHERE tenant_id = ? AND environment = ? AND external_id_hash = ? ORDER BY erased_at DESC',
    );
  }

  /**
   * The answer's data as JSON text: { account_public_id, external_account_id, links: AccountLink[] },
   * from memory (the hot state holds every link, including those not yet written in bulk). Links
   * to accounts this project also used: a project never sees another project's accounts. The id
   * is an acc_ id or an external id (percent-decoded by the router: any characters).
   */
  links(scope: AccountScope, id: string): { ok: true; json: string } | { ok: false; error: ApiError } {
    if (!this.#mayNameLiveAccount(scope, id)) return { ok: false, error: kNotFound() };
    const json = this.#deps.hotAccounts.linksJson(scope.tenantId, scope.environment, scope.projectId, id);
    return json === null ? { ok: false, error: kNotFound() } : { ok: true, json };
  }

  /**
   * The acc_ id of the live account a path or query id names for the scope's project, read as
   * the links route reads it (the cases listing's `account` filter), or null.
   */
  accountNamed(scope: AccountScope, id: string): string | null {
    return this.#mayNameLiveAccount(scope, id) ? this.#deps.hotAccounts.accountNamed(scope.tenantId, scope.environment, scope.projectId, id) : null;
  }

  /** False when the id names no live account: it cannot be an external id, or it is an erased account's acc_ id (which still names it). */
  #mayNameLiveAccount(scope: AccountScope, id: string): boolean {
    return couldBeExternalId(id) && !this.#erasedAccountId(scope, id);
  }

  /**
   * DELETE /v1/accounts/{id} (docs/accounts.md, "Erasure"). A barrier: it waits for the account's
   * events being scored or stored, holds back new ones, erases everything of the account (pending
   * async events included), and answers only once the WAL no longer holds the old pages and no
   * webhook delivery naming the account is under way.
   * `acrossProjects`: erase an account that several live projects used (otherwise 403): the
   * operator's erasure only (accounts/operator-erasures.ts), never an API key's.
   */
  async erase(scope: AccountScope, id: string, acrossProjects: boolean, actor: string): Promise<ErasureAnswer> {
    const answer = await this.#erase(scope, id, acrossProjects, actor);
    // Outside the gate: the account's new events (a new account) need not wait for a receiver. A
    // retried DELETE waits too, whatever id it names the account by.
    if (answer.ok) await this.#webhooksNamingSent(answer.body.account_public_id);
    // For the operator's log: what went, never who (the external id is personal data; the acc_ id
    // names nothing any more, and the audit trail has it too).
    if (answer.ok && !answer.body.already_erased) {
      this.#deps.log.info('account erased', { project_id: scope.projectId, environment: scope.environment, actor, account_public_id: answer.body.account_public_id, ...answer.body.erased });
    }
    return answer;
  }

  async #erase(scope: AccountScope, id: string, acrossProjects: boolean, actor: string): Promise<ErasureAnswer> {
    const named = this.#named(scope, id);
    if (named.kind !== 'account') return this.#answerPrevious(scope, id, named.kind === 'erased');
    const { externalId, byPublicId } = named;
    const gateKey = AccountGate.key(scope.tenantId, scope.environment, externalId);
    const erasure = this.#deps.gate.exclusive(gateKey, async (): Promise<ErasureAnswer> => {
      const { writer, secret, now } = this.#deps;
      // The rows that follow from its events are written first, so that the erasure finds them
      // all; any made from here on (links from other accounts' events) wait and are dropped.
      await this.#deps.derived.flush();
      const held = this.#deps.hotAccounts.holdRows(scope.tenantId, scope.environment, externalId);
      const request: ErasureRequest = {
        ...scope,
        externalId,
        externalIdHash: keyedHash(secret, 'external_id', externalId),
        acrossProjects,
        now: now(),
        actor,
        ...(byPublicId ? { accountId: id } : {}),
        linksInMemory: held?.links ?? [],
        signalFirstSeensInMemory: held?.signalFirstSeens ?? null,
        ...(this.#deps.failErasureReads === true ? { failReadingEvents: true } : {}),
      };
      let outcome: ErasureOutcome;
      try {
        outcome = await writer.call('eraseAccount', request);
      } catch (error) {
        if (held !== null) this.#deps.hotAccounts.releaseRows(held.accountId);
        return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The account could not be erased; nothing was changed. Retry the request.'), error) };
      }
      if (outcome.kind !== 'erased' && held !== null) this.#deps.hotAccounts.releaseRows(held.accountId);
      if (outcome.kind === 'not_found') return this.#answerPrevious(scope, id, byPublicId);
      if (outcome.kind === 'shared') {
        return { ok: false, error: apiError('ACCOUNT_SHARED_ACROSS_PROJECTS', 'The account was used by several live projects; the operator erases it in all of them (fraud-scorer accounts erase).', 'id') };
      }
      this.#deps.listsClock.advance(outcome.listsSeq);
      this.#deps.hotAccounts.erased(scope.tenantId, scope.environment, externalId);
      this.#deps.asyncScorers[scope.environment].drop(outcome.pendingSeqs);
      for (const caseId of outcome.casesWritten) this.#deps.unfoldedCases.forget(caseId);
      for (const { projectId, keys, amountCents, at } of outcome.velocityEvents) this.#deps.velocity.forgetEvent(projectId, keys, amountCents, at);
      if (!(await this.purgeOldPages())) return this.#purgeFailed();
      return { ok: true, body: outcome.summary };
    });
    // The gate is closed from here on: tests (FAULT_INJECTION=hold_points) wait for this mark.
    this.#deps.latch.mark('erasure-gate-closed');
    return erasure;
  }

  /**
   * What a path id names (docs/accounts.md): an account's acc_ id, live or erased, names that
   * account, never one whose external id it is — so that a retried DELETE by acc_ id answers the
   * first one instead of erasing the account that reused the id as its external id. Otherwise the
   * id is an external id; `nothing` when it cannot be one.
   */
  #named(scope: AccountScope, id: string):
    | { readonly kind: 'account'; readonly externalId: string; readonly byPublicId: boolean }
    | { readonly kind: 'erased' | 'nothing' } {
    if (id.startsWith('acc_')) {
      const external = this.#externalIdOf.get(scope.tenantId, scope.environment, id);
      if (external !== undefined) return { kind: 'account', externalId: external, byPublicId: true };
      if (this.#erasedAccountId(scope, id)) return { kind: 'erased' };
    }
    return couldBeExternalId(id) ? { kind: 'account', externalId: id, byPublicId: false } : { kind: 'nothing' };
  }

  /** The id is the acc_ id of an account of the scope's tenant and environment that was erased. */
  #erasedAccountId(scope: AccountScope, id: string): boolean {
    return id.startsWith('acc_') && this.#erasedById.get(scope.tenantId, scope.environment, id) !== undefined;
  }

  /**
   * A retried DELETE answers the first one's summary, once the files are clean — to a project
   * that used the account (as the first DELETE was): to any other, the account is unknown (404).
   * `byPublicId`: the id is an account's acc_ id, so only that account's erasure answers it.
   */
  async #answerPrevious(scope: AccountScope, id: string, byPublicId: boolean): Promise<ErasureAnswer> {
    const byId = id.startsWith('acc_') ? this.#erasedById.get(scope.tenantId, scope.environment, id) : undefined;
    const rows = byId !== undefined ? [byId] : byPublicId ? [] : this.#erasedByExternalId.all(scope.tenantId, scope.environment, keyedHash(this.#deps.secret, 'external_id', id));
    // The newest erasure of an account this project used: an account of the same external id
    // that only other projects used, erased later, is not this project's (issue: a retried DELETE
    // turned from 200 into 404 once another project had erased its own account of that id).
    const summary = rows.map(erasedSummary).find(({ usedBy }) => usedBy.includes(scope.projectId))?.summary;
    if (summary === undefined) return { ok: false, error: kNotFound() };
    if (!(await this.purgeOldPages())) return this.#purgeFailed();
    return { ok: true, body: { ...summary, already_erased: true } };
  }

  /**
   * The outbox no longer names the account (unlinkWebhookMessages, committed), but a delivery that
   * read one of its messages before may still be sending it: the answer waits for those to end
   * (each within WEBHOOK_TIMEOUT_MS). Every later attempt reads the scrubbed message.
   */
  async #webhooksNamingSent(accountId: string | null): Promise<void> {
    if (accountId === null) return;
    const tail = `${webhookAccountTail(accountId)}}`;
    const underWay = this.#deps.webhooks.deliveriesUnderWay((payload) => payload.endsWith(tail));
    if (underWay.length === 0) return;
    // Tests (FAULT_INJECTION=hold_points) wait for this mark, then let the receiver answer.
    this.#deps.latch.mark('erasure-waits-for-webhooks');
    await Promise.allSettled(underWay);
  }

  /**
   * Old versions of the erased rows survive in the WAL until a checkpoint copies the new pages
   * over them; secure_delete (set on the writer) zeroes freed space in the main file. A TRUNCATE
   * checkpoint then empties the WAL, so the raw values are in no file. It runs on the writer's
   * connection, with the checkpointer thread paused so that no other checkpoint holds the lock;
   * each attempt waits for readers briefly, since it holds the write lock meanwhile and every
   * event's write waits with it (a backup's long read would otherwise stall scoring for seconds
   * per attempt), and the attempts go on, kPurgePauseMs apart, for up to kPurgeBoundMs. (Also
   * for the operator's erasure whose id named nothing: the id is personal.)
   */
  #purgeFailed(): ErasureAnswer {
    this.#deps.log.error('erasure: the WAL could not be emptied; the erasure is answered 500 (INTERNAL_ERROR), to be retried');
    return { ok: false, error: kPurgeFailed() };
  }

  async purgeOldPages(): Promise<boolean> {
    return this.#deps.checkpointer.whilePaused(async () => {
      const deadline = Date.now() + kPurgeBoundMs;
      for (;;) {
        let busy = 1;
        try {
          busy = await this.#deps.writer.call('checkpointTruncate');
        } catch {
          // SQLITE_BUSY from another process's checkpoint or lock: try again
        }
        if (busy === 0) return true;
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, kPurgePauseMs));
      }
    });
  }
}

export type ErasureAnswer = { ok: true; body: ErasureSummary } | { ok: false; error: ApiError };

const kPurgeFailed = (): ApiError => apiError('INTERNAL_ERROR', 'The account was erased, but old copies could not yet be removed from the database files. Retry the request.');

export interface ErasureRequest extends AccountScope {
  readonly externalId: string;
  readonly externalIdHash: string;
  readonly acrossProjects: boolean;
  readonly now: number;
  /** The key id that asked, for the audit trail. */
  readonly actor: string;
  /**
   * The request named the account by this acc_ id: only that account is erased. Another account of
   * the external id (made by an event that waited behind an earlier erasure of it) is not_found
   * here, and the request is answered as a retry of that erasure.
   */
  readonly accountId?: string;
  /**
   * The account's links as memory holds them: [other account's acc_ id, account_links.signal_type].
   * The two rows of a link are written by different parts of a bulk write, so the other account's
   * row can be stored while the account's own is not (its part failed): only memory knows it.
   */
  readonly linksInMemory: ReadonlyArray<readonly [otherAccountId: string, linkType: string]>;
  /**
   * The distinct first seens (whole seconds) of the account's values as memory holds them: its
   * rows of account_signals are keyed (first_seen_s, account_id, …) (migration 26), and every row
   * written came from memory. null: the account is not in memory (its rows are then looked for
   * through the whole table).
   */
  readonly signalFirstSeensInMemory: readonly number[] | null;
  /** Tests only (FAULT_INJECTION=erasure_read_fails): reading the account's events fails. */
  readonly failReadingEvents?: true;
}

export type ErasureOutcome =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'shared' }
  | {
      readonly kind: 'erased';
      readonly summary: ErasureSummary;
      /** The account's scored events as the velocity windows counted them, to take out of them. */
      readonly velocityEvents: Array<{ projectId: string; keys: VelocityKeys; amountCents: number; at: number }>;
      /** The lists clock after the erasure (it removed list items when it moved). */
      readonly listsSeq: number;
      /** The rows of the account's pending async events, erased before they were scored. */
      readonly pendingSeqs: number[];
      /** The account's cases opened and not written yet, written (and unlinked) by the erasure. */
      readonly casesWritten: string[];
    };

/** A row of erasures, as a retried DELETE reads it. */
interface ErasureRow {
  project_id: string;
  /** The summary answered (JSON), with the projects that used the account (`used_by`). */
  summary: string;
}

/** A row's summary, and the projects it is answered to (rows of erasures before used_by was kept name the erasing project only). */
function erasedSummary(row: ErasureRow): { summary: Omit<ErasureSummary, 'already_erased'>; usedBy: string[] } {
  const { used_by: usedBy, ...summary } = JSON.parse(row.summary) as Omit<ErasureSummary, 'already_erased'> & { used_by?: string[] };
  return { summary, usedBy: usedBy ?? [row.project_id] };
}

/**
 * Deletes the account's rows of account_signals; returns how many. Keyed by first seen (migration
 * 26), they are found through the seconds memory knows; an account memory does not hold (none of
 * its rows can have been written from memory, but a row put there otherwise would stay) is looked
 * for through the whole table.
 */
function eraseSignalRows(db: Db, accountId: string, firstSeens: readonly number[] | null): number {
  if (firstSeens === null) return db.prepare('DELETE FROM account_signals WHERE account_id = ?').run(accountId).changes;
  const atSecond = db.prepare('DELETE FROM account_signals WHERE first_seen_s = ? AND account_id = ?');
  let erased = 0;
  for (const second of firstSeens) erased += atSecond.run(second, accountId).changes;
  return erased;
}

interface ErasedEventRow {
  seq: number;
  project_id: string;
  received_at: number;
  state: string;
  payload: string;
  body_hash: string | null;
}

/**
 * Write command: erases the account (its scored events' personal data, its pending async events,
 * signals, links, project rows, the account row) unless it is shared across projects and
 * `acrossProjects` is off. Returns the summary and the velocity keys its events used, for the
 * caller to drop from memory.
 */
export function eraseAccount(db: Db, request: ErasureRequest): ErasureOutcome {
  const { tenantId, environment, projectId, externalId, now } = request;
  const account = db.prepare('SELECT account_id FROM accounts WHERE tenant_id = ? AND environment = ? AND external_account_id = ?')
    .get(tenantId, environment, externalId) as { account_id: string } | undefined;
  const accountId = account?.account_id ?? null;
  if (request.accountId !== undefined && accountId !== request.accountId) return { kind: 'not_found' };
  const projects = accountId === null ? [] : (db.prepare('SELECT project_id FROM account_projects WHERE account_id = ?').pluck().all(accountId) as string[]);
  // Accepted async events not yet scored carry no account id yet: found by their external id,
  // among the pending events of the tenant and environment's projects only.
  const pendingRow = db.prepare("SELECT seq, project_id, state, payload, body_hash, received_at FROM events WHERE seq = ? AND state = 'pending'");
  const ownProjects = db.prepare('SELECT project_id FROM projects WHERE tenant_id = ? AND environment = ?').pluck().all(tenantId, environment) as string[];
  const pending: ErasedEventRow[] = [];
  for (const seq of pendingEventSeqs(db, ownProjects)) {
    const row = pendingRow.get(seq) as ErasedEventRow | undefined;
    if (row === undefined) continue;
    const decoded = withPayloadText(row);
    if (externalIdOfPayload(decoded.payload) === externalId) pending.push(decoded);
  }
  const usedBy = new Set([...projects, ...pending.map((row) => row.project_id)]);
  if (!usedBy.has(projectId)) return { kind: 'not_found' };
  if (usedBy.size > 1 && !request.acrossProjects) return { kind: 'shared' };

  const scored = accountId === null ? [] : accountEvents(db, accountId);
  const scrub = db.prepare('UPDATE events SET payload = ?, body_hash = ?, account_id = NULL, state = ? WHERE seq = ?');
  const velocityEvents: Array<{ projectId: string; keys: VelocityKeys; amountCents: number; at: number }> = [];
  const signals = accountId === null ? 0 : eraseSignalRows(db, accountId, request.signalFirstSeensInMemory);
  // The account's values as lists hold them, gathered before its events lose them.
  const listValues = new ErasableValues(externalId);
  for (const event of [...scored, ...pending]) {
    let bodyHash = event.body_hash;
    // Only a payload that is not JSON (nothing the service writes) is passed over. Any other
    // failure (a module that cannot be loaded) fails the erasure, which changes nothing and is
    // retried: passed over, it scrubbed the event without its body hash, and every retry of the
    // event's request was then refused as another body (409).
    let body: EventInput | null = null;
    try {
      body = JSON.parse(event.payload) as EventInput;
    } catch {
      // not JSON: passed over
    }
    if (body !== null) {
      if (request.failReadingEvents === true) throw new Error('erasure_read_fails (fault injection)');
      listValues.addEvent(body);
      const ids = velocityIdentifiers(body);
      // Only scored events were counted (after their commit); a pending one never was.
      if (event.state === 'scored') {
        velocityEvents.push({ projectId: event.project_id, keys: { cardToken: ids.cardToken, ip: ids.ip, accountId, email: ids.email, fp: ids.fp }, amountCents: ids.amountCents, at: event.received_at });
      }
      // Kept so that a retry of the same request is still recognised (and a different body refused).
      bodyHash ??= canonicalBodyHash(body as unknown as Record<string, unknown>);
    }
    // A pending event is never scored now: its state says why (GET /v1/scores answers 'erased').
    scrub.run(scrubPayload(event.payload), bodyHash, event.state === 'pending' ? 'erased' : event.state, event.seq);
    if (event.state === 'pending') pendingEventErased(db, event.project_id, event.seq);
  }
  let links = 0;
  let cases = 0;
  let casesWritten: string[] = [];
  let unlinkedCases: Array<[projectId: string, caseId: string]> = [];
  let labels = 0;
  if (accountId !== null) {
    // Labels stay (what the events turned out to be); they no longer say whose they were.
    labels = db.prepare('UPDATE event_labels SET account_id = NULL WHERE account_id = ?').run(accountId).changes;
    // Each link's other row, found from the account's own rows and from memory (rows not all written).
    const reverse = db.prepare('DELETE FROM account_links WHERE account_id = ? AND signal_type = ? AND other_account_id = ?');
    const own = db.prepare('SELECT other_account_id, signal_type FROM account_links WHERE account_id = ?').raw().all(accountId) as Array<[string, string]>;
    const linked = new Map<string, readonly [string, string]>();
    for (const link of [...own, ...request.linksInMemory]) linked.set(`${link[0]}\u0000${link[1]}`, link);
    for (const [other, type] of linked.values()) reverse.run(other, type, accountId);
    links = linked.size;
    db.prepare('DELETE FROM account_links WHERE account_id = ?').run(accountId);
    // Its cases not written yet are written first, and unlinked with the others.
    casesWritten = writeOpenedCasesOf(db, accountId);
    // A change of the case, so updated_at moves forward whatever the clock did (cases-service.ts).
    unlinkedCases = db.prepare('UPDATE cases SET account_id = NULL, updated_at = max(updated_at + 1, ?) WHERE account_id = ? RETURNING project_id, case_id').raw().all(now, accountId) as Array<[string, string]>;
    cases = unlinkedCases.length;
    unlinkWebhookMessages(db, accountId);
    db.prepare('DELETE FROM account_projects WHERE account_id = ?').run(accountId);
    db.prepare('DELETE FROM account_event_seqs WHERE account_id = ?').run(accountId);
    db.prepare('DELETE FROM accounts WHERE account_id = ?').run(accountId);
  }
  const lists = eraseListValues(db, tenantId, environment, listValues, now);
  const sightings = eraseFingerprintSightings(db, tenantId, environment, listValues.of('fp'));
  const summary: ErasureSummary = {
    account_public_id: accountId,
    erased_at: new Date(now).toISOString(),
    erased: {
      events: scored.length + pending.length, pending_events: pending.length, signals, links, cases_unlinked: cases,
      list_items: lists.removed, labels_unlinked: labels, device_sightings: sightings,
    },
    already_erased: false,
  };
  // The trail names the account by its acc_ id (or, known only from queued events, by the keyed
  // hash the erasures table keeps): never by the external id, which may itself be personal. Every
  // project that used the account has the record in its own trail: an erasure across projects
  // changed their data too, and says which project asked (`by_project`). Each names only its own
  // lists; every list the erasure took items from, whichever project of the tenant's side holds
  // it, has a record of its own in that project's trail (its owners see who changed it, and when).
  const erasedAccount = accountId ?? `pending:${request.externalIdHash}`;
  const byProject = (project: string): Record<string, string> => (project === projectId ? {} : { by_project: projectId });
  for (const usedByProject of [projectId, ...[...usedBy].filter((other) => other !== projectId).sort()]) {
    const ownLists = lists.lists.filter((list) => list.projectId === usedByProject).map((list) => `${list.projectId}/${list.listId}`);
    recordAudit(db, {
      projectId: usedByProject, actor: request.actor, action: 'account.erase', target: `account:${erasedAccount}`,
      summary: { ...summary.erased, across_projects: usedBy.size > 1, lists: ownLists, ...byProject(usedByProject) },
      at: now,
    });
  }
  // Every change of a case is in its project's trail (docs/cases.md): so is the erasure's.
  for (const [caseProject, caseId] of unlinkedCases) {
    recordAudit(db, {
      projectId: caseProject, actor: request.actor, action: 'case.change', target: `case:${caseId}`,
      summary: { account_erased: erasedAccount, ...byProject(caseProject) },
      at: now,
    });
  }
  for (const list of lists.lists) {
    recordAudit(db, {
      projectId: list.projectId, actor: request.actor, action: 'list.items_erase', target: `list:${list.listId}`,
      summary: { removed: list.removed, account: erasedAccount, ...byProject(list.projectId) },
      at: now,
    });
  }
  db.prepare('INSERT OR REPLACE INTO erasures (tenant_id, environment, account_id, external_id_hash, project_id, erased_at, summary) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    // used_by: the projects a retried DELETE is answered to (never shown).
    tenantId, environment, accountId ?? `pending:${request.externalIdHash}`, request.externalIdHash, projectId, now, JSON.stringify({ ...summary, already_erased: undefined, used_by: [...usedBy] }),
  );
  return { kind: 'erased', summary, velocityEvents, listsSeq: lists.seq, pendingSeqs: pending.map((event) => event.seq), casesWritten };
}

/**
 * Decision webhooks of the account's events, queued or sent, no longer name it: their payloads
 * end with its acc_ id (score-result.ts, webhookAccountTail), which goes — as the events
 * themselves lose their account. A message not yet delivered is still delivered, without it (the
 * decision is the event's, which stays). One pass over the outbox (it has no index by account,
 * and an erasure is rare; messages are pruned after a week).
 */
function unlinkWebhookMessages(db: Db, accountId: string): number {
  const tail = `${webhookAccountTail(accountId)}}`;
  return db.prepare("UPDATE webhook_outbox SET payload = substr(payload, 1, length(payload) - length(@tail)) || '}}' WHERE substr(payload, -length(@tail)) = @tail").run({ tail }).changes;
}

/**
 * The account's stored events (migration 17): the seqs listed with its row and in
 * account_event_seqs — every event up to the row's counted_order — and, from the end of the log,
 * the events scored since the derived rows' stamp (listed with the next batch, or held back for
 * this erasure). Each row is checked to be the account's: a list may name a seq twice.
 */
function accountEvents(db: Db, accountId: string): ErasedEventRow[] {
  const seqs: number[] = [];
  const open = db.prepare('SELECT event_seqs FROM accounts WHERE account_id = ?').pluck().get(accountId) as Buffer | undefined;
  if (open !== undefined) decodeSeqs(open, seqs);
  for (const chunk of db.prepare('SELECT seqs FROM account_event_seqs WHERE account_id = ?').pluck().all(accountId) as Buffer[]) decodeSeqs(chunk, seqs);
  const recent = db.prepare('SELECT seq FROM events WHERE seq >= (SELECT from_seq FROM derived_stamp WHERE id = 1) AND account_id = ?').pluck();
  for (const seq of recent.all(accountId) as number[]) seqs.push(seq);
  const event = db.prepare('SELECT seq, project_id, state, payload, body_hash, received_at FROM events WHERE seq = ? AND account_id = ?');
  const rows: ErasedEventRow[] = [];
  for (const seq of [...new Set(seqs)].sort((a, b) => a - b)) {
    const row = event.get(seq, accountId) as ErasedEventRow | undefined;
    if (row !== undefined) rows.push(withPayloadText(row));
  }
  return rows;
}

function withPayloadText(row: ErasedEventRow): ErasedEventRow {
  return { ...row, payload: payloadText(row.payload) };
}

function externalIdOfPayload(payload: string): string | null {
  try {
    return externalAccountIdOf(JSON.parse(payload) as EventInput);
  } catch {
    return null;
  }
}

/**
 * Write command: a TRUNCATE checkpoint from the writer's connection; returns 1 when readers kept
 * it from completing (SQLite's "busy").
 */
export function checkpointTruncate(db: Db): number {
  return (db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>)[0]!.busy;
}
