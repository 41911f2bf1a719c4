// GET /v1/accounts/{id}/links and DELETE /v1/accounts/{id} (interface: Account link, the two
// routes; DESIGN: accounts belong to a tenant, a project sees the accounts it used).
import type { Statement } from 'better-sqlite3';
import { apiError, type ApiError } from '../shared/errors.js';
import { keyedHash } from '../signals/keyed-hash.js';
import { velocityIdentifiers } from '../signals/identifiers.js';
import type { VelocityKeys, VelocityWindows } from '../signals/velocity.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import { canonicalBodyHash } from '../scoring/idempotency.js';
import { kUrlSafeExternalId, type EventInput } from '../validation/event-input.js';
import type { AccountDirectory } from './account-directory.js';
import { scrubPayload } from './erasure.js';
import { analyzePhone } from '../signals/phone.js';
import { storedIdentifiers } from '../signals/stored-identifiers.js';
import type { RecentSignalWrites } from '../signals/recent-writes.js';

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
  readonly account_public_id: string;
  readonly erased_at: string;
  readonly erased: {
    readonly events: number;
    readonly signals: number;
    readonly links: number;
    readonly cases_unlinked: number;
  };
  readonly already_erased: boolean;
}

interface AccountRow {
  account_id: string;
  external_account_id: string;
}

export interface AccountsServiceDeps {
  readonly readDb: Db;
  readonly writer: AppWriter;
  readonly directory: AccountDirectory;
  readonly recentSignalWrites: RecentSignalWrites;
  readonly velocity: VelocityWindows;
  readonly secret: Buffer;
  readonly log: Logger;
  readonly now: () => number;
}

const kNotFound = (): ApiError => apiError('NOT_FOUND', 'No such account in this project.', 'id');

export class AccountsService {
  readonly #deps: AccountsServiceDeps;
  readonly #byId: Statement<[string, string, string], AccountRow>;
  readonly #byExternalId: Statement<[string, string, string], AccountRow>;
  readonly #links: Statement<[string, string], string>;
  readonly #erasedById: Statement<[string, string], { summary: string }>;
  readonly #erasedByExternalId: Statement<[string, string], { summary: string }>;

  constructor(deps: AccountsServiceDeps) {
    this.#deps = deps;
    const db = deps.readDb;
    const visible = 'JOIN account_projects ap ON ap.account_id = a.account_id AND ap.project_id = ?';
    this.#byId = db.prepare(`SELECT a.account_id, a.external_account_id FROM accounts a ${visible} WHERE a.tenant_id = ? AND a.account_id = ?`);
    this.#byExternalId = db.prepare(`SELECT a.account_id, a.external_account_id FROM accounts a ${visible} WHERE a.tenant_id = ? AND a.external_account_id = ?`);
    // Links to accounts this project also used: a project never sees another project's accounts.
    // The link row says which projects used the other account and holds its own JSON, so a
    // thousand links are one range scan and a string join; the primary key's order spares a sort.
    this.#links = db.prepare(
      `SELECT entry FROM account_links WHERE account_id = ? AND instr(other_projects, ?) > 0 ORDER BY signal_type, other_account_id`,
    ).pluck() as unknown as Statement<[string, string], string>;
    this.#erasedById = db.prepare('SELECT summary FROM erasures WHERE tenant_id = ? AND account_id = ?');
    this.#erasedByExternalId = db.prepare('SELECT summary FROM erasures WHERE tenant_id = ? AND external_id_hash = ? ORDER BY erased_at DESC LIMIT 1');
  }

  /** The account behind a path id: an acc_ id, or an external id made of URL-safe characters. */
  #resolve(tenantId: string, projectId: string, id: string): AccountRow | null {
    if (id.startsWith('acc_')) {
      const byId = this.#byId.get(projectId, tenantId, id);
      if (byId !== undefined) return byId;
    }
    if (!kUrlSafeExternalId.test(id)) return null;
    return this.#byExternalId.get(projectId, tenantId, id) ?? null;
  }

  /** The answer's data as JSON text: { account_public_id, external_account_id, links: AccountLink[] }. */
  links(tenantId: string, projectId: string, id: string): { ok: true; json: string } | { ok: false; error: ApiError } {
    const account = this.#resolve(tenantId, projectId, id);
    if (account === null) return { ok: false, error: kNotFound() };
    const entries = this.#links.all(account.account_id, `,${projectId},`);
    return {
      ok: true,
      json: `{"account_public_id":${JSON.stringify(account.account_id)},"external_account_id":${JSON.stringify(account.external_account_id)},"links":[${entries.join(',')}]}`,
    };
  }

  async erase(tenantId: string, projectId: string, id: string): Promise<{ ok: true; body: ErasureSummary } | { ok: false; error: ApiError }> {
    const account = this.#resolve(tenantId, projectId, id);
    if (account === null) {
      const previous = this.#previousErasure(tenantId, id);
      return previous === null ? { ok: false, error: kNotFound() } : { ok: true, body: { ...previous, already_erased: true } };
    }
    const { writer, secret, now } = this.#deps;
    let outcome: ErasureOutcome;
    try {
      outcome = await writer.call('eraseAccount', tenantId, projectId, account, keyedHash(secret, 'external_id', account.external_account_id), secret, now());
    } catch (error) {
      this.#deps.log.error('erasure failed', { account_id: account.account_id, error });
      return { ok: false, error: apiError('INTERNAL_ERROR', 'The account could not be erased; nothing was changed. Retry the request.') };
    }
    if (outcome.kind === 'shared') return { ok: false, error: apiError('ACCOUNT_SHARED_ACROSS_PROJECTS', undefined, 'id') };
    this.#deps.directory.forget(tenantId, account.external_account_id);
    this.#deps.recentSignalWrites.forgetAccount(account.account_id);
    for (const keys of outcome.velocityKeys) this.#deps.velocity.forget(projectId, keys);
    await this.#purgeOldPages();
    return { ok: true, body: outcome.summary };
  }

  #previousErasure(tenantId: string, id: string): Omit<ErasureSummary, 'already_erased'> | null {
    const row = id.startsWith('acc_')
      ? this.#erasedById.get(tenantId, id)
      : this.#erasedByExternalId.get(tenantId, keyedHash(this.#deps.secret, 'external_id', id));
    return row === undefined ? null : (JSON.parse(row.summary) as Omit<ErasureSummary, 'already_erased'>);
  }

  /**
   * Old versions of the erased rows survive in the WAL until a checkpoint copies the new pages
   * over them; secure_delete (set on the writer) zeroes freed space in the main file. A TRUNCATE
   * checkpoint then empties the WAL, so the raw values are nowhere in the files.
   */
  async #purgeOldPages(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const busy = await this.#deps.writer.call('checkpointTruncate');
      if (busy === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.#deps.log.warn('erasure checkpoint stayed busy; the WAL is truncated at the next checkpoint');
  }
}

