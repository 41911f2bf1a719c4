// Block and allow lists over real HTTP (DESIGN §8, docs/lists.md): the routes and every refusal
// (status, code, parameter, nothing stored), normalisation by kind, paging, environments, the
// rules that read lists (save, publish, restore, delete), and list changes moving live scores
// without a publish.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore, rulesState } from '../_helpers/rules.js';
import { openSocket, readResponse, requestHead } from '../_helpers/raw-http.js';
import { api, serverForFile, waitFor, type ApiResponse } from '../_helpers/server.js';

const file = serverForFile(test);

/** Everything stored about the lists of a project (and its audit trail), to show a refusal changed nothing. */
function listsState(projectId: string): unknown {
  return readStore(file.server, (db) => ({
    lists: db.prepare('SELECT lid, list_id, kind, description, item_count, updated_at, deleted_at FROM lists WHERE project_id = ? ORDER BY lid').all(projectId),
    items: db.prepare('SELECT l.list_id, i.value, i.note, i.expires_at FROM list_items i JOIN lists l ON l.lid = i.lid WHERE l.project_id = ? ORDER BY l.lid, i.value').all(projectId),
    changes: db.prepare('SELECT count(*) AS n FROM list_changes c JOIN lists l ON l.lid = c.lid WHERE l.project_id = ?').get(projectId),
    audit: db.prepare('SELECT count(*) AS n FROM audit_log WHERE project_id = ?').get(projectId),
  }));
}

async function createList(key: string, listId: string, kind: string): Promise<void> {
  const response = await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: listId, kind, description: `${kind} list` } });
  if (response.status !== 201) throw new Error(`list not created: ${response.text}`);
}

async function addItems(key: string, listId: string, items: unknown[]): Promise<ApiResponse> {
  const response = await api(file.server, 'POST', `/v1/lists/${listId}/items`, { key, body: { items } });
  if (response.status !== 200) throw new Error(`items not added: ${response.text}`);
  return response;
}

function refusal(t: import('ava').ExecutionContext, response: ApiResponse, status: number, code: string, parameter: string): void {
  t.is(response.status, status, response.text);
  t.is(response.body.status, 0);
  t.is(response.body.errors[0]?.code, code, response.text);
  t.is(response.body.errors[0]?.parameter, parameter, response.text);
}

test('create, read, list, add, remove and delete a list', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  const created = await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: 'blocked_emails', kind: 'email', description: 'Known fraudsters' } });
  t.is(created.status, 201, created.text);
  t.like(created.body.data, { list_id: 'blocked_emails', kind: 'email', description: 'Known fraudsters', item_count: 0 });
  t.regex(created.body.data.created_by, /^key_/);

  const added = await api(file.server, 'POST', '/v1/lists/blocked_emails/items', {
    key,
    body: { items: [{ value: ' Mallory@Example.COM ', note: 'chargeback 2026-11' }, { value: 'eve@example.org', expires_at: '2099-01-01T00:00:00Z' }, { value: 'mallory@example.com' }] },
  });
  t.is(added.status, 200, added.text);
  t.deepEqual(added.body.data, { list_id: 'blocked_emails', added: 2, updated: 0, removed: 0, not_on_list: 0, item_count: 2 });

  const read = await api(file.server, 'GET', '/v1/lists/blocked_emails', { key });
  t.is(read.status, 200, read.text);
  t.like(read.body.data, { list_id: 'blocked_emails', kind: 'email', item_count: 2, used_by: { draft_rules: [], published_rules: [] }, next_cursor: null });
  // A later duplicate in one request wins: the note of the first mention is gone.
  t.deepEqual(read.body.data.items.map((item: { value: string; note: string | null; expires_at: string | null }) => [item.value, item.note, item.expires_at]), [
    ['eve@example.org', null, '2099-01-01T00:00:00.000Z'],
    ['mallory@example.com', null, null],
  ]);

  const again = await addItems(key, 'blocked_emails', [{ value: 'EVE@example.org', note: 'still here' }]);
  t.like(again.body.data, { added: 0, updated: 1, item_count: 2 });

  const listed = await api(file.server, 'GET', '/v1/lists', { key });
  t.is(listed.status, 200);
  t.deepEqual(listed.body.data.lists.map((list: { list_id: string; item_count: number }) => [list.list_id, list.item_count]), [['blocked_emails', 2]]);

  const removed = await api(file.server, 'POST', '/v1/lists/blocked_emails/remove', { key, body: { values: ['MALLORY@example.com', 'nobody@example.com'] } });
  t.is(removed.status, 200, removed.text);
  t.like(removed.body.data, { removed: 1, not_on_list: 1, item_count: 1 });

  const deleted = await api(file.server, 'DELETE', '/v1/lists/blocked_emails', { key });
  t.is(deleted.status, 200, deleted.text);
  t.deepEqual(deleted.body.data, { list_id: 'blocked_emails', deleted: true, items: 1 });
  refusal(t, await api(file.server, 'GET', '/v1/lists/blocked_emails', { key }), 404, 'NOT_FOUND', 'list_id');
  t.deepEqual((await api(file.server, 'GET', '/v1/lists', { key })).body.data.lists, []);
  // The id is free again; the new list is empty.
  await createList(key, 'blocked_emails', 'email_domain');
  t.is((await api(file.server, 'GET', '/v1/lists/blocked_emails', { key })).body.data.item_count, 0);
  t.truthy(projectId);
});

