// The audit trail over real HTTP and the command line (DESIGN §8, docs/audit.md): what API and
// command-line changes record (actor, action, target, a summary without keys, secrets or list
// values), GET /v1/audit's filters, paging and refusals, environments, append-only records and
// the retention purge.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore } from '../_helpers/rules.js';
import { api, runCli, serverForFile, startServer, waitFor, type ApiResponse } from '../_helpers/server.js';

const file = serverForFile(test);

interface AuditRecord {
  audit_id: string;
  project_id: string | null;
  actor: string;
  action: string;
  target: string;
  summary: Record<string, unknown>;
  created_at: string;
}

async function trail(key: string, query = ''): Promise<AuditRecord[]> {
  const response = await api(file.server, 'GET', `/v1/audit${query}`, { key });
  if (response.status !== 200) throw new Error(response.text);
  return response.body.data.records;
}

function refusal(t: import('ava').ExecutionContext, response: ApiResponse, status: number, code: string, parameter: string): void {
  t.is(response.status, status, response.text);
  t.is(response.body.errors[0]?.code, code, response.text);
  t.is(response.body.errors[0]?.parameter, parameter, response.text);
}

test('API changes are recorded with their key, action, target and a summary, newest first', async (t) => {
  const { projectId, key, keyId } = await newProject(file.server, 'none');
  await createRule(file.server, key, { rule_id: 'big', kind: 'scoring', status: 'active', score_delta: 50, expression: 'payment.amount_cents > 100' });
  await api(file.server, 'PUT', '/v1/rules/big', { key, body: { kind: 'scoring', status: 'shadow', score_delta: 50, expression: 'payment.amount_cents > 100' } });
  await api(file.server, 'PUT', '/v1/policy', { key, body: { review_threshold: 30, block_threshold: 90 } });
  await publish(file.server, key);
  await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: 'bad', kind: 'email' } });
  await api(file.server, 'POST', '/v1/lists/bad/items', { key, body: { items: [{ value: 'secret.person@example.com', note: 'named in a note' }] } });
  await api(file.server, 'POST', '/v1/lists/bad/remove', { key, body: { values: ['secret.person@example.com', 'other@example.com'] } });
  await api(file.server, 'DELETE', '/v1/lists/bad', { key });
  const event = (await api(file.server, 'POST', '/v1/events', { key, body: minimalEvent({ payment: { amount_cents: 500, currency: 'EUR' } }) })).body.data;
  await api(file.server, 'PUT', `/v1/events/${event.event_id}/label`, { key, body: { label: 'fraud', reason: 'chargeback', note: 'a note with a name in it' } });

  const records = await trail(key);
  const mine = records.filter((record) => record.actor === keyId);
  t.deepEqual(mine.map((record) => [record.action, record.target]), [
    ['event.label', `event:${event.event_id}`],
    ['list.delete', 'list:bad'],
    ['list.items_remove', 'list:bad'],
    ['list.items_add', 'list:bad'],
    ['list.create', 'list:bad'],
    ['ruleset.publish', 'ruleset:1'],
    ['policy.replace', 'policy'],
    ['rule.replace', 'rule:big'],
    ['rule.create', 'rule:big'],
  ]);
  const byAction = new Map(mine.map((record) => [record.action, record]));
  t.like(byAction.get('rule.replace')!.summary, { version: 2, previous_version: 1, changed: ['status'], status: 'shadow' });
  t.like(byAction.get('policy.replace')!.summary, { review_threshold: [40, 30], block_threshold: [80, 90] });
  t.like(byAction.get('ruleset.publish')!.summary, { version: 1, previous_version: null, changed_rules: ['big'] });
  t.deepEqual(byAction.get('list.items_add')!.summary, { added: 1, updated: 0 });
  t.deepEqual(byAction.get('list.items_remove')!.summary, { removed: 1, not_on_list: 1 });
  t.like(byAction.get('event.label')!.summary, { label: 'fraud', reason: 'chargeback', note: true, previous: null });
  for (const record of records) {
    t.is(record.project_id, projectId);
    t.regex(record.audit_id, /^aud_/);
    t.regex(record.created_at, /^\d{4}-\d\d-\d\dT/);
  }
  // Never a list value nor an analyst's note.
  const text = JSON.stringify(records);
  for (const leaked of ['secret.person', 'named in a note', 'a note with a name']) t.false(text.includes(leaked), leaked);
  // The project's own creation, by the command line, is in its trail too.
  t.like(records.at(-1), { action: 'project.create', actor: 'cli', target: `project:${projectId}` });
});