export type ErasureOutcome =
  | { readonly kind: 'shared' }
  | { readonly kind: 'erased'; readonly summary: ErasureSummary; readonly velocityKeys: VelocityKeys[] };

/**
 * Write command: erases the account unless it is shared across projects. Returns the summary and
 * the velocity keys its events used, for the caller to drop from memory.
 */
export function eraseAccount(
  db: Db,
  tenantId: string,
  projectId: string,
  account: { readonly account_id: string; readonly external_account_id: string },
  externalIdHash: string,
  secret: Uint8Array,
  now: number,
): ErasureOutcome {
  const projects = (db.prepare('SELECT count(*) AS n FROM account_projects WHERE account_id = ?').get(account.account_id) as { n: number }).n;
  if (projects > 1) return { kind: 'shared' };
  const events = db.prepare('SELECT seq, payload, body_hash FROM events WHERE account_id = ?').all(account.account_id) as Array<{ seq: number; payload: string; body_hash: string | null }>;
  const scrub = db.prepare('UPDATE events SET payload = ?, body_hash = ?, account_id = NULL WHERE seq = ?');
  const deleteSignal = db.prepare('DELETE FROM account_signals WHERE tenant_id = ? AND signal_type = ? AND signal_hash = ? AND account_id = ?');
  const key = Buffer.from(secret);
  const velocityKeys: VelocityKeys[] = [];
  let signals = 0;
  for (const event of events) {
    let bodyHash = event.body_hash;
    try {
      const body = JSON.parse(event.payload) as EventInput;
      const ids = velocityIdentifiers(body);
      velocityKeys.push({ cardToken: ids.cardToken, ip: ids.ip, accountId: account.account_id, email: ids.email, fp: ids.fp });
      bodyHash ??= canonicalBodyHash(body as unknown as Record<string, unknown>);
      // The account's signal rows are found from its events, hashed exactly as when they were stored
      // (no index by account: one less random write per new signal on the scoring path).
      const phone = analyzePhone(typeof body.user?.phone === 'string' ? body.user.phone : null, typeof body.user?.country === 'string' ? body.user.country : null);
      for (const identifier of storedIdentifiers(body, phone, key)) {
        signals += deleteSignal.run(tenantId, identifier.type, identifier.hash, account.account_id).changes;
      }
    } catch {
      // already scrubbed
    }
    scrub.run(scrubPayload(event.payload), bodyHash, event.seq);
  }
  const reverse = db.prepare('DELETE FROM account_links WHERE account_id = ? AND signal_type = ? AND other_account_id = ?');
  const links = db.prepare('SELECT signal_type, other_account_id FROM account_links WHERE account_id = ?').all(account.account_id) as Array<{ signal_type: string; other_account_id: string }>;
  for (const link of links) reverse.run(link.other_account_id, link.signal_type, account.account_id);
  db.prepare('DELETE FROM account_links WHERE account_id = ?').run(account.account_id);
  const cases = db.prepare('UPDATE cases SET account_id = NULL, updated_at = ? WHERE account_id = ?').run(now, account.account_id).changes;
  db.prepare('DELETE FROM account_projects WHERE account_id = ?').run(account.account_id);
  db.prepare('DELETE FROM accounts WHERE account_id = ?').run(account.account_id);
  const summary: ErasureSummary = {
    account_public_id: account.account_id,
    erased_at: new Date(now).toISOString(),
    erased: { events: events.length, signals, links: links.length, cases_unlinked: cases },
    already_erased: false,
  };
  db.prepare('INSERT OR REPLACE INTO erasures (tenant_id, account_id, external_id_hash, project_id, erased_at, summary) VALUES (?, ?, ?, ?, ?, ?)').run(
    tenantId, account.account_id, externalIdHash, projectId, now, JSON.stringify({ ...summary, already_erased: undefined }),
  );
  return { kind: 'erased', summary, velocityKeys };
}

/**
 * Write command: a TRUNCATE checkpoint from the writer's connection; returns 1 when readers kept
 * it from completing (SQLite's "busy").
 */
export function checkpointTruncate(db: Db): number {
  return (db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>)[0]!.busy;
}
