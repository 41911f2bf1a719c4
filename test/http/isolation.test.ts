// Environments never mix (DESIGN §8, issue 9): nothing a sandbox key sends changes what a live key
// reads or how a live event is scored, and the reverse; a live account touched by sandbox traffic
// can still be erased. (An account two live projects used: test/cli/accounts-erase.test.ts.)
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { api, startServer, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';

let server: TestServer;
let live: string;
let sandbox: string;

test.before(async () => {
  server = await startServer();
  live = server.bootstrap.keys.live_secret.key;
  sandbox = server.bootstrap.keys.sandbox_secret.key;
});

test.after.always(async () => {
  await server?.stop();
});

const unique = (): string => randomUUID().slice(0, 8);

async function send(key: string, fields: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent(fields) });
  if (response.status !== 200) throw new Error(`event refused: ${response.text}`);
  return response.body.data;
}

/** What a result says, without what differs between any two events (ids, timing). */
function verdict(result: any): unknown {
  return {
    decision: result.decision,
    risk_score: result.risk_score,
    matched: result.breakdown.filter((entry: any) => entry.matched).map((entry: any) => entry.rule_id),
    flags: result.flags,
    hard_block_hit: result.hard_block_hit,
  };
}

function links(key: string, id: string): Promise<any> {
  return api(server, 'GET', `/v1/accounts/${encodeURIComponent(id)}/links`, { key });
}

function liveEvent(external: string, email: string): Record<string, unknown> {
  return { external_account_id: external, user: { email, country: 'DE' }, context: { fp_id: `fp_${external}` }, payment: { amount_cents: 5000, currency: 'EUR' } };
}

test('sandbox events change no live score: a live account scores as a twin with no sandbox traffic does', async (t) => {
  const tag = unique();
  const victim = `victim-${tag}`;
  const twin = `twin-${tag}`;
  await send(live, liveEvent(victim, `v.${tag}@example.com`));
  await send(live, liveEvent(twin, `t.${tag}@example.com`));
  // Sandbox traffic for the victim: known fraud, blocks, the same email and device.
  for (let i = 0; i < 3; i++) {
    const blocked = await send(sandbox, { ...liveEvent(victim, `v.${tag}@example.com`), user: { email: `v.${tag}@example.com`, is_known_fraud: true } });
    t.is(blocked.decision, 'block');
  }
  await send(sandbox, liveEvent(`sandbox-other-${tag}`, `v.${tag}@example.com`));
  const victimAfter = await send(live, liveEvent(victim, `v.${tag}@example.com`));
  const twinAfter = await send(live, liveEvent(twin, `t.${tag}@example.com`));
  t.deepEqual(verdict(victimAfter), verdict(twinAfter));
  t.is((await links(live, victim)).body.data.links.length, 0, 'the sandbox account sharing the email is no live link');
});

test('live events change no sandbox score', async (t) => {
  const tag = unique();
  const victim = `victim-${tag}`;
  const twin = `twin-${tag}`;
  await send(sandbox, liveEvent(victim, `v.${tag}@example.com`));
  await send(sandbox, liveEvent(twin, `t.${tag}@example.com`));
  for (let i = 0; i < 3; i++) await send(live, { ...liveEvent(victim, `v.${tag}@example.com`), user: { email: `v.${tag}@example.com`, is_known_fraud: true } });
  await send(live, liveEvent(`live-other-${tag}`, `v.${tag}@example.com`));
  const victimAfter = await send(sandbox, liveEvent(victim, `v.${tag}@example.com`));
  const twinAfter = await send(sandbox, liveEvent(twin, `t.${tag}@example.com`));
  t.deepEqual(verdict(victimAfter), verdict(twinAfter));
  t.is((await links(sandbox, victim)).body.data.links.length, 0);
});

test('one external id is two accounts, one per environment; neither key reads the other', async (t) => {
  const tag = unique();
  const external = `both-${tag}`;
  const inLive = await send(live, liveEvent(external, `b.${tag}@example.com`));
  const inSandbox = await send(sandbox, liveEvent(external, `b.${tag}@example.com`));
  t.regex(inLive.account_public_id, /^acc_/);
  t.regex(inSandbox.account_public_id, /^acc_/);
  t.not(inLive.account_public_id, inSandbox.account_public_id);
  t.is((await links(sandbox, inLive.account_public_id)).status, 404);
  t.is((await links(live, inSandbox.account_public_id)).status, 404);
  t.is((await links(live, external)).body.data.account_public_id, inLive.account_public_id);
  t.is((await links(sandbox, external)).body.data.account_public_id, inSandbox.account_public_id);
  // Links within each environment still work.
  await send(sandbox, liveEvent(`other-${tag}`, `b.${tag}@example.com`));
  const sandboxLinks = (await links(sandbox, external)).body.data.links;
  t.true(sandboxLinks.length > 0);
  t.is((await links(live, external)).body.data.links.length, 0);
});

test('a live account touched once by sandbox can be erased; the sandbox account stays', async (t) => {
  const tag = unique();
  const external = `victim-${tag}`;
  const inLive = await send(live, liveEvent(external, `e.${tag}@example.com`));
  const inSandbox = await send(sandbox, liveEvent(external, `e.${tag}@example.com`));
  const erased = await api(server, 'DELETE', `/v1/accounts/${external}`, { key: live });
  t.is(erased.status, 200, erased.text);
  t.is(erased.body.data.account_public_id, inLive.account_public_id);
  t.is((await links(live, external)).status, 404);
  const sandboxView = await links(sandbox, external);
  t.is(sandboxView.status, 200);
  t.is(sandboxView.body.data.account_public_id, inSandbox.account_public_id);
});

test('sandbox cases and live cases are apart', async (t) => {
  const tag = unique();
  // The default preset reviews a new account with a big amount from a mismatched country.
  const reviewed = { external_account_id: `case-${tag}`, user: { country: 'DE' }, context: { country: 'NG' }, payment: { amount_cents: 900_000, currency: 'EUR', billing_country: 'US' } };
  const result = await send(sandbox, reviewed);
  t.not(result.decision, 'allow', 'the event opens a case');
  const sandboxCases = await api(server, 'GET', `/v1/cases?project_id=${server.bootstrap.sandbox_project_id}&account=case-${tag}`, { key: sandbox });
  t.is(sandboxCases.status, 200);
  const liveCases = await api(server, 'GET', `/v1/cases?project_id=${server.bootstrap.live_project_id}&account=case-${tag}`, { key: live });
  t.is(liveCases.status, 200);
  t.is(liveCases.body.data.cases.length, 0);
});