test('POST /v1/lists refusals: each names its parameter and stores nothing', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'taken', 'ip');
  const before = listsState(projectId);
  const cases: Array<[unknown, string]> = [
    [{ kind: 'email' }, 'list_id'],
    [{ list_id: 'Bad-Id', kind: 'email' }, 'list_id'],
    [{ list_id: 'a'.repeat(65), kind: 'email' }, 'list_id'],
    [{ list_id: 7, kind: 'email' }, 'list_id'],
    [{ list_id: 'ok_id' }, 'kind'],
    [{ list_id: 'ok_id', kind: 'emails' }, 'kind'],
    [{ list_id: 'ok_id', kind: 'email', description: 'x'.repeat(2001) }, 'description'],
    [{ list_id: 'ok_id', kind: 'email', description: 3 }, 'description'],
    [{ list_id: 'ok_id', kind: 'email', items: [] }, 'items'],
    [{ list_id: 'taken', kind: 'email' }, 'list_id'],
  ];
  for (const [body, parameter] of cases) {
    refusal(t, await api(file.server, 'POST', '/v1/lists', { key, body }), 400, 'VALIDATION_ERROR', parameter);
  }
  refusal(t, await api(file.server, 'POST', '/v1/lists?x=1', { key, body: { list_id: 'ok_id', kind: 'email' } }), 400, 'VALIDATION_ERROR', 'x');
  t.deepEqual(listsState(projectId), before);
});

test('scopes: reading needs rules:read, changing rules:write; other keys are refused and change nothing', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'scoped', 'country');
  const reader = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'rules:read'])).key;
  const events = (await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'events:write,cases:write'])).key;
  const before = listsState(projectId);
  t.is((await api(file.server, 'GET', '/v1/lists', { key: reader })).status, 200);
  t.is((await api(file.server, 'GET', '/v1/lists/scoped', { key: reader })).status, 200);
  for (const [method, path, body] of [
    ['POST', '/v1/lists', { list_id: 'other', kind: 'email' }],
    ['POST', '/v1/lists/scoped/items', { items: [{ value: 'DE' }] }],
    ['POST', '/v1/lists/scoped/remove', { values: ['DE'] }],
    ['DELETE', '/v1/lists/scoped', undefined],
  ] as const) {
    refusal(t, await api(file.server, method, path, { key: reader, body }), 403, 'SCOPE_ERROR', '');
  }
  refusal(t, await api(file.server, 'GET', '/v1/lists', { key: events }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'GET', '/v1/lists/scoped', { key: events }), 403, 'SCOPE_ERROR', '');
  refusal(t, await api(file.server, 'GET', '/v1/lists', {}), 401, 'AUTH_ERROR', 'authorization');
  t.deepEqual(listsState(projectId), before);
});

test('lengths count characters, not UTF-16 units: an account id of 64 emoji is listed (as an event takes it), 65 are refused', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'accounts', 'account');
  const emoji = '\u{1F600}';
  const listed = await api(file.server, 'POST', '/v1/lists/accounts/items', { key, body: { items: [{ value: emoji.repeat(64), note: emoji.repeat(1000) }] } });
  t.is(listed.status, 200, listed.text);
  const before = listsState(projectId);
  refusal(t, await api(file.server, 'POST', '/v1/lists/accounts/items', { key, body: { items: [{ value: emoji.repeat(65) }] } }), 400, 'VALIDATION_ERROR', 'items[0].value');
  refusal(t, await api(file.server, 'POST', '/v1/lists/accounts/items', { key, body: { items: [{ value: 'a', note: emoji.repeat(1001) }] } }), 400, 'VALIDATION_ERROR', 'items[0].note');
  refusal(t, await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: 'too_long', kind: 'email', description: emoji.repeat(2001) } }), 400, 'VALIDATION_ERROR', 'description');
  t.deepEqual(listsState(projectId), before);
  const described = await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: 'described', kind: 'email', description: emoji.repeat(2000) } });
  t.is(described.status, 201, described.text);
});