test('command-line changes are recorded as cli: keys, webhook settings; never a key or a secret', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  const created = await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'rules:read', '--label', 'dashboard']);
  t.is((await runCli(['keys', 'revoke', '--data-dir', file.server.dataDir, '--key-id', created.key_id])).code, 0);
  t.is((await runCli(['keys', 'revoke', '--data-dir', file.server.dataDir, '--key-id', created.key_id])).code, 0, 'revoking again is no change');
  const set = await runCli(['webhook', 'set', '--data-dir', file.server.dataDir, '--project', projectId, '--url', 'https://hooks.example/fraud?token=receiver-token-123', '--json']);
  t.is(set.code, 0, set.stderr);
  const secret = (JSON.parse(set.stdout) as { secret: string }).secret;
  t.is((await runCli(['webhook', 'rotate-secret', '--data-dir', file.server.dataDir, '--project', projectId, '--overlap', '1h'])).code, 0);
  t.is((await runCli(['webhook', 'remove', '--data-dir', file.server.dataDir, '--project', projectId])).code, 0);

  const records = (await trail(key)).filter((record) => record.actor === 'cli');
  t.deepEqual(records.map((record) => [record.action, record.target]).slice(0, 5), [
    ['webhook.remove', 'webhook'],
    ['webhook.rotate_secret', 'webhook'],
    ['webhook.set', 'webhook'],
    ['key.revoke', `key:${created.key_id}`],
    ['key.create', `key:${created.key_id}`],
  ]);
  t.like(records[2]!.summary, { url_origin: 'https://hooks.example', first: true });
  t.deepEqual(records[1]!.summary, { overlap_seconds: 3600 });
  t.deepEqual(records[0]!.summary, { abandoned: 0 });
  t.like(records[4]!.summary, { kind: 'secret', scopes: ['rules:read'], label: 'dashboard' });
  const text = JSON.stringify(records);
  for (const leaked of [created.key, secret, 'receiver-token-123', '/fraud']) t.false(text.includes(leaked), leaked);
});

test('filters, paging and time bounds', async (t) => {
  const { key } = await newProject(file.server, 'none');
  for (let i = 0; i < 7; i++) await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: `l${i}`, kind: 'string' } });
  await api(file.server, 'POST', '/v1/lists/l3/items', { key, body: { items: [{ value: 'x' }] } });
  const creates = await trail(key, '?action=list.create');
  t.deepEqual(creates.map((record) => record.target), ['l6', 'l5', 'l4', 'l3', 'l2', 'l1', 'l0'].map((id) => `list:${id}`));
  t.deepEqual((await trail(key, '?target=list:l3')).map((record) => record.action), ['list.items_add', 'list.create']);
  t.deepEqual((await trail(key, '?target=list:l3&action=list.create')).length, 1);
  t.is((await trail(key, '?actor=cli')).every((record) => record.actor === 'cli'), true);

  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?action=list.create&limit=3${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const response = await api(file.server, 'GET', `/v1/audit${query}`, { key });
    pages.push(response.body.data.records.map((record: AuditRecord) => record.target));
    cursor = response.body.data.next_cursor;
  } while (cursor !== null);
  t.deepEqual(pages, [['list:l6', 'list:l5', 'list:l4'], ['list:l3', 'list:l2', 'list:l1'], ['list:l0']]);
  // A cursor belongs to its project's trail.
  const firstCursor = (await api(file.server, 'GET', '/v1/audit?action=list.create&limit=3', { key })).body.data.next_cursor as string;
  const foreign = await api(file.server, 'GET', `/v1/audit?cursor=${encodeURIComponent(firstCursor)}`, { key: (await newProject(file.server, 'none')).key });
  t.is(foreign.status, 400);
  t.is(foreign.body.errors[0]?.code, 'VALIDATION_ERROR');
  t.is(foreign.body.errors[0]?.parameter, 'cursor');

  const middle = creates[3]!.created_at;
  const after = await trail(key, `?action=list.create&created_after=${encodeURIComponent(middle)}`);
  t.true(after.every((record) => record.created_at > middle));
  const before = await trail(key, `?action=list.create&created_before=${encodeURIComponent(middle)}`);
  t.true(before.every((record) => record.created_at < middle));
  t.deepEqual(await trail(key, '?created_after=2999-01-01T00:00:00Z'), []);
  // The last instants that can be written: year 9999's last millisecond, with a finer fraction too, taken; year 10000's refused.
  t.true((await trail(key, `?action=list.create&created_before=${encodeURIComponent('9999-12-31T23:59:59.9999Z')}`)).length > 0);
  refusal(t, await api(file.server, 'GET', `/v1/audit?created_before=${encodeURIComponent('9999-12-31T23:59:59-01:00')}`, { key }), 400, 'VALIDATION_ERROR', 'created_before');
  // An instant finer than the stored milliseconds: a record of that millisecond is before it, not after.
  const finer = middle.replace(/Z$/, '5Z');
  t.true((await trail(key, `?target=list:l3&action=list.create&created_before=${encodeURIComponent(finer)}`)).some((record) => record.created_at === middle));
  t.false((await trail(key, `?target=list:l3&action=list.create&created_after=${encodeURIComponent(finer)}`)).some((record) => record.created_at === middle));
});

