// The audit records of tenancy changes made from the command line or the first start. Apart from
// provision.ts so that `fraud-scorer keys create` records its key without loading the rules
// compiler that provisioning a project needs.
import { kCliActor, recordAudit } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';
import type { ApiKeyInfo, Project, Tenant } from './tenancy-store.js';

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
