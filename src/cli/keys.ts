import { resolveScopes, type KeyKind } from '../auth/api-keys.js';
import { recordKeyCreated } from '../tenancy/tenancy-audit.js';
import { createApiKey, findApiKey, listApiKeys, resolveProjectRef, revokeApiKey, type ApiKeyInfo } from '../tenancy/tenancy-store.js';
import { kCliActor, recordAudit } from '../audit/audit-store.js';
import { actionCommand, checkedName, withDataDir, formatTime, kDataDirHelp, kDataDirOption, parse, print, printJson, printOrThrow, quotedName, required, UsageError, CliError } from './args.js';

const kHelp = `Usage:
  fraud-scorer keys create --project live|sandbox|<prj_id> --kind secret|publishable
                           [--scopes a,b,c] [--label TEXT] [--origins https://a.example,...]
                           [--data-dir D] [--json]
  fraud-scorer keys list   [--project live|sandbox|<prj_id>] [--data-dir D] [--json]
  fraud-scorer keys revoke --key-id key_... [--data-dir D] [--json]

create  prints the new key once (with --json: one JSON object with key, key_id, project_id,
        environment, kind, scopes, allowed_origins). Secret keys get every scope unless --scopes is given; publishable
        keys hold only fp:write, and --origins restricts the web pages that may use them.
        A running server accepts the key at once. A key that cannot be written out (the reader
        went away, a full disk) is revoked at once, and the command fails (exit 1).
        --label: up to 200 characters, no control character or line break.
list    shows keys without the key itself (only its SHA-256 hash is stored), with when each was
        created and last used. A running server records use in memory and writes it every
        minute and when it stops, so "last used" may lag by up to a minute ("never": not yet).
revoke  stops a key; a running server refuses it within a second.

--project live / sandbox name the first tenant's live project / its sandbox project.
${kDataDirHelp}`;

export const keysCommand = actionCommand('keys', 'create, list and revoke API keys', kHelp, { create, list, revoke });

