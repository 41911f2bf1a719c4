// Creating tenants and projects that are ready to use. The first-start bootstrap and the command
// line both come through here, so a project is always set up the same way.
import type { Db } from '../store/database.js';
import { createApiKey, createTenant, insertProject, type ApiKeyInfo, type Project, type Tenant } from './tenancy-store.js';
import { kPublishableScopes, kScopes } from '../auth/api-keys.js';
import { installPreset } from '../rulesets/ruleset-store.js';
import { kCliActor, recordAudit } from '../audit/audit-store.js';

export const kDefaultPreset = 'default';
/** A project without rules: it scores nothing (503 COMPILED_RULES_UNAVAILABLE) until a publish. */
export const kNoPreset = 'none';

/** Copies the preset's rules and policy into the project and publishes them as version 1. */
function setUpRules(db: Db, project: Project, now: number): void {
  if (project.preset !== kNoPreset) installPreset(db, project.project_id, project.preset, now);
}

/** A tenant with its sandbox project and one live project. */
export function provisionTenant(db: Db, name: string, now: number): { tenant: Tenant; live: Project; sandbox: Project } {
  return db.transaction(() => {
    const { tenant, sandbox } = createTenant(db, name, now);
    const live = insertProject(db, { tenantId: tenant.tenant_id, name, environment: 'live', preset: kDefaultPreset }, now);
    setUpRules(db, sandbox, now);
    setUpRules(db, live, now);
    return { tenant, live, sandbox };
  }).immediate();
}

/** A further live project of an existing tenant. */
export function provisionProject(db: Db, tenantId: string, name: string, preset: string, now: number): Project {
  return db.transaction(() => {
    const project = insertProject(db, { tenantId, name, environment: 'live', preset }, now);
    setUpRules(db, project, now);
    return project;
  }).immediate();
}

/** The audit record of a new key: what it may do, never the key (nor its hash). */
export function recordKeyCreated(db: Db, info: ApiKeyInfo, now: number): void {
  recordAudit(db, {
    projectId: info.project_id, actor: kCliActor, action: 'key.create', target: `key:${info.key_id}`,
    summary: { kind: info.kind, environment: info.environment, scopes: info.scopes, label: info.label, allowed_origins: info.allowed_origins },
    at: now,
  });
}

/** The audit record of a new project (the command line, or the first start). */
export function recordProjectCreated(db: Db, project: Project, now: number): void {
  recordAudit(db, {
    projectId: project.project_id, actor: kCliActor, action: 'project.create', target: `project:${project.project_id}`,
    summary: { name: project.name, environment: project.environment, preset: project.preset, tenant_id: project.tenant_id },
    at: now,
  });
}

/** The audit records of a new tenant and its two projects. */
export function recordTenantCreated(db: Db, created: { tenant: Tenant; live: Project; sandbox: Project }, now: number): void {
  recordAudit(db, {
    projectId: null, tenantId: created.tenant.tenant_id, actor: kCliActor, action: 'tenant.create', target: `tenant:${created.tenant.tenant_id}`,
    summary: { name: created.tenant.name, live_project_id: created.live.project_id, sandbox_project_id: created.sandbox.project_id },
    at: now,
  });
  recordProjectCreated(db, created.live, now);
  recordProjectCreated(db, created.sandbox, now);
}

export interface BootstrapResult {
  readonly tenant: Tenant;
  readonly live: Project;
  readonly sandbox: Project;
  readonly keys: ReadonlyArray<{ readonly name: string; readonly key: string; readonly info: ApiKeyInfo }>;
}

/**
 * First start on an empty data dir (DESIGN §5): a default tenant with a live project and its
 * sandbox, and three keys: live secret and sandbox secret with every scope, live publishable.
 * Returns null when the database already has a tenant.
 */
export function bootstrapIfEmpty(db: Db, now: number): BootstrapResult | null {
  return db.transaction(() => {
    const existing = db.prepare('SELECT 1 FROM tenants LIMIT 1').get();
    if (existing !== undefined) return null;
    const { tenant, live, sandbox } = provisionTenant(db, 'default', now);
    const keys = [
      { name: 'live_secret', ...createApiKey(db, { projectId: live.project_id, kind: 'secret', scopes: kScopes, label: 'bootstrap live secret' }, now) },
      { name: 'sandbox_secret', ...createApiKey(db, { projectId: sandbox.project_id, kind: 'secret', scopes: kScopes, label: 'bootstrap sandbox secret' }, now) },
      { name: 'live_publishable', ...createApiKey(db, { projectId: live.project_id, kind: 'publishable', scopes: kPublishableScopes, label: 'bootstrap live publishable' }, now) },
    ];
    // The first start is `fraud-scorer serve` on an empty data dir: the command line's doing.
    recordTenantCreated(db, { tenant, live, sandbox }, now);
    for (const key of keys) recordKeyCreated(db, key.info, now);
    return { tenant, live, sandbox, keys };
  }).immediate();
}
