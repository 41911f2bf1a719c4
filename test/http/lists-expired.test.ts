// Items past their expires_at over real HTTP (docs/lists.md): until the background sweep deletes
// them they are on the list for nobody — not listed, matching nothing — so adding one again is an
// add (by the key that adds it, at that moment) and removing one finds it not on the list.
import test from 'ava';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { newProject } from '../_helpers/rules.js';
import { api, serverForFile, waitFor } from '../_helpers/server.js';

const file = serverForFile(test);

test('an expired item added again is added (not updated) by the key that adds it; removing an expired item finds it not on the list', async (t) => {
  const { projectId, key } = await newProject(file.server, 'none');
  const created = await api(file.server, 'POST', '/v1/lists', { key, body: { list_id: 'temporary', kind: 'string' } });
  t.is(created.status, 201, created.text);
  // Expiries a moment ahead (they must be in the future when they arrive); the test waits for them
  // to pass. A request that arrived after them (a stalled machine) is sent again with a later one.
  let first;
  for (let aheadMs = 1500; ; aheadMs *= 2) {
    const soon = Date.now() + aheadMs;
    first = await api(file.server, 'POST', '/v1/lists/temporary/items', {
      key, body: { items: [{ value: 'again', note: 'first', expires_at: new Date(soon).toISOString() }, { value: 'stale', expires_at: new Date(soon).toISOString() }] },
    });
    // Only the refusal of an expiry already past (items[0] is the first one checked) is tried again.
    if (first.status !== 400 || first.body.errors?.[0]?.parameter !== 'items[0].expires_at' || Date.now() <= soon) break;
  }
  t.is(first.status, 200, first.text);
  t.like(first.body.data, { added: 2, updated: 0, item_count: 2 });
  await waitFor(async () => (await api(file.server, 'GET', '/v1/lists/temporary', { key })).body.data.items.length === 0, 'the items to expire');

  const other = await createKeyWithCli(file.server.dataDir, ['--project', projectId, '--kind', 'secret', '--scopes', 'rules:read,rules:write']);
  const readded = await api(file.server, 'POST', '/v1/lists/temporary/items', { key: other.key, body: { items: [{ value: 'again', note: 'second' }] } });
  t.is(readded.status, 200, readded.text);
  t.like(readded.body.data, { added: 1, updated: 0 });
  const read = await api(file.server, 'GET', '/v1/lists/temporary', { key });
  t.is(read.status, 200, read.text);
  t.is(read.body.data.items.length, 1);
  t.like(read.body.data.items[0], { value: 'again', note: 'second', expires_at: null, added_by: other.key_id });

  const removed = await api(file.server, 'POST', '/v1/lists/temporary/remove', { key, body: { values: ['stale'] } });
  t.is(removed.status, 200, removed.text);
  t.like(removed.body.data, { removed: 0, not_on_list: 1, item_count: 1 });
});