test('items refusals: an invalid value names items[i].value and nothing of the request is stored', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'ips', 'ip');
  await addItems(key, 'ips', [{ value: '192.0.2.1' }]);
  const before = listsState(projectId);
  const valid = (i: number): { value: string } => ({ value: `198.51.100.${i}` });
  const cases: Array<[unknown, string]> = [
    [{ items: [valid(1), valid(2), valid(3), { value: 'not an ip' }, valid(5)] }, 'items[3].value'],
    [{ items: [valid(1), { value: '10.0.0.0/33' }] }, 'items[1].value'],
    [{ items: [valid(1), { value: '0.0.0.0/0' }] }, 'items[1].value'],
    [{ items: [{ value: 17 }] }, 'items[0].value'],
    [{ items: [{ note: 'no value' }] }, 'items[0].value'],
    [{ items: [{ value: '192.0.2.9', note: 'x'.repeat(1001) }] }, 'items[0].note'],
    [{ items: [{ value: '192.0.2.9', expires_at: 'tomorrow' }] }, 'items[0].expires_at'],
    [{ items: [valid(1), { value: '192.0.2.9', expires_at: '2020-01-01T00:00:00Z' }] }, 'items[1].expires_at'],
    // Impossible dates are refused, not moved (Date.parse reads Feb 30 as Mar 2, T24:00 as the next day).
    [{ items: [{ value: '192.0.2.9', expires_at: '2099-02-30T00:00:00Z' }] }, 'items[0].expires_at'],
    [{ items: [{ value: '192.0.2.9', expires_at: '2099-04-01T24:00:00Z' }] }, 'items[0].expires_at'],
    [{ items: [{ value: '192.0.2.9', expires_at: '9999-12-31T23:59:59-01:00' }] }, 'items[0].expires_at'],
    [{ items: [{ value: '192.0.2.9', colour: 'red' }] }, 'items[0].colour'],
    [{ items: ['192.0.2.9'] }, 'items[0]'],
    [{ items: [] }, 'items'],
    [{ items: Array.from({ length: 10_001 }, (_, i) => valid(i % 250)) }, 'items'],
    [{ values: ['192.0.2.9'] }, 'values'],
  ];
  for (const [body, parameter] of cases) {
    refusal(t, await api(file.server, 'POST', '/v1/lists/ips/items', { key, body }), 400, 'VALIDATION_ERROR', parameter);
  }
  // Remove: the same rules for its values.
  for (const [body, parameter] of [
    [{ values: ['192.0.2.1', 'x', '192.0.2.2'] }, 'values[1]'],
    [{ values: [] }, 'values'],
    [{ values: 'x' }, 'values'],
    [{ items: [] }, 'items'],
  ] as const) {
    refusal(t, await api(file.server, 'POST', '/v1/lists/ips/remove', { key, body }), 400, 'VALIDATION_ERROR', parameter);
  }
  refusal(t, await api(file.server, 'POST', '/v1/lists/nope/items', { key, body: { items: [valid(1)] } }), 404, 'NOT_FOUND', 'list_id');
  refusal(t, await api(file.server, 'POST', '/v1/lists/nope/remove', { key, body: { values: ['192.0.2.1'] } }), 404, 'NOT_FOUND', 'list_id');
  refusal(t, await api(file.server, 'DELETE', '/v1/lists/nope', { key }), 404, 'NOT_FOUND', 'list_id');
  t.deepEqual(listsState(projectId), before);

  // The items routes take 4 MiB (10,000 items with notes): a body declared larger is refused
  // before it is sent; one of 2 MiB (over the default cap) is read.
  const socket = await openSocket(file.server.port);
  socket.write(requestHead('POST', '/v1/lists/ips/items', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': String(4 * 1024 * 1024 + 1) }));
  const tooLarge = await readResponse(socket);
  socket.destroy();
  t.is(tooLarge.status, 413);
  t.like(JSON.parse(tooLarge.body).errors[0], { code: 'PAYLOAD_TOO_LARGE', parameter: 'body' });
  const twoMiB = { items: [{ value: 'not an ip', note: 'x'.repeat(1000) }, ...Array.from({ length: 2000 }, () => ({ value: '192.0.2.9', note: 'x'.repeat(1000) }))] };
  refusal(t, await api(file.server, 'POST', '/v1/lists/ips/items', { key, body: twoMiB }), 400, 'VALIDATION_ERROR', 'items[0].value');
  t.deepEqual(listsState(projectId), before);

  // 10,000 items in one request are accepted.
  const many = await api(file.server, 'POST', '/v1/lists/ips/items', { key, body: { items: Array.from({ length: 10_000 }, (_, i) => ({ value: `10.${i >> 8}.${i & 255}.1` })) } });
  t.is(many.status, 200, many.text);
  t.is(many.body.data.item_count, 10_001);
});

