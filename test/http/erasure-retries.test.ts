// A retried DELETE /v1/accounts/{id} answers the first one's summary to the projects that used
// the account (docs/accounts.md, "Erasure": 200 with already_erased: true), whatever other live
// projects of the tenant did since with the same external id.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { api, startServer, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { newProject } from '../_helpers/rules.js';

let server: TestServer;
let key: string;

test.before(async () => {
  server = await startServer();
  key = server.bootstrap.keys.live_secret.key;
});

test.after.always(async () => {
  await server?.stop();
});

async function send(withKey: string, externalId: string): Promise<string> {
  const response = await api(server, 'POST', '/v1/events', { key: withKey, body: minimalEvent({ external_account_id: externalId }) });
  if (response.status !== 200) throw new Error(`event refused: ${response.text}`);
  return response.body.data.account_public_id as string;
}

async function erase(withKey: string, id: string): Promise<any> {
  return api(server, 'DELETE', `/v1/accounts/${encodeURIComponent(id)}`, { key: withKey });
}

test('a retried erasure still answers 200 after another project erased its own account of the same external id', async (t) => {
  const other = await newProject(server);
  const externalId = `retry-${randomUUID().slice(0, 8)}`;
  const first = await send(key, externalId);
  const erased = await erase(key, externalId);
  t.is(erased.status, 200, erased.text);
  t.false(erased.body.data.already_erased);
  t.is(erased.body.data.account_public_id, first);

  // The same external id, now used by the other project only: a new account, erased there.
  const second = await send(other.key, externalId);
  t.not(second, first);
  const erasedThere = await erase(other.key, externalId);
  t.is(erasedThere.status, 200, erasedThere.text);
  t.is(erasedThere.body.data.account_public_id, second);

  // The first project's retry, by external id and by acc_ id: its own erasure, as answered first.
  for (const id of [externalId, first]) {
    const retried = await erase(key, id);
    t.is(retried.status, 200, `${id}: ${retried.text}`);
    t.true(retried.body.data.already_erased);
    t.is(retried.body.data.account_public_id, first);
    t.deepEqual(retried.body.data.erased, erased.body.data.erased);
    t.is(retried.body.data.erased_at, erased.body.data.erased_at);
  }
  // The other project's retry answers its own erasure.
  const retriedThere = await erase(other.key, externalId);
  t.is(retriedThere.status, 200, retriedThere.text);
  t.is(retriedThere.body.data.account_public_id, second);

  // A project that used neither account still finds nothing.
  const third = await newProject(server);
  const unknown = await erase(third.key, externalId);
  t.is(unknown.status, 404, unknown.text);
  t.is(unknown.body.errors[0].code, 'NOT_FOUND');
  t.is(unknown.body.errors[0].parameter, 'id');
  const unknownById = await erase(third.key, first);
  t.is(unknownById.status, 404, unknownById.text);
  t.is(unknownById.body.errors[0].code, 'NOT_FOUND');
  t.is(unknownById.body.errors[0].parameter, 'id');
});
