// Delivers decision webhooks from the persisted outbox (DESIGN §4): at least once, in the order
// they became due, retried with exponential backoff and jitter until WEBHOOK_RETRY_HOURS have
// passed since the decision. Nothing is held only in memory: a message is marked delivered after
// the receiver answered 2xx, so a crash in between delivers it again (receivers de-duplicate by
// webhook-id), and a restart resumes from the table.
import type { Statement } from 'better-sqlite3';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { retryDelayMs, signingSecrets, signWebhook, type SecretsOfWebhook } from './signature.js';
import { dueMessages, kNoWebhook, type OutboxMessage } from './webhook-store.js';

export interface DeliveryOptions {
  readonly retryBaseMs: number;
  readonly retryMaxDelayMs: number;
  readonly retryHours: number;
  readonly timeoutMs: number;
}

const kConcurrency = 16;
/**
 * Of those, one project's at most: a receiver that hangs until the timeout, or fails, holds no
 * more, and the other projects' messages (the live project's beside a sandbox's) go on.
 */
const kPerProject = 4;
const kPollIntervalMs = 1000;
const kPruneIntervalMs = 60 * 60_000;
const kKeepFinishedMs = 7 * 86_400_000;
const kUserAgent = 'fraud-scorer-webhooks/1';

export class WebhookDeliverer {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #options: DeliveryOptions;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #config: Statement<[string], SecretsOfWebhook & { url: string }>;
  readonly #pendingCount: Statement<[], { n: number }>;
  readonly #projects: Statement<[], string>;
  /** Deliveries under way by message seq, with the payload each read (an erasure asks for them). */
  readonly #inFlight = new Map<number, { readonly delivery: Promise<void>; readonly payload: string }>();
  readonly #inFlightByProject = new Map<string, number>();
  /** Where the next full poll starts in the list of projects: each gets to fill slots first in turn. */
  #nextProject = 0;
  /** A poll stopped at kConcurrency: a slot that frees goes to any project, not only its own. */
  #full = false;
  #timer: NodeJS.Timeout | null = null;
  #pruneTimer: NodeJS.Timeout | null = null;
  #polling = false;
  #stopped = false;
  delivered = 0;
  failures = 0;

  constructor(readDb: Db, writer: AppWriter, options: DeliveryOptions, log: Logger, now: () => number = Date.now) {
    this.#readDb = readDb;
    this.#writer = writer;
    this.#options = options;
    this.#log = log;
    this.#now = now;
    this.#config = readDb.prepare('SELECT url, secret, previous_secret, previous_secret_until FROM webhooks WHERE project_id = ?');
    this.#pendingCount = readDb.prepare('SELECT count(*) AS n FROM webhook_outbox WHERE delivered_at IS NULL AND abandoned_at IS NULL');
    // Removing a webhook abandons its project's messages: only projects with one have messages due.
    this.#projects = readDb.prepare('SELECT project_id FROM webhooks ORDER BY project_id').pluck() as Statement<[], string>;
  }

  /** Messages not yet delivered nor abandoned (for /metrics). */
  get pending(): number {
    return this.#pendingCount.get()!.n;
  }

  start(): void {
    this.#timer = setInterval(() => this.poke(), kPollIntervalMs);
    // At start too: a server restarted more often than the interval would otherwise never prune.
    this.#pruneTimer = setInterval(() => this.#pruneFinished(), kPruneIntervalMs);
    this.#pruneTimer.unref();
    this.#pruneFinished();
    this.poke();
  }