test('values are normalised by kind, as signals are', async (t) => {
  const { key } = await newProject(file.server, 'none');
  const kinds: Array<[string, unknown[], string[]]> = [
    ['email', [' Jane.Doe@Example.COM'], ['jane.doe@example.com']],
    ['email_domain', ['Mailinator.COM.', '@yopmail.com', 'someone@Spam.Example.net'], ['mailinator.com', 'spam.example.net', 'yopmail.com']],
    ['phone', ['+44 7400 123456', '+1 (415) 555-2671'], ['+14155552671', '+447400123456']],
    ['ip', ['203.0.113.7', '::ffff:198.51.100.9', '2001:DB8:0:0:0:0:0:1', '198.51.100.77/24', '2001:db8:ffff::/32', '::ffff:10.1.2.3/104', '192.0.2.5/32'],
      ['10.0.0.0/8', '192.0.2.5', '198.51.100.0/24', '198.51.100.9', '2001:db8::/32', '2001:db8::1', '203.0.113.7']],
    ['bin', ['411111', '55555555'], ['411111', '55555555']],
    ['card', ['411111:1111', '55555555******4444'], ['411111:1111', '55555555:4444']],
    ['country', ['de', 'Gb'], ['DE', 'GB']],
    ['account', ['user-42', 1234], ['1234', 'user-42']],
    ['fp', ['fp_Abc123'], ['fp_Abc123']],
    ['string', ['Any Text, as sent'], ['Any Text, as sent']],
  ];
  for (const [kind, values, stored] of kinds) {
    await createList(key, `k_${kind}`, kind);
    await addItems(key, `k_${kind}`, values.map((value) => ({ value })));
    const read = await api(file.server, 'GET', `/v1/lists/k_${kind}`, { key });
    t.deepEqual(read.body.data.items.map((item: { value: string }) => item.value), stored, kind);
  }
  const invalid: Array<[string, unknown]> = [
    ['email', 'not-an-email'], ['email_domain', 'localhost'], ['email_domain', 'bad_domain.com'], ['phone', '12'], ['phone', 'no digits'],
    ['ip', '300.1.1.1'], ['ip', 'fe80::1%eth0'], ['bin', '4111'], ['bin', '41111a'], ['card', '4111111111111111'.slice(0, 10)], ['country', 'DEU'],
    ['account', ''], ['account', 'x'.repeat(65)], ['account', -1], ['fp', 'x'.repeat(129)], ['string', ''],
  ];
  for (const [kind, value] of invalid) {
    refusal(t, await api(file.server, 'POST', `/v1/lists/k_${kind}/items`, { key, body: { items: [{ value }] } }), 400, 'VALIDATION_ERROR', 'items[0].value');
  }
});

test('items are paged in value order with cursors; expired items are not listed', async (t) => {
  const { key } = await newProject(file.server, 'none');
  await createList(key, 'paged', 'string');
  const values = Array.from({ length: 120 }, (_, i) => `v${String(i).padStart(3, '0')}`);
  await addItems(key, 'paged', [...values].reverse().map((value) => ({ value })));
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor === null ? '?limit=50' : `?limit=50&cursor=${encodeURIComponent(cursor)}`;
    const page = await api(file.server, 'GET', `/v1/lists/paged${query}`, { key });
    t.is(page.status, 200, page.text);
    seen.push(...page.body.data.items.map((item: { value: string }) => item.value));
    cursor = page.body.data.next_cursor;
    pages++;
  } while (cursor !== null);
  t.is(pages, 3);
  t.deepEqual(seen, values);
  refusal(t, await api(file.server, 'GET', '/v1/lists/paged?cursor=nonsense', { key }), 400, 'VALIDATION_ERROR', 'cursor');
  // A cursor belongs to its list: not to another list of the project, nor to the list of that name in another project.
  const next = (await api(file.server, 'GET', '/v1/lists/paged?limit=50', { key })).body.data.next_cursor as string;
  await createList(key, 'paged_too', 'string');
  await addItems(key, 'paged_too', values.map((value) => ({ value })));
  refusal(t, await api(file.server, 'GET', `/v1/lists/paged_too?cursor=${encodeURIComponent(next)}`, { key }), 400, 'VALIDATION_ERROR', 'cursor');
  const other = await newProject(file.server, 'none');
  await createList(other.key, 'paged', 'string');
  await addItems(other.key, 'paged', values.map((value) => ({ value })));
  refusal(t, await api(file.server, 'GET', `/v1/lists/paged?cursor=${encodeURIComponent(next)}`, { key: other.key }), 400, 'VALIDATION_ERROR', 'cursor');
  t.is((await api(file.server, 'GET', `/v1/lists/paged?cursor=${encodeURIComponent(next)}`, { key })).body.data.items[0].value, 'v050', 'the cursor still works where it came from');
  // Nor to a list deleted and created again under its list_id: another list, whose first items it would skip.
  t.is((await api(file.server, 'DELETE', '/v1/lists/paged', { key })).status, 200);
  await createList(key, 'paged', 'string');
  await addItems(key, 'paged', values.map((value) => ({ value })));
  refusal(t, await api(file.server, 'GET', `/v1/lists/paged?cursor=${encodeURIComponent(next)}`, { key }), 400, 'VALIDATION_ERROR', 'cursor');
  refusal(t, await api(file.server, 'GET', '/v1/lists/paged?limit=101', { key }), 400, 'VALIDATION_ERROR', 'limit');
  refusal(t, await api(file.server, 'GET', '/v1/lists/paged?sort=desc', { key }), 400, 'VALIDATION_ERROR', 'sort');
});

