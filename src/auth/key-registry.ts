// Resolves a presented API key to its project and scopes, by the SHA-256 of the key.
//
// Active keys are cached in memory by hash. Unknown hashes are not cached, so a key created by the
// command line while the server runs works on its first request. Keys changed in another process
// bump meta.keys_generation (a trigger); a GenerationWatcher drops the cache when it moves, so a
// revoked key stops working within one poll interval (well under a second).
//
// Use is counted here too, in memory (a map of key id to the last time): the request path never
// writes to the database for it; the server flushes the map now and then (`takeUses`).
import type { Statement } from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { DigestCache } from '../state/digest-cache.js';
import { KeyDomain, KeyHasher } from '../state/keys.js';
import type { Db } from '../store/database.js';
import { GenerationWatcher } from '../store/generation-watcher.js';
import { hashApiKey, type Environment, type KeyKind, type Scope } from './api-keys.js';

export interface AuthenticatedKey {
  readonly keyId: string;
  readonly projectId: string;
  readonly tenantId: string;
  readonly kind: KeyKind;
  readonly environment: Environment;
  readonly scopes: ReadonlySet<Scope>;
  /** For publishable keys: the page origins allowed to use it; null allows any origin. */
  readonly allowedOrigins: readonly string[] | null;
}

interface KeyRow {
  key_id: string;
  project_id: string;
  tenant_id: string;
  kind: KeyKind;
  environment: Environment;
  scopes: string;
  allowed_origins: string | null;
  revoked_at: number | null;
}

/** Distinct keys whose hashes are kept: far more than a deployment uses at once. */
const kHashesCached = 10_000;

export class KeyRegistry {
  readonly #byHash: Statement<[string], KeyRow>;
  readonly #watcher: GenerationWatcher;
  #cache = new Map<string, AuthenticatedKey>();
  #uses = new Map<string, number>();
  readonly #now: () => number;
  /**
   * SHA-256 of the keys presented lately (a Hash object per request costs ~3 µs): found by a
   * SipHash key under a secret of this process, so it holds no key and nothing reversible.
   */
  readonly #hashes = new DigestCache(new KeyHasher(randomBytes(32)), KeyDomain.ApiKeyHash, kHashesCached, hashApiKey);

  constructor(db: Db, now: () => number = Date.now) {
    this.#now = now;
    this.#byHash = db.prepare(
      `SELECT k.key_id, k.project_id, p.tenant_id, k.kind, k.environment, k.scopes, k.allowed_origins, k.revoked_at
       FROM api_keys k JOIN projects p ON p.project_id = k.project_id WHERE k.key_hash = ?`,
    );
    this.#watcher = new GenerationWatcher(db, 'keys_generation', () => (this.#cache = new Map()));
  }

  /** Starts watching for key changes made by other processes. */
  start(): void {
    this.#watcher.start();
  }

  stop(): void {
    this.#watcher.stop();
  }

  /** The active key behind `key`, or null when it is unknown or revoked; a found key counts as used. */
  lookup(key: string): AuthenticatedKey | null {
    const hash = this.#hashes.get(key);
    const cached = this.#cache.get(hash);
    if (cached !== undefined) {
      this.#uses.set(cached.keyId, this.#now());
      return cached;
    }
    const row = this.#byHash.get(hash);
    if (row === undefined || row.revoked_at !== null) return null;
    const resolved: AuthenticatedKey = Object.freeze({
      keyId: row.key_id,
      projectId: row.project_id,
      tenantId: row.tenant_id,
      kind: row.kind,
      environment: row.environment,
      scopes: new Set(JSON.parse(row.scopes) as Scope[]),
      allowedOrigins: row.allowed_origins === null ? null : (JSON.parse(row.allowed_origins) as string[]),
    });
    this.#cache.set(hash, resolved);
    this.#uses.set(resolved.keyId, this.#now());
    return resolved;
  }

  /** The keys used since the last call, each with the time of its last use; starts counting afresh. */
  takeUses(): Array<[keyId: string, at: number]> {
    const uses = [...this.#uses];
    this.#uses = new Map();
    return uses;
  }
}
