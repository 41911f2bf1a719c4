import { listPresets } from '../../compiler/index.js';
import { provisionProject, provisionTenant, kDefaultPreset, kNoPreset } from '../tenancy/provision.js';
import { findTenant, listProjects, listTenants } from '../tenancy/tenancy-store.js';
import { dataDirOf, formatTime, kDataDirOption, openDataDir, parse, print, printJson, required, UsageError, type Command } from './args.js';

const kProjectsHelp = `Usage:
  fraud-scorer projects create --name NAME [--tenant ten_...] [--preset ${kDefaultPreset}] [--data-dir D] [--json]
  fraud-scorer projects list   [--tenant ten_...] [--data-dir D] [--json]

create  adds a live project to a tenant (default: the first tenant) and installs the preset's
        rules and policy as its first published ruleset. Presets: ${[...listPresets().map((preset) => preset.name), kNoPreset].join(', ')}
        (${kNoPreset}: no rules; the project scores nothing until rules are published).
list    shows every project with its tenant and environment.`;

const kTenantsHelp = `Usage:
  fraud-scorer tenants create --name NAME [--data-dir D] [--json]
  fraud-scorer tenants list   [--data-dir D] [--json]

create  adds a tenant with one live project and its sandbox project.`;

export const projectsCommand: Command = {
  summary: 'create and list projects',
  help: kProjectsHelp,
  async run(args) {
    const [action, ...rest] = args;
    if (action === undefined || action === '--help' || action === '-h') {
      print(kProjectsHelp);
      return action === undefined ? 2 : 0;
    }
    if (action === 'create') {
      const { values } = parse(rest, { ...kDataDirOption, name: { type: 'string' }, tenant: { type: 'string' }, preset: { type: 'string' }, json: { type: 'boolean' } });
      if (values.help) return (print(kProjectsHelp), 0);
      const name = required(values.name, 'name');
      const preset = values.preset ?? kDefaultPreset;
      const known = [...listPresets().map((entry) => entry.name), kNoPreset];
      if (!known.includes(preset)) throw new UsageError(`--preset: unknown preset ${JSON.stringify(preset)}; known: ${known.join(', ')}`);
      const db = openDataDir(dataDirOf(values));
      try {
        const tenant = values.tenant === undefined ? listTenants(db)[0] : findTenant(db, values.tenant);
        if (!tenant) throw new UsageError(values.tenant === undefined ? 'there is no tenant yet: start the server once or run tenants create' : `no such tenant: ${values.tenant}`);
        const project = provisionProject(db, tenant.tenant_id, name, preset, Date.now());
        if (values.json) printJson(project);
        else print(`${project.project_id}  live  tenant ${project.tenant_id}  "${project.name}"`);
        return 0;
      } finally {
        db.close();
      }
    }
    if (action === 'list') {
      const { values } = parse(rest, { ...kDataDirOption, tenant: { type: 'string' }, json: { type: 'boolean' } });
      if (values.help) return (print(kProjectsHelp), 0);
      const db = openDataDir(dataDirOf(values));
      try {
        const projects = listProjects(db, values.tenant);
        if (values.json) printJson(projects);
        else for (const p of projects) print(`${p.project_id}  ${p.environment.padEnd(7)} tenant ${p.tenant_id}  preset ${p.preset}  created ${formatTime(p.created_at)}  "${p.name}"`);
        return 0;
      } finally {
        db.close();
      }
    }
    throw new UsageError(`unknown projects action ${JSON.stringify(action)}; expected create or list`);
  },
};

export const tenantsCommand: Command = {
  summary: 'create and list tenants',
  help: kTenantsHelp,
  async run(args) {
    const [action, ...rest] = args;
    if (action === undefined || action === '--help' || action === '-h') {
      print(kTenantsHelp);
      return action === undefined ? 2 : 0;
    }
    const { values } = parse(rest, { ...kDataDirOption, name: { type: 'string' }, json: { type: 'boolean' } });
    if (values.help) return (print(kTenantsHelp), 0);
    const db = openDataDir(dataDirOf(values));
    try {
      if (action === 'create') {
        const created = provisionTenant(db, required(values.name, 'name'), Date.now());
        if (values.json) printJson(created);
        else print(`${created.tenant.tenant_id}  live ${created.live.project_id}  sandbox ${created.sandbox.project_id}`);
        return 0;
      }
      if (action === 'list') {
        const tenants = listTenants(db);
        if (values.json) printJson(tenants);
        else for (const t of tenants) print(`${t.tenant_id}  created ${formatTime(t.created_at)}  "${t.name}"`);
        return 0;
      }
    } finally {
      db.close();
    }
    throw new UsageError(`unknown tenants action ${JSON.stringify(action)}; expected create or list`);
  },
};
