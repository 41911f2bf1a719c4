// Creating tenants and projects that are ready to use. The first-start bootstrap and the command
// line both come through here, so a project is always set up the same way.
import type { Db } from '../store/database.js';
import { createApiKey, createTenant, hasTenants, insertProject, type ApiKeyInfo, type Project, type Tenant } from './tenancy-store.js';
import { kPublishableScopes, kScopes } from '../auth/api-keys.js';
import { installPreset } from '../rulesets/preset-install.js';
import { recordKeyCreated, recordTenantCreated } from './tenancy-audit.js';

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
    if (hasTenants(db)) return null;
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
