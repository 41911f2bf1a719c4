// Tenants, projects and API keys in SQLite. Synchronous functions over one connection: the
// command line and the first-start bootstrap call them directly; the server only reads keys
// (src/auth/key-registry.ts).
import type { Db } from '../store/database.js';
import { newId } from '../shared/ids.js';
import { generateApiKey, hashApiKey, type Environment, type KeyKind, type Scope } from '../auth/api-keys.js';

export interface Tenant {
  readonly tenant_id: string;
  readonly name: string;
  readonly created_at: number;
}

export interface Project {
  readonly project_id: string;
  readonly tenant_id: string;
  readonly name: string;
  readonly environment: Environment;
  readonly preset: string;
  readonly created_at: number;
}

/** What may be shown about a key: never the key, never its hash. */
export interface ApiKeyInfo {
  readonly key_id: string;
  readonly project_id: string;
  readonly tenant_id: string;
  readonly kind: KeyKind;
  readonly environment: Environment;
  readonly scopes: Scope[];
  readonly allowed_origins: string[] | null;
  readonly label: string;
  readonly created_at: number;
  readonly revoked_at: number | null;
  /** When a server last accepted it, to within the server's flush interval; null: never. */
  readonly last_used_at: number | null;
}

interface ApiKeyRow {
  key_id: string;
  project_id: string;
  tenant_id: string;
  kind: KeyKind;
  environment: Environment;
  scopes: string;
  allowed_origins: string | null;
  label: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export function createTenant(db: Db, name: string, now: number): { tenant: Tenant; sandbox: Project } {
  return db.transaction(() => {
    const tenant: Tenant = { tenant_id: newId('ten'), name, created_at: now };
    db.prepare('INSERT INTO tenants (tenant_id, name, created_at) VALUES (?, ?, ?)').run(tenant.tenant_id, name, now);
    const sandbox = insertProject(db, { tenantId: tenant.tenant_id, name: `${name} sandbox`, environment: 'sandbox', preset: 'default' }, now);
    return { tenant, sandbox };
  }).immediate();
}

export interface NewProject {
  readonly tenantId: string;
  readonly name: string;
  readonly environment: Environment;
  readonly preset: string;
}

/** Inserts a project row. Callers that want a usable project go through provisionProject. */
export function insertProject(db: Db, spec: NewProject, now: number): Project {
  const project: Project = {
    project_id: newId('prj'),
    tenant_id: spec.tenantId,
    name: spec.name,
    environment: spec.environment,
    preset: spec.preset,
    created_at: now,
  };
  db.prepare(
    'INSERT INTO projects (project_id, tenant_id, name, environment, preset, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(project.project_id, project.tenant_id, project.name, project.environment, project.preset, now);
  return project;
}

/** False only for a database that no start has set up yet (the first start bootstraps it). */
export function hasTenants(db: Db): boolean {
  return db.prepare('SELECT 1 FROM tenants LIMIT 1').get() !== undefined;
}

export function listTenants(db: Db): Tenant[] {
  return db.prepare('SELECT tenant_id, name, created_at FROM tenants ORDER BY created_at, tenant_id').all() as Tenant[];
}

export function findTenant(db: Db, tenantId: string): Tenant | null {
  return (db.prepare('SELECT tenant_id, name, created_at FROM tenants WHERE tenant_id = ?').get(tenantId) as Tenant | undefined) ?? null;
}

export function listProjects(db: Db, tenantId?: string): Project[] {
  const sql = 'SELECT project_id, tenant_id, name, environment, preset, created_at FROM projects';
  return (tenantId === undefined
    ? db.prepare(`${sql} ORDER BY created_at, project_id`).all()
    : db.prepare(`${sql} WHERE tenant_id = ? ORDER BY created_at, project_id`).all(tenantId)) as Project[];
}

export function findProject(db: Db, projectId: string): Project | null {
  return (db
    .prepare('SELECT project_id, tenant_id, name, environment, preset, created_at FROM projects WHERE project_id = ?')
    .get(projectId) as Project | undefined) ?? null;
}

/**
 * Resolves the --project argument of the command line: a prj_ id, or `live` / `sandbox` for the
 * oldest tenant's first live project / its sandbox project (the ones the bootstrap created).
 */
export function resolveProjectRef(db: Db, ref: string): Project | null {
  if (ref !== 'live' && ref !== 'sandbox') return findProject(db, ref);
  const tenant = listTenants(db)[0];
  if (tenant === undefined) return null;
  return listProjects(db, tenant.tenant_id).find((project) => project.environment === ref) ?? null;
}

export interface NewApiKey {
  readonly projectId: string;
  readonly kind: KeyKind;
  readonly scopes: readonly Scope[];
  readonly label?: string;
  readonly allowedOrigins?: readonly string[] | null;
}

/** Creates a key for the project; its environment is the project's. Returns the only copy of the key. */
export function createApiKey(db: Db, spec: NewApiKey, now: number): { key: string; info: ApiKeyInfo } {
  const project = findProject(db, spec.projectId);
  if (project === null) throw new Error(`unknown project ${spec.projectId}`);
  const key = generateApiKey(spec.kind, project.environment);
  const keyId = newId('key');
  const origins = spec.allowedOrigins && spec.allowedOrigins.length > 0 ? JSON.stringify(spec.allowedOrigins) : null;
  db.prepare(
    `INSERT INTO api_keys (key_hash, key_id, project_id, kind, environment, scopes, allowed_origins, label, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(hashApiKey(key), keyId, project.project_id, spec.kind, project.environment, JSON.stringify(spec.scopes), origins, spec.label ?? '', now);
  return { key, info: findApiKey(db, keyId)! };
}

const kKeyColumns = `k.key_id, k.project_id, p.tenant_id, k.kind, k.environment, k.scopes, k.allowed_origins, k.label,
  k.created_at, k.revoked_at, u.last_used_at FROM api_keys k JOIN projects p ON p.project_id = k.project_id
  LEFT JOIN api_key_usage u ON u.key_id = k.key_id`;

export function findApiKey(db: Db, keyId: string): ApiKeyInfo | null {
  const row = db.prepare(`SELECT ${kKeyColumns} WHERE k.key_id = ?`).get(keyId) as ApiKeyRow | undefined;
  return row === undefined ? null : toKeyInfo(row);
}

export function listApiKeys(db: Db, projectId?: string): ApiKeyInfo[] {
  const rows = (projectId === undefined
    ? db.prepare(`SELECT ${kKeyColumns} ORDER BY k.created_at, k.key_id`).all()
    : db.prepare(`SELECT ${kKeyColumns} WHERE k.project_id = ? ORDER BY k.created_at, k.key_id`).all(projectId)) as ApiKeyRow[];
  return rows.map(toKeyInfo);
}

/**
 * Records when keys were last used (a write command of the server's writer, batched: the server
 * counts uses in memory and flushes them now and then). A time never moves backwards.
 */
export function recordKeyUse(db: Db, uses: ReadonlyArray<readonly [keyId: string, at: number]>): void {
  const upsert = db.prepare(
    `INSERT INTO api_key_usage (key_id, last_used_at) VALUES (?, ?)
     ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)`,
  );
  for (const [keyId, at] of uses) upsert.run(keyId, at);
}

/** Revokes a key; false when there is no such key. Revoking twice keeps the first time. */
export function revokeApiKey(db: Db, keyId: string, now: number): boolean {
  const result = db.prepare('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE key_id = ?').run(now, keyId);
  return result.changes > 0;
}

function toKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    key_id: row.key_id,
    project_id: row.project_id,
    tenant_id: row.tenant_id,
    kind: row.kind,
    environment: row.environment,
    scopes: JSON.parse(row.scopes) as Scope[],
    allowed_origins: row.allowed_origins === null ? null : (JSON.parse(row.allowed_origins) as string[]),
    label: row.label,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
  };
}