test('environments never mix: a sandbox key sees and changes only the sandbox project\'s lists', async (t) => {
  const live = file.key;
  const sandbox = file.server.bootstrap.keys.sandbox_secret.key;
  const id = `env_${randomUUID().slice(0, 8)}`;
  await createList(live, id, 'email');
  await addItems(live, id, [{ value: 'live@example.com' }]);
  refusal(t, await api(file.server, 'GET', `/v1/lists/${id}`, { key: sandbox }), 404, 'NOT_FOUND', 'list_id');
  refusal(t, await api(file.server, 'POST', `/v1/lists/${id}/items`, { key: sandbox, body: { items: [{ value: 'x@example.com' }] } }), 404, 'NOT_FOUND', 'list_id');
  await createList(sandbox, id, 'ip');
  t.is((await api(file.server, 'GET', `/v1/lists/${id}`, { key: sandbox })).body.data.kind, 'ip');
  t.is((await api(file.server, 'GET', `/v1/lists/${id}`, { key: live })).body.data.kind, 'email');
});

test('rules and lists: a missing list is refused at save and at publish; a list in use cannot be deleted', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  // Save: 400 naming the expression, with the position of the list id.
  const before = readStore(file.server, (db) => db.prepare('SELECT count(*) AS n FROM rules WHERE project_id = ?').get(projectId));
  const missing = await api(file.server, 'POST', '/v1/rules', {
    key, body: { rule_id: 'blocked', kind: 'hard_block', status: 'active', expression: "in_list('blocked_emails', user.email)" },
  });
  refusal(t, missing, 400, 'VALIDATION_ERROR', 'expression');
  t.regex(missing.body.errors[0].message, /line 1, column 9: the project has no list 'blocked_emails'/);
  const banded = await api(file.server, 'POST', '/v1/rules', {
    key, body: { rule_id: 'banded', kind: 'scoring', status: 'active', expression: 'true', bands: [{ band: 'listed', expression: "in_list('nope', context.ip)", score_delta: 5 }] },
  });
  refusal(t, banded, 400, 'VALIDATION_ERROR', 'bands[0].expression');
  t.deepEqual(readStore(file.server, (db) => db.prepare('SELECT count(*) AS n FROM rules WHERE project_id = ?').get(projectId)), before);

  await createList(key, 'blocked_emails', 'email');
  await createRule(file.server, key, { rule_id: 'blocked', kind: 'hard_block', status: 'active', expression: "in_list('blocked_emails', user.email)" });
  const inUse = await api(file.server, 'DELETE', '/v1/lists/blocked_emails', { key });
  refusal(t, inUse, 400, 'VALIDATION_ERROR', 'list_id');
  t.regex(inUse.body.errors[0].message, /blocked \(draft\)/);
  await publish(file.server, key);
  t.like((await api(file.server, 'GET', '/v1/lists/blocked_emails', { key })).body.data.used_by, { draft_rules: ['blocked'], published_rules: ['blocked'] });

  // Archived, the draft still reads it; changed to read nothing, the published ruleset still does.
  await api(file.server, 'PUT', '/v1/rules/blocked', { key, body: { kind: 'hard_block', status: 'archived', expression: "in_list('blocked_emails', user.email)" } });
  t.regex((await api(file.server, 'DELETE', '/v1/lists/blocked_emails', { key })).body.errors[0].message, /blocked \(draft\), blocked \(published\)/);
  await api(file.server, 'PUT', '/v1/rules/blocked', { key, body: { kind: 'hard_block', status: 'active', expression: 'user.is_known_fraud == true' } });
  const published = await api(file.server, 'DELETE', '/v1/lists/blocked_emails', { key });
  refusal(t, published, 400, 'VALIDATION_ERROR', 'list_id');
  t.regex(published.body.errors[0].message, /rules blocked \(published\)/);
  t.is((await api(file.server, 'GET', '/v1/lists/blocked_emails', { key })).status, 200, 'still there');
  await publish(file.server, key);
  t.is((await api(file.server, 'DELETE', '/v1/lists/blocked_emails', { key })).status, 200);

  // Publish: a draft reading a list that vanished behind the API's back (a restored backup, a
  // repair by hand) is refused, naming the rule.
  await createList(key, 'gone', 'ip');
  await createRule(file.server, key, { rule_id: 'uses_gone', kind: 'scoring', status: 'active', score_delta: 5, expression: "in_list('gone', context.ip)" });
  const db = new Database(join(file.server.dataDir, 'fraud-scorer.db'));
  try {
    db.pragma('busy_timeout = 10000');
    db.prepare("UPDATE lists SET deleted_at = 1 WHERE project_id = ? AND list_id = 'gone'").run(projectId);
  } finally {
    db.close();
  }
  const versions = readStore(file.server, (d) => d.prepare('SELECT count(*) AS n FROM rulesets WHERE project_id = ?').get(projectId));
  const refused = await api(file.server, 'POST', '/v1/rules/publish', { key });
  refusal(t, refused, 400, 'VALIDATION_ERROR', 'rules.uses_gone.expression');
  t.regex(refused.body.errors[0].message, /no list 'gone'/);
  t.deepEqual(readStore(file.server, (d) => d.prepare('SELECT count(*) AS n FROM rulesets WHERE project_id = ?').get(projectId)), versions);
});