  #pruneFinished(): void {
    void this.#writer.call('pruneFinished', this.#now() - kKeepFinishedMs).catch(() => undefined);
  }

  /**
   * Looks for due messages now: of `projectId` (after its decision was committed, or one of its
   * deliveries ended), or of every project (the timer, a redelivery).
   */
  poke(projectId?: string): void {
    if (this.#polling || this.#stopped) return;
    this.#polling = true;
    try {
      if (projectId !== undefined) {
        this.#fill(projectId);
        return;
      }
      const projects = this.#projects.all();
      const start = projects.length === 0 ? 0 : this.#nextProject++ % projects.length;
      this.#full = false;
      for (let i = 0; i < projects.length && !this.#full; i++) this.#fill(projects[(start + i) % projects.length]!);
    } catch (error) {
      this.#log.error('webhook outbox read failed', { error });
    } finally {
      this.#polling = false;
    }
  }

  /** Starts deliveries of the project's due messages, within its share and the free slots. */
  #fill(projectId: string): void {
    const busy = this.#inFlightByProject.get(projectId) ?? 0;
    const free = Math.min(kPerProject - busy, kConcurrency - this.#inFlight.size);
    if (this.#inFlight.size >= kConcurrency) this.#full = true;
    if (free <= 0) return;
    // Its messages in flight are still due: asked for beyond them.
    let started = 0;
    for (const message of dueMessages(this.#readDb, projectId, this.#now(), free + busy)) {
      if (started === free) break;
      if (this.#inFlight.has(message.seq)) continue;
      this.#start(message);
      started++;
    }
    if (this.#inFlight.size >= kConcurrency) this.#full = true;
  }

  #start(message: OutboxMessage): void {
    const project = message.project_id;
    this.#inFlightByProject.set(project, (this.#inFlightByProject.get(project) ?? 0) + 1);
    const delivery = this.#deliver(message).finally(() => {
      this.#inFlight.delete(message.seq);
      const left = this.#inFlightByProject.get(project)! - 1;
      if (left === 0) this.#inFlightByProject.delete(project);
      else this.#inFlightByProject.set(project, left);
      if (!this.#stopped) setImmediate(() => this.poke(this.#full ? undefined : project));
    });
    this.#inFlight.set(message.seq, { delivery, payload: message.payload });
  }

  /**
   * The deliveries under way whose payload `names`, each ending within the request timeout. An
   * erasure waits for those that read its account's messages before it scrubbed them, so that
   * when DELETE answers, no request naming the account is still on its way to the receiver.
   */
  deliveriesUnderWay(names: (payload: string) => boolean): Array<Promise<void>> {
    const found: Array<Promise<void>> = [];
    for (const { delivery, payload } of this.#inFlight.values()) if (names(payload)) found.push(delivery);
    return found;
  }

  /** Stops sending; waits for deliveries under way (each is bounded by the request timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    if (this.#pruneTimer !== null) clearInterval(this.#pruneTimer);
    await Promise.allSettled([...this.#inFlight.values()].map((under) => under.delivery));
  }

  async #deliver(message: OutboxMessage): Promise<void> {
    const config = this.#config.get(message.project_id);
    const attemptedAt = this.#now();
    let error: string;
    if (config === undefined) {
      error = kNoWebhook;
    } else {
      error = await this.#post(config.url, signingSecrets(config, attemptedAt), message, attemptedAt);
      if (error === '') {
        this.delivered++;
        await this.#record(() => this.#writer.call('markDelivered', message.seq, message.retry_from, this.#now()));
        return;
      }
    }
    this.failures++;
    const attempt = message.attempts + 1;
    // From the attempt's end: after a timeout, the receiver gets its pause before the next try.
    const next = this.#now() + retryDelayMs(message.window_attempts + 1, this.#options.retryBaseMs, this.#options.retryMaxDelayMs);
    const giveUp = config === undefined || next - message.retry_from > this.#options.retryHours * 3_600_000;
    if (giveUp) this.#log.warn('webhook abandoned', { message_id: message.message_id, project_id: message.project_id, attempts: attempt, error });
    await this.#record(() => this.#writer.call('markFailed', message.seq, message.retry_from, error, giveUp ? null : next, this.#now()));
  }

  /** '' on a 2xx answer, else what went wrong. */
  async #post(url: string, secrets: readonly string[], message: OutboxMessage, at: number): Promise<string> {
    const headers = signWebhook(secrets, message.message_id, Math.floor(at / 1000), message.payload);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': kUserAgent, ...headers },
        body: message.payload,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 300 ? '' : `HTTP ${response.status}`;
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') return `no answer within ${this.#options.timeoutMs} ms`;
      // fetch says only "fetch failed"; its cause says why (connection refused, a name that does
      // not resolve, a reset). Listed to any scores:read key (GET /v1/webhooks/deliveries): the
      // URL's path and query may carry the receiver's token, so the error names the URL's origin only.
      const cause = (error as Error).cause;
      const why = cause instanceof Error ? `${(error as Error).message}: ${cause.message}` : (error as Error).message;
      return withoutUrl(why, url);
    }
  }

  async #record(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      // The message stays due and is sent again: at least once.
      this.#log.error('webhook outbox update failed', { error });
    }
  }
}

/** `message` with `url` (as given, or as URL prints it) replaced by its origin. */
function withoutUrl(message: string, url: string): string {
  let origin: string;
  let normalised: string;
  try {
    const parsed = new URL(url);
    origin = parsed.origin;
    normalised = parsed.href;
  } catch {
    return message.split(url).join('<the webhook URL>');
  }
  return message.split(url).join(origin).split(normalised).join(origin);
}
