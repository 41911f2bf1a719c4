import { listPresets } from '../../compiler/index.js';
import { provisionProject, provisionTenant, kDefaultPreset, kNoPreset } from '../tenancy/provision.js';
import { recordProjectCreated, recordTenantCreated } from '../tenancy/tenancy-audit.js';
import { findTenant, listProjects, listTenants } from '../tenancy/tenancy-store.js';
import { actionCommand, checkedName, formatTime, kDataDirHelp, kDataDirOption, parse, print, printJson, quotedName, required, UsageError, withDataDir } from './args.js';

const kProjectsHelp = `Usage:
  fraud-scorer projects create --name NAME [--tenant ten_...] [--preset ${kDefaultPreset}] [--data-dir D] [--json]
  fraud-scorer projects list   [--tenant ten_...] [--data-dir D] [--json]

create  adds a live project to a tenant (default: the first tenant) and installs the preset's
        rules and policy as its first published ruleset. Presets: ${[...listPresets().map((preset) => preset.name), kNoPreset].join(', ')}
        (${kNoPreset}: no rules; the project scores nothing until rules are published).
        --name: up to 200 characters, no control character or line break.
list    shows every project with its tenant and environment.
${kDataDirHelp}`;

const kTenantsHelp = `Usage:
  fraud-scorer tenants create --name NAME [--data-dir D] [--json]
  fraud-scorer tenants list   [--data-dir D] [--json]

create  adds a tenant with one live project and its sandbox project.
        --name: up to 200 characters, no control character or line break.
list    shows every tenant.
${kDataDirHelp}`;

export const projectsCommand = actionCommand('projects', 'create and list projects', kProjectsHelp, {
  create(args) {
    const { values } = parse(args, { ...kDataDirOption, name: { type: 'string' }, tenant: { type: 'string' }, preset: { type: 'string' }, json: { type: 'boolean' } });
    if (values.help) return (print(kProjectsHelp), 0);
    const name = checkedName(required(values.name, 'name'), 'name');
    const preset = values.preset ?? kDefaultPreset;
    const known = [...listPresets().map((entry) => entry.name), kNoPreset];
    if (!known.includes(preset)) throw new UsageError(`--preset: unknown preset ${JSON.stringify(preset)}; known: ${known.join(', ')}`);
    return withDataDir(values, (db) => {
      const tenant = values.tenant === undefined ? listTenants(db)[0] : findTenant(db, values.tenant);
      if (!tenant) throw new UsageError(values.tenant === undefined ? 'there is no tenant yet: start the server once or run tenants create' : `no such tenant: ${values.tenant}`);
      const now = Date.now();
      const project = db.transaction(() => {
        const made = provisionProject(db, tenant.tenant_id, name, preset, now);
        recordProjectCreated(db, made, now);
        return made;
      }).immediate();
      if (values.json) printJson(project);
      else print(`${project.project_id}  live  tenant ${project.tenant_id}  ${quotedName(project.name)}`);
      return 0;
    });
  },
  list(args) {
    const { values } = parse(args, { ...kDataDirOption, tenant: { type: 'string' }, json: { type: 'boolean' } });
    if (values.help) return (print(kProjectsHelp), 0);
    return withDataDir(values, (db) => {
      if (values.tenant !== undefined && !findTenant(db, values.tenant)) throw new UsageError(`no such tenant: ${values.tenant}`);
      const projects = listProjects(db, values.tenant);
      if (values.json) printJson(projects);
      else for (const p of projects) print(`${p.project_id}  ${p.environment.padEnd(7)} tenant ${p.tenant_id}  preset ${p.preset}  created ${formatTime(p.created_at)}  ${quotedName(p.name)}`);
      return 0;
    });
  },
});

export const tenantsCommand = actionCommand('tenants', 'create and list tenants', kTenantsHelp, {
  create(args) {
    const { values } = parse(args, { ...kDataDirOption, name: { type: 'string' }, json: { type: 'boolean' } });
    if (values.help) return (print(kTenantsHelp), 0);
    const name = checkedName(required(values.name, 'name'), 'name');
    return withDataDir(values, (db) => {
      const now = Date.now();
      const created = db.transaction(() => {
        const made = provisionTenant(db, name, now);
        recordTenantCreated(db, made, now);
        return made;
      }).immediate();
      if (values.json) printJson(created);
      else print(`${created.tenant.tenant_id}  live ${created.live.project_id}  sandbox ${created.sandbox.project_id}`);
      return 0;
    });
  },
  list(args) {
    const { values } = parse(args, { ...kDataDirOption, json: { type: 'boolean' } });
    if (values.help) return (print(kTenantsHelp), 0);
    return withDataDir(values, (db) => {
      const tenants = listTenants(db);
      if (values.json) printJson(tenants);
      else for (const t of tenants) print(`${t.tenant_id}  created ${formatTime(t.created_at)}  ${quotedName(t.name)}`);
      return 0;
    });
  },
});