test('refusals: scopes (rules:read and cases:read both), parameters, methods; nothing changes', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  const both = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'rules:read,cases:read'])).key;
  const rulesOnly = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'rules:read'])).key;
  const casesOnly = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'cases:read,cases:write'])).key;
  // This project's records only: the other tests of this file share the server and run meanwhile.
  const count = (): unknown => readStore(file.server, (db) => db.prepare('SELECT count(*) AS n FROM audit_log WHERE project_id = ?').get(projectId));
  const before = count();
  t.is((await api(file.server, 'GET', '/v1/audit', { key: both })).status, 200);
  refusal(t, await api(file.server, 'GET', '/v1/audit', { key: rulesOnly }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'GET', '/v1/audit', { key: casesOnly }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'GET', '/v1/audit', {}), 401, 'AUTH_ERROR', 'authorization');
  for (const [query, parameter] of [
    ['?action=rule.delete', 'action'], ['?actor=someone', 'actor'], ['?target=', 'target'], ['?created_after=yesterday', 'created_after'],
    ['?created_before=2026-13-01T00:00:00Z', 'created_before'], ['?limit=0', 'limit'], ['?cursor=abc', 'cursor'], ['?project_id=x', 'project_id'],
    ['?action=list.create&action=list.delete', 'action'], [`?target=${encodeURIComponent('\u{1F600}'.repeat(201))}`, 'target'],
  ] as const) {
    refusal(t, await api(file.server, 'GET', `/v1/audit${query}`, { key }), 400, 'VALIDATION_ERROR', parameter);
  }
  // A target's length counts characters, as the documents do: 200 emoji are 400 UTF-16 units.
  const emojiTarget = await api(file.server, 'GET', `/v1/audit?target=${encodeURIComponent('\u{1F600}'.repeat(200))}`, { key });
  t.is(emojiTarget.status, 200, emojiTarget.text);
  t.deepEqual(emojiTarget.body.data.records, []);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const response = await api(file.server, method, '/v1/audit', { key, body: method === 'DELETE' ? undefined : {} });
    t.is(response.status, 405, `${method} ${response.text}`);
    t.is(response.headers.get('allow'), 'GET, HEAD');
  }
  t.deepEqual(count(), before);
});

test('environments never mix: a sandbox key reads the sandbox project\'s trail only', async (t) => {
  const sandbox = file.server.bootstrap.keys.sandbox_secret.key;
  await api(file.server, 'POST', '/v1/lists', { key: sandbox, body: { list_id: 'sandbox_only', kind: 'ip' } });
  const sandboxTrail = await trail(sandbox, '?action=list.create');
  t.true(sandboxTrail.some((record) => record.target === 'list:sandbox_only'));
  t.true(sandboxTrail.every((record) => record.project_id === file.server.bootstrap.sandbox_project_id));
  t.false((await trail(file.key, '?action=list.create')).some((record) => record.target === 'list:sandbox_only'));
});

test('records cannot be changed; the first start records the bootstrap; old records are purged at start past AUDIT_RETENTION_DAYS', async (t) => {
  const server = await startServer({ env: { AUDIT_RETENTION_DAYS: '30' }, keepDataDir: true });
  let stopped = false;
  try {
    const key = server.bootstrap.keys.live_secret.key;
    const first = (await api(server, 'GET', '/v1/audit', { key })).body.data.records as AuditRecord[];
    t.deepEqual(first.map((record) => record.action).sort(), ['key.create', 'key.create', 'project.create'], 'the live project\'s share of the first start');
    t.false(JSON.stringify(first).includes(key));
    await server.stop();
    stopped = true;
    const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
    try {
      const change = (): unknown => {
        try {
          return db.prepare("UPDATE audit_log SET actor = 'someone'").run();
        } catch (error) {
          return (error as Error).message;
        }
      };
      t.is(change(), 'audit records cannot be changed');
      const old = db.prepare("INSERT INTO audit_log (audit_id, tenant_id, project_id, actor, action, target, summary, created_at) VALUES (?, NULL, ?, 'cli', 'key.revoke', 'key:key_old', '{}', ?)");
      old.run('aud_old31days', server.bootstrap.live_project_id, Date.now() - 31 * 86_400_000);
      old.run('aud_old29days', server.bootstrap.live_project_id, Date.now() - 29 * 86_400_000);
    } finally {
      db.close();
    }
    const again = await startServer({ dataDir: server.dataDir, env: { AUDIT_RETENTION_DAYS: '30' } });
    try {
      await waitFor(async () => !((await api(again, 'GET', '/v1/audit?action=key.revoke', { key })).body.data.records as AuditRecord[]).some((record) => record.audit_id === 'aud_old31days'), 'the purge at start');
      const kept = (await api(again, 'GET', '/v1/audit?action=key.revoke', { key })).body.data.records as AuditRecord[];
      t.deepEqual(kept.map((record) => record.audit_id), ['aud_old29days']);
    } finally {
      await again.stop();
    }
  } finally {
    if (!stopped) await server.stop();
  }
});