async function score(key: string, fields: Record<string, unknown>): Promise<{ decision: string; matched: string[] }> {
  const response = await api(file.server, 'POST', '/v1/events', { key, body: minimalEvent(fields) });
  if (response.status !== 200) throw new Error(`not scored: ${response.text}`);
  const data = response.body.data as { decision: string; breakdown: Array<{ rule_id: string; matched: boolean }> };
  return { decision: data.decision, matched: data.breakdown.filter((entry) => entry.matched).map((entry) => entry.rule_id) };
}

test('membership is data: adding and removing items moves the next live score without a publish', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  for (const [listId, kind] of [['bad_emails', 'email'], ['bad_domains', 'email_domain'], ['bad_ips', 'ip'], ['bad_phones', 'phone'], ['bad_cards', 'card'], ['bad_bins', 'bin']] as const) {
    await createList(key, listId, kind);
  }
  const rules: Array<[string, string]> = [
    ['email_listed', "in_list('bad_emails', user.email)"],
    ['domain_listed', "in_list('bad_domains', user.email)"],
    ['ip_listed', "in_list('bad_ips', context.ip)"],
    ['phone_listed', "in_list('bad_phones', user.phone)"],
    ['card_listed', "in_list('bad_cards', payment.bin + ':' + payment.last4)"],
    ['bin_listed', "in_list('bad_bins', payment.bin)"],
  ];
  for (const [ruleId, expression] of rules) await createRule(file.server, key, { rule_id: ruleId, kind: 'scoring', status: 'active', score_delta: 50, expression });
  await publish(file.server, key);
  const versions = (): unknown => readStore(file.server, (db) => db.prepare('SELECT max(version) AS v FROM rulesets WHERE project_id = ?').get(projectId));
  const published = versions();

  const event = {
    user: { email: 'Victim@Mail.Example.com', phone: '07400 123456', country: 'GB' },
    context: { ip: '198.51.100.23' },
    payment: { amount_cents: 100, currency: 'GBP', bin: '41111122', last4: '1111' },
  };
  t.deepEqual(await score(key, event), { decision: 'allow', matched: [] });

  await addItems(key, 'bad_emails', [{ value: 'victim@mail.example.com' }]);
  await addItems(key, 'bad_domains', [{ value: 'example.com' }]);
  await addItems(key, 'bad_ips', [{ value: '198.51.100.0/24' }]);
  await addItems(key, 'bad_phones', [{ value: '+447400123456' }]);
  await addItems(key, 'bad_cards', [{ value: '41111122******1111' }]);
  await addItems(key, 'bad_bins', [{ value: '411111' }]);
  // The next event after the answers: every rule sees its list (national phone with user.country,
  // an email's domain by a parent domain, the IP in a range, an 8-digit BIN under a 6-digit one).
  const listed = await score(key, event);
  t.is(listed.decision, 'block');
  t.deepEqual(listed.matched.sort(), rules.map(([ruleId]) => ruleId).sort());

  for (const [listId, value] of [['bad_emails', 'VICTIM@mail.example.com'], ['bad_domains', 'example.com'], ['bad_ips', '198.51.100.0/24']] as const) {
    const removed = await api(file.server, 'POST', `/v1/lists/${listId}/remove`, { key, body: { values: [value] } });
    t.is(removed.body.data.removed, 1, removed.text);
  }
  t.deepEqual((await score(key, event)).matched.sort(), ['bin_listed', 'card_listed', 'phone_listed']);
  t.deepEqual(versions(), published, 'no publish in between');

  // An item that expires stops matching (waited for, never timed); one that does not keeps matching.
  await addItems(key, 'bad_ips', [{ value: '198.51.100.23', expires_at: new Date(Date.now() + 4_000).toISOString() }]);
  await addItems(key, 'bad_emails', [{ value: 'victim@mail.example.com', expires_at: '2099-01-01T00:00:00Z' }]);
  await waitFor(async () => !(await score(key, event)).matched.includes('ip_listed'), 'the IP item to expire');
  t.true((await score(key, event)).matched.includes('email_listed'));
  // A sandbox list of the same id changes nothing live.
  const sandbox = file.server.bootstrap.keys.sandbox_secret.key;
  await createList(sandbox, 'bad_ips', 'ip');
  await addItems(sandbox, 'bad_ips', [{ value: '198.51.100.23' }]);
  t.false((await score(key, event)).matched.includes('ip_listed'));
});