function create(args: string[]): number {
  const { values } = parse(args, {
    ...kDataDirOption,
    project: { type: 'string' },
    kind: { type: 'string' },
    scopes: { type: 'string' },
    label: { type: 'string' },
    origins: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return (print(kHelp), 0);
  const kind = required(values.kind, 'kind');
  if (kind !== 'secret' && kind !== 'publishable') throw new UsageError('--kind must be secret or publishable');
  const scopes = resolveScopes(kind as KeyKind, values.scopes === undefined ? null : splitList(values.scopes));
  if (typeof scopes === 'string') throw new UsageError(`--scopes: ${scopes}`);
  const label = values.label === undefined ? '' : checkedName(values.label, 'label');
  const origins = values.origins === undefined ? null : splitList(values.origins);
  if (origins !== null) {
    if (kind !== 'publishable') throw new UsageError('--origins applies to publishable keys only');
    // `--origins "$SHOP_ORIGINS"` with the variable unset would otherwise make a key that every web
    // page may use: no list is stored as no restriction.
    if (origins.length === 0) throw new UsageError('--origins: no origin given; name at least one (https://shop.example), or leave the flag out for a key any page may use');
    for (const origin of origins) {
      if (!isOrigin(origin)) throw new UsageError(`--origins: ${JSON.stringify(origin)} is not an origin like https://shop.example`);
    }
  }
  return withDataDir(values, (db) => {
    const project = resolveProjectRef(db, required(values.project, 'project'));
    if (project === null) throw new UsageError(`no such project: ${values.project}`);
    const now = Date.now();
    const { key, info } = db.transaction(() => {
      const created = createApiKey(db, { projectId: project.project_id, kind: kind as KeyKind, scopes, label, allowedOrigins: origins }, now);
      recordKeyCreated(db, created.info, now);
      return created;
    }).immediate();
    const shown = values.json
      ? `${JSON.stringify({ key, key_id: info.key_id, project_id: info.project_id, environment: info.environment, kind: info.kind, scopes: info.scopes, allowed_origins: info.allowed_origins })}\n`
      : `${key}\nkey_id ${info.key_id}  project ${info.project_id} (${info.environment})  scopes ${info.scopes.join(',')}${originsText(info)}\nThis is the only time the key is shown.\n`;
    try {
      printOrThrow(shown);
    } catch (error) {
      // Nobody saw the key (`keys create | head -c0`, a full disk): a working key that no one
      // holds is only a risk, so it goes at once.
      const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      const at = Date.now();
      try {
        db.transaction(() => {
          revokeApiKey(db, info.key_id, at);
          recordAudit(db, { projectId: info.project_id, actor: kCliActor, action: 'key.revoke', target: `key:${info.key_id}`, summary: { kind: info.kind, environment: info.environment, reason: 'not shown' }, at });
        }).immediate();
      } catch (revokeError) {
        // A full disk refuses the revoke too: the key exists and works, and the operator must know which.
        throw new CliError(`the key could not be written out (${why}), and revoking it failed too (${(revokeError as Error).message}): key ${info.key_id} was created and works; revoke it with fraud-scorer keys revoke --key-id ${info.key_id} once the disk has room`);
      }
      throw new CliError(`the key could not be written out (${why}), so it is revoked (${info.key_id}): run the command again with its output going where it is read`);
    }
    return 0;
  });
}

function list(args: string[]): number {
  const { values } = parse(args, { ...kDataDirOption, project: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) return (print(kHelp), 0);
  return withDataDir(values, (db) => {
    let projectId: string | undefined;
    if (values.project !== undefined) {
      const project = resolveProjectRef(db, values.project);
      if (project === null) throw new UsageError(`no such project: ${values.project}`);
      projectId = project.project_id;
    }
    const keys = listApiKeys(db, projectId);
    if (values.json) printJson(keys);
    else for (const key of keys) print(describeKey(key));
    return 0;
  });
}

function revoke(args: string[]): number {
  const { values, positionals } = parse(args, { ...kDataDirOption, 'key-id': { type: 'string' }, json: { type: 'boolean' } }, true);
  if (values.help) return (print(kHelp), 0);
  // One key per command: a second id (or one beside --key-id) would otherwise be ignored, unrevoked.
  if (positionals.length > (values['key-id'] === undefined ? 1 : 0)) throw new UsageError(`one key per command: unexpected ${positionals.slice(values['key-id'] === undefined ? 1 : 0).join(' ')}`);
  const keyId = values['key-id'] ?? positionals[0];
  if (keyId === undefined || keyId === '') throw new UsageError('--key-id is required');
  return withDataDir(values, (db) => {
    const now = Date.now();
    const revoked = db.transaction(() => {
      const before = findApiKey(db, keyId);
      if (!revokeApiKey(db, keyId, now)) return false;
      // Revoking a revoked key changes nothing, and records nothing.
      if (before !== null && before.revoked_at === null) {
        recordAudit(db, { projectId: before.project_id, actor: kCliActor, action: 'key.revoke', target: `key:${keyId}`, summary: { kind: before.kind, environment: before.environment }, at: now });
      }
      return true;
    }).immediate();
    if (!revoked) throw new CliError(`no such key: ${keyId}; keys list shows the key ids`);
    const info = findApiKey(db, keyId)!;
    if (values.json) printJson(info);
    else print(`revoked ${keyId} at ${formatTime(info.revoked_at)}`);
    return 0;
  });
}

function describeKey(key: ApiKeyInfo): string {
  const state = key.revoked_at === null ? 'active' : `revoked ${formatTime(key.revoked_at)}`;
  const lastUsed = key.last_used_at === null ? 'never' : formatTime(key.last_used_at);
  return `${key.key_id}  ${key.kind.padEnd(11)} ${key.environment.padEnd(7)} ${key.project_id}  ${state}  created ${formatTime(key.created_at)}  last used ${lastUsed}  scopes=${key.scopes.join(',')}${originsText(key)}${key.label ? `  ${quotedName(key.label)}` : ''}`;
}

/** A publishable key's pages, for an operator auditing who may use it: listed, or "any". */
function originsText(key: ApiKeyInfo): string {
  if (key.kind !== 'publishable') return '';
  return `  origins=${key.allowed_origins === null ? 'any' : key.allowed_origins.join(',')}`;
}

function splitList(value: string): string[] {
  return value.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}