test('a card number written with JSON escapes in a list item is refused like one written plainly, and nothing is stored', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'escaped', 'email');
  const before = listsState(projectId);
  const body = '{"items":[{"value":"someone@example.com","note":"card \\u0034111 1111 1111 1111"}]}';
  refusal(t, await api(file.server, 'POST', '/v1/lists/escaped/items', { key, rawBody: body }), 400, 'CARD_NUMBER_DETECTED', 'items[0].note');
  t.deepEqual(listsState(projectId), before);
});

test('in_list spends what a lookup in its list costs: thousands of phone lookups in one event run out of budget (503, nothing stored) instead of holding the rule worker for seconds', async (t) => {
  const { key } = await newProject(file.server, 'none');
  await createList(key, 'blocked_phones', 'phone');
  await addItems(key, 'blocked_phones', [{ value: '+447400123456' }]);
  await createRule(file.server, key, { rule_id: 'old_phone_blocked', kind: 'scoring', status: 'active', score_delta: 50, expression: "extras.old_phones.exists(p, in_list('blocked_phones', p))" });
  await publish(file.server, key);
  // Each a number libphonenumber has to parse (~30 µs): 5,000 lookups of 5,000 units pass the 20 million.
  const many = minimalEvent({ user: { country: 'GB' }, extras: { old_phones: Array.from({ length: 5_000 }, (_, i) => `07${400_000_000 + i * 7}`) } });
  const refused = await api(file.server, 'POST', '/v1/events', { key, body: many });
  t.is(refused.status, 503, refused.text);
  t.is(refused.body.errors[0]?.code, 'COMPILED_RULES_UNAVAILABLE');
  t.regex(refused.body.errors[0]?.message ?? '', /more work on this event than one event may use/);
  t.is((await api(file.server, 'GET', `/v1/scores/${many.event_id}`, { key })).status, 404, 'nothing stored');
  // A few lookups are scored as before.
  const few = minimalEvent({ user: { country: 'GB' }, extras: { old_phones: ['07400 111222', '07400 123456'] } });
  const scored = await api(file.server, 'POST', '/v1/events', { key, body: few });
  t.is(scored.status, 200, scored.text);
  t.true(scored.body.data.breakdown.find((entry: { rule_id: string }) => entry.rule_id === 'old_phone_blocked').matched);
});

/** The rules that read a list, as GET /v1/lists/{list_id} answers them. */
async function usedBy(key: string, listId: string): Promise<unknown> {
  const response = await api(file.server, 'GET', `/v1/lists/${listId}`, { key });
  if (response.status !== 200) throw new Error(`list not read: ${response.text}`);
  return response.body.data.used_by;
}

test('restore: the rules it archives or brings back keep their lists in use, archived ones included; lists read by no rule any more can go', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'early_ips', 'ip');
  await createList(key, 'late_emails', 'email');
  await createList(key, 'old_bins', 'bin');
  // Version A: `kept` reads early_ips; `parked` is archived and reads old_bins.
  await createRule(file.server, key, { rule_id: 'kept', kind: 'scoring', status: 'active', score_delta: 5, expression: "in_list('early_ips', context.ip)" });
  await createRule(file.server, key, { rule_id: 'parked', kind: 'scoring', status: 'archived', score_delta: 5, expression: "in_list('old_bins', payment.bin)" });
  const versionA = (await publish(file.server, key)).body.data.version as number;
  // Version B: `kept` and `parked` read nothing; `late`, new, reads late_emails.
  for (const [ruleId, status] of [['kept', 'active'], ['parked', 'archived']] as const) {
    const changed = await api(file.server, 'PUT', `/v1/rules/${ruleId}`, { key, body: { kind: 'scoring', status, score_delta: 5, expression: `extras.${ruleId} == true` } });
    t.is(changed.status, 200, changed.text);
  }
  await createRule(file.server, key, { rule_id: 'late', kind: 'scoring', status: 'active', score_delta: 5, expression: "in_list('late_emails', user.email)" });
  const versionB = (await publish(file.server, key)).body.data.version as number;
  t.deepEqual(await usedBy(key, 'old_bins'), { draft_rules: [], published_rules: [] });

  // Back to A: `late` is archived and still reads late_emails; `parked` comes back, archived,
  // reading old_bins; `kept` reads early_ips again, in the drafts and live.
  const restored = await api(file.server, 'POST', `/v1/rulesets/${versionA}/restore`, { key });
  t.is(restored.status, 201, restored.text);
  t.deepEqual(await usedBy(key, 'late_emails'), { draft_rules: ['late'], published_rules: [] });
  t.deepEqual(await usedBy(key, 'old_bins'), { draft_rules: ['parked'], published_rules: [] });
  t.deepEqual(await usedBy(key, 'early_ips'), { draft_rules: ['kept'], published_rules: ['kept'] });
  const before = listsState(projectId);
  for (const [listId, rule] of [['late_emails', 'late'], ['old_bins', 'parked'], ['early_ips', 'kept']] as const) {
    const inUse = await api(file.server, 'DELETE', `/v1/lists/${listId}`, { key });
    refusal(t, inUse, 400, 'VALIDATION_ERROR', 'list_id');
    t.regex(inUse.body.errors[0].message, new RegExp(`${rule} \\(draft\\)`));
  }
  t.deepEqual(listsState(projectId), before, 'refused deletes store nothing');
  // Making `late` active again needs no list created again.
  const back = await api(file.server, 'PUT', '/v1/rules/late', { key, body: { kind: 'scoring', status: 'active', score_delta: 5, expression: "in_list('late_emails', user.email)" } });
  t.is(back.status, 200, back.text);
  await api(file.server, 'PUT', '/v1/rules/late', { key, body: { kind: 'scoring', status: 'archived', score_delta: 5, expression: "in_list('late_emails', user.email)" } });

  // Forward to B: `parked` and `kept` read nothing any more, so their lists can go.
  const forward = await api(file.server, 'POST', `/v1/rulesets/${versionB}/restore`, { key });
  t.is(forward.status, 201, forward.text);
  t.deepEqual(await usedBy(key, 'late_emails'), { draft_rules: ['late'], published_rules: ['late'] });
  t.deepEqual(await usedBy(key, 'old_bins'), { draft_rules: [], published_rules: [] });
  t.deepEqual(await usedBy(key, 'early_ips'), { draft_rules: [], published_rules: [] });
  t.is((await api(file.server, 'DELETE', '/v1/lists/old_bins', { key })).status, 200);
  t.is((await api(file.server, 'DELETE', '/v1/lists/early_ips', { key })).status, 200);
  const live = await api(file.server, 'DELETE', '/v1/lists/late_emails', { key });
  refusal(t, live, 400, 'VALIDATION_ERROR', 'list_id');
  t.regex(live.body.errors[0].message, /late \(draft\), late \(published\)/);
});

test('restore: an archived rule it would bring back reading a list deleted since is refused, naming the rule, and nothing is stored', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  await createList(key, 'old_bins', 'bin');
  await createRule(file.server, key, { rule_id: 'parked', kind: 'scoring', status: 'archived', score_delta: 5, expression: "in_list('old_bins', payment.bin)" });
  const versionA = (await publish(file.server, key)).body.data.version as number;
  const changed = await api(file.server, 'PUT', '/v1/rules/parked', { key, body: { kind: 'scoring', status: 'archived', score_delta: 5, expression: 'extras.parked == true' } });
  t.is(changed.status, 200, changed.text);
  await publish(file.server, key);
  t.is((await api(file.server, 'DELETE', '/v1/lists/old_bins', { key })).status, 200, 'no rule reads it');

  const rulesBefore = rulesState(file.server, projectId);
  const listsBefore = listsState(projectId);
  const refused = await api(file.server, 'POST', `/v1/rulesets/${versionA}/restore`, { key });
  refusal(t, refused, 400, 'VALIDATION_ERROR', 'rules.parked.expression');
  t.regex(refused.body.errors[0].message, /no list 'old_bins'/);
  t.deepEqual(rulesState(file.server, projectId), rulesBefore);
  t.deepEqual(listsState(projectId), listsBefore);
  t.deepEqual(readStore(file.server, (db) => db.prepare('SELECT list_id, rule_id FROM rule_lists WHERE project_id = ?').all(projectId)), []);
});
