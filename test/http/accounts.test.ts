// Accounts, links and erasure over real HTTP (interface: Account link, GET /v1/accounts/{id}/links,
// DELETE /v1/accounts/{id}; issue 5).
import test from 'ava';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { api, runCli, startServer, type TestServer } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish } from '../_helpers/rules.js';

let server: TestServer;
let key: string;

test.before(async () => {
  server = await startServer();
  key = server.bootstrap.keys.live_secret.key;
});

test.after.always(async () => {
  await server?.stop();
});

const unique = (): string => randomUUID().slice(0, 8);

async function send(fields: Record<string, unknown>, withKey = key): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key: withKey, body: minimalEvent(fields) });
  if (response.status !== 200) throw new Error(`event refused: ${response.text}`);
  return response.body.data;
}

async function links(id: string, withKey = key): Promise<any> {
  return api(server, 'GET', `/v1/accounts/${encodeURIComponent(id)}/links`, { key: withKey });
}

function databaseText(): string {
  let text = '';
  for (const file of ['fraud-scorer.db', 'fraud-scorer.db-wal']) {
    try {
      text += readFileSync(join(server.dataDir, file), 'latin1');
    } catch {
      // no WAL file at this moment
    }
  }
  return text;
}

const kShared: Array<[string, (tag: string) => Record<string, unknown>, string]> = [
  ['email', (tag) => ({ user: { email: `shared.${tag}@example.com` } }), 'email'],
  ['phone', (tag) => ({ user: { phone: `+4477009${String(parseInt(tag, 16) % 100000).padStart(5, '0')}` } }), 'phone'],
  ['fp', (tag) => ({ context: { fp_id: `fp_device_${tag}` } }), 'fp'],
  ['ip', (tag) => ({ context: { ip: `198.51.${parseInt(tag.slice(0, 2), 16)}.${parseInt(tag.slice(2, 4), 16)}` } }), 'ip_24h'],
  ['card', (tag) => ({ payment: { bin: '411111', last4: String(1000 + (parseInt(tag, 16) % 9000)) } }), 'card'],
];

for (const [name, signal, signalType] of kShared) {
  test(`a shared ${name} links two accounts, with that signal only, masked`, async (t) => {
    const tag = unique();
    const a = `a-${tag}`;
    const b = `b-${tag}`;
    const shared = signal(tag);
    const first = await send({ external_account_id: a, ...shared });
    const second = await send({ external_account_id: b, ...shared });
    const response = await links(a);
    t.is(response.status, 200, response.text);
    t.is(response.body.data.account_public_id, first.account_public_id);
    t.is(response.body.data.external_account_id, a);
    t.is(response.body.data.links.length, 1);
    const link = response.body.data.links[0];
    t.is(link.signal_type, signalType);
    t.is(link.account_public_id, second.account_public_id);
    t.is(link.external_account_id, b);
    t.true(link.masked_signal.includes('*'));
    t.false(Number.isNaN(Date.parse(link.first_seen)));
    t.false(Number.isNaN(Date.parse(link.last_seen)));
    // The raw value appears nowhere in the answer.
    const raw = JSON.stringify(shared).match(/"(?:email|phone|fp_id|ip)":"([^"]+)"/)?.[1];
    if (raw !== undefined) t.false(response.text.includes(raw));
    const reverse = await links(b);
    t.is(reverse.body.data.links[0].account_public_id, first.account_public_id);
  });
}

test('masking: email, phone, IP and card shapes', async (t) => {
  const tag = unique();
  const shared = { user: { email: `jane.doe.${tag}@example.com`, phone: '+447911123489' }, context: { ip: '203.0.113.77' }, payment: { bin: '455600', last4: '4242' } };
  await send({ external_account_id: `m1-${tag}`, ...shared });
  await send({ external_account_id: `m2-${tag}`, ...shared });
  const byType = Object.fromEntries((await links(`m1-${tag}`)).body.data.links.map((link: { signal_type: string; masked_signal: string }) => [link.signal_type, link.masked_signal]));
  t.is(byType.email, 'j***@e***.com');
  t.is(byType.phone, '+44********89');
  t.is(byType.ip_24h, '203.0.113.*');
  t.is(byType.card, '455600******4242');
});

test('an erasure is logged at info with its counts, never with the external id; a retry is not logged again', async (t) => {
  const user = `logged-${unique()}@example.com`;
  const scored = await send({ external_account_id: user, user: { email: user } });
  const erased = await api(server, 'DELETE', `/v1/accounts/${encodeURIComponent(user)}`, { key });
  t.is(erased.status, 200, erased.text);
  const lines = (): Array<Record<string, unknown>> => server.output().split('\n').filter((line) => line.includes('"account erased"')).map((line) => JSON.parse(line));
  const ours = lines().filter((line) => line.account_public_id === scored.account_public_id);
  t.is(ours.length, 1);
  t.like(ours[0], { level: 'info', environment: 'live', events: 1 });
  t.false(server.output().includes(user), 'the external id and email appear in no log line');
  t.is((await api(server, 'DELETE', `/v1/accounts/${encodeURIComponent(user)}`, { key })).body.data.already_erased, true);
  t.is(lines().filter((line) => line.account_public_id === scored.account_public_id).length, 1);
});

test('masking: a short email or hash is not shown whole', async (t) => {
  const tag = unique();
  const shortOnes = [
    { user: { email: 'a@b.io' } },
    { user: { email: 'ab@cd.io' } },
    { user: { email_hash: 'abc' } },
    { user: { phone_hash: `${tag.slice(0, 4)}5678` } },
  ];
  const masks: string[] = [];
  for (const [i, shared] of shortOnes.entries()) {
    await send({ external_account_id: `short-${i}a-${tag}`, ...shared });
    await send({ external_account_id: `short-${i}b-${tag}`, ...shared });
    masks.push(...(await links(`short-${i}a-${tag}`)).body.data.links.map((link: { masked_signal: string }) => link.masked_signal));
  }
  t.deepEqual(masks, ['***@***.io', 'a***@c***.io', 'hash:a***', `hash:${tag.slice(0, 4)}***`]);
});

test('a national phone with user.country links to the same number in E.164', async (t) => {
  const tag = unique();
  await send({ external_account_id: `e164-${tag}`, user: { phone: '+447700900123' } });
  await send({ external_account_id: `national-${tag}`, user: { phone: '07700 900123', country: 'GB' } });
  const response = await links(`e164-${tag}`);
  t.deepEqual(response.body.data.links.map((link: { signal_type: string }) => link.signal_type), ['phone']);
});

test('an IP links only accounts that used it within 24 hours of each other', async (t) => {
  // A server of its own: the first account's use of the address is aged in the table between a
  // clean stop and a start (the accounts in memory are loaded from the tables at start).
  const own = await startServer({ keepDataDir: true });
  const ownKey = own.bootstrap.keys.live_secret.key;
  const sendTo = async (to: TestServer, fields: Record<string, unknown>): Promise<any> => {
    const response = await api(to, 'POST', '/v1/events', { key: ownKey, body: minimalEvent(fields) });
    if (response.status !== 200) throw new Error(`event refused: ${response.text}`);
    return response.body.data;
  };
  const linksOf = async (to: TestServer, id: string): Promise<any[]> =>
    (await api(to, 'GET', `/v1/accounts/${encodeURIComponent(id)}/links`, { key: ownKey })).body.data.links;
  const ip = '192.0.2.77';
  const old = await sendTo(own, { external_account_id: 'old', context: { ip } });
  t.is((await own.stop()).code, 0);
  // Age the first account's use of the address by 25 hours, as if it was yesterday's.
  const db = new Database(join(own.dataDir, 'fraud-scorer.db'));
  t.is(db.prepare("UPDATE account_signals SET last_seen = last_seen - 90000000, first_seen_s = first_seen_s - 90000 WHERE account_id = ? AND signal_type = 'ip'").run(old.account_public_id).changes, 1);
  db.close();
  const again = await startServer({ dataDir: own.dataDir });
  try {
    const recent = await sendTo(again, { external_account_id: 'recent', context: { ip } });
    t.is((await linksOf(again, 'recent')).length, 0);
    await sendTo(again, { external_account_id: 'third', context: { ip } });
    t.deepEqual((await linksOf(again, 'third')).map((link: { account_public_id: string }) => link.account_public_id), [recent.account_public_id]);
    // No time filter on reading: an IP link stays listed after its 24 hours.
    t.is((await linksOf(again, 'recent')).length, 1);
  } finally {
    await again.stop();
    rmSync(own.dataDir, { recursive: true, force: true });
  }
});

test('unknown accounts are 404 NOT_FOUND; an external id with any characters works percent-encoded, as does its acc_ id', async (t) => {
  for (const id of ['acc_doesnotexist', `nobody-${unique()}`, 'x'.repeat(65)]) {
    const response = await links(id);
    t.is(response.status, 404);
    t.is(response.body.errors[0]?.code, 'NOT_FOUND');
    t.is(response.body.errors[0]?.parameter, 'id');
  }
  const odd = `user#${unique()} ü/x?y%`;
  const event = await send({ external_account_id: odd });
  for (const id of [odd, event.account_public_id]) {
    const found = await links(id);
    t.is(found.status, 200, found.text);
    t.is(found.body.data.external_account_id, odd);
    t.is(found.body.data.account_public_id, event.account_public_id);
  }
  // One that starts with acc_ but is nobody's acc_ id is an external id like any other, on both routes.
  const lookalike = `acc_x y/${unique()}`;
  const lookalikeEvent = await send({ external_account_id: lookalike });
  t.is((await links(lookalike)).body.data.account_public_id, lookalikeEvent.account_public_id);
  const erased = await api(server, 'DELETE', `/v1/accounts/${encodeURIComponent(lookalike)}`, { key });
  t.is(erased.status, 200, erased.text);
  t.is(erased.body.data.account_public_id, lookalikeEvent.account_public_id);
  t.is((await links(lookalikeEvent.account_public_id)).status, 404, 'erased');
  t.is((await links(odd)).status, 200, 'the other account stays');
});

test('a retried DELETE is answered only to a project that used the account: another project of the tenant gets 404, before and after', async (t) => {
  const tag = unique();
  const event = await send({ external_account_id: `carol-${tag}` });
  const other = await secondLiveProjectKey();
  for (const id of [`carol-${tag}`, event.account_public_id]) {
    const before = await api(server, 'DELETE', `/v1/accounts/${id}`, { key: other });
    t.is(before.status, 404, before.text);
  }
  const erased = await api(server, 'DELETE', `/v1/accounts/carol-${tag}`, { key });
  t.is(erased.status, 200, erased.text);
  for (const id of [`carol-${tag}`, event.account_public_id]) {
    const retried = await api(server, 'DELETE', `/v1/accounts/${id}`, { key });
    t.is(retried.status, 200, retried.text);
    t.true(retried.body.data.already_erased);
    t.false('used_by' in retried.body.data);
    const elsewhere = await api(server, 'DELETE', `/v1/accounts/${id}`, { key: other });
    t.is(elsewhere.status, 404, `another project learns nothing of the erasure: ${elsewhere.text}`);
    t.is(elsewhere.body.errors[0]?.code, 'NOT_FOUND');
  }
});

test('an acc_ id names its account even once erased: a retried DELETE answers the first one and never erases the account that took the acc_ id as its external id', async (t) => {
  const tag = unique();
  const first = await send({ external_account_id: `real-${tag}`, user: { email: `real.${tag}@example.com` } });
  // A caller reusing our ids as theirs: another account whose external id is the first's acc_ id.
  const reuser = await send({ external_account_id: first.account_public_id, user: { email: `reuser.${tag}@example.com` } });
  t.not(reuser.account_public_id, first.account_public_id);
  const linksBefore = await links(first.account_public_id);
  t.is(linksBefore.body.data.account_public_id, first.account_public_id, 'the acc_ id names its own account first');

  const erased = await api(server, 'DELETE', `/v1/accounts/${first.account_public_id}`, { key });
  t.is(erased.status, 200, erased.text);
  t.is(erased.body.data.account_public_id, first.account_public_id);
  t.false(erased.body.data.already_erased);
  for (let retry = 0; retry < 2; retry++) {
    const retried = await api(server, 'DELETE', `/v1/accounts/${first.account_public_id}`, { key });
    t.is(retried.status, 200, retried.text);
    t.is(retried.body.data.account_public_id, first.account_public_id, 'the retry answers the first DELETE');
    t.true(retried.body.data.already_erased);
  }
  const gone = await links(first.account_public_id);
  t.is(gone.status, 404, `the erased account's acc_ id does not name the other account: ${gone.text}`);
  t.is(gone.body.errors[0].code, 'NOT_FOUND');
  const kept = await links(reuser.account_public_id);
  t.is(kept.status, 200, `the account that reused the id is untouched: ${kept.text}`);
  t.is(kept.body.data.external_account_id, first.account_public_id);
});

test('an acc_ id of an account only another project used names that account in both routes: 404, not an account of this project whose external id it is', async (t) => {
  const tag = unique();
  const other = await secondLiveProjectKey();
  const elsewhere = await send({ external_account_id: `elsewhere-${tag}` }, other);
  const here = await send({ external_account_id: elsewhere.account_public_id });
  const viaLinks = await links(elsewhere.account_public_id);
  t.is(viaLinks.status, 404, viaLinks.text);
  t.is(viaLinks.body.errors[0].code, 'NOT_FOUND');
  const viaErasure = await api(server, 'DELETE', `/v1/accounts/${elsewhere.account_public_id}`, { key });
  t.is(viaErasure.status, 404, viaErasure.text);
  t.is(viaErasure.body.errors[0].code, 'NOT_FOUND');
  // Both accounts are still there, each in its project, through its own acc_ id.
  t.is((await links(here.account_public_id)).status, 200);
  t.is((await links(elsewhere.account_public_id, other)).status, 200);
});

test('a project sees only the accounts it used', async (t) => {
  const tag = unique();
  const event = await send({ external_account_id: `live-only-${tag}` });
  const sandbox = server.bootstrap.keys.sandbox_secret.key;
  t.is((await links(`live-only-${tag}`, sandbox)).status, 404);
  t.is((await links(event.account_public_id, sandbox)).status, 404);
});

/** A second live project of the tenant and a secret key for it. */
async function secondLiveProjectKey(): Promise<string> {
  const project = JSON.parse((await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', `second ${unique()}`, '--json'])).stdout);
  return JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', project.project_id, '--kind', 'secret', '--json'])).stdout).key;
}

test('a link to an account of another live project shows once that account is used in this project', async (t) => {
  const tag = unique();
  const email = `two.projects.${tag}@example.com`;
  const second = await secondLiveProjectKey();
  await send({ external_account_id: `here-${tag}`, user: { email } });
  const elsewhere = await send({ external_account_id: `there-${tag}`, user: { email } }, second);
  t.is((await links(`here-${tag}`)).body.data.links.length, 0, "the other project's account is not shown to this project");
  await send({ external_account_id: `there-${tag}` });
  const shown = (await links(`here-${tag}`)).body.data.links;
  t.deepEqual(shown.map((link: { account_public_id: string }) => link.account_public_id), [elsewhere.account_public_id]);
});

test('the links route needs accounts:read', async (t) => {
  const tag = unique();
  await send({ external_account_id: `scoped-${tag}` });
  const limited = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'events:write', '--json'])).stdout).key;
  const response = await links(`scoped-${tag}`, limited);
  t.is(response.status, 403);
  t.is(response.body.errors[0]?.code, 'SCOPE_ERROR');
});

test('velocity values seen by a rule match the events sent', async (t) => {
  const token = `tok_velocity_${unique()}`;
  const matched: boolean[] = [];
  for (let i = 0; i < 4; i++) {
    const result = await send({ payment: { amount_cents: 1000, currency: 'EUR', card_token: token } });
    matched.push(result.breakdown.find((entry: { rule_id: string }) => entry.rule_id === 'card_velocity').matched);
  }
  // card_velocity matches from three earlier events with the card in the hour.
  t.deepEqual(matched, [false, false, false, true]);
});

test('erasure is refused for sandbox keys, keys without accounts:erase, shared and unknown accounts, changing nothing', async (t) => {
  const tag = unique();
  await send({ external_account_id: `keep-${tag}`, user: { email: `keep.${tag}@example.com` } });
  await send({ external_account_id: `keep2-${tag}`, user: { email: `keep.${tag}@example.com` } });

  const sandbox = await api(server, 'DELETE', `/v1/accounts/keep-${tag}`, { key: server.bootstrap.keys.sandbox_secret.key });
  t.is(sandbox.status, 403);
  t.is(sandbox.body.errors[0]?.code, 'SANDBOX_KEY_FORBIDDEN');

  const limited = JSON.parse((await runCli(['keys', 'create', '--data-dir', server.dataDir, '--project', 'live', '--kind', 'secret', '--scopes', 'accounts:read', '--json'])).stdout).key;
  const scoped = await api(server, 'DELETE', `/v1/accounts/keep-${tag}`, { key: limited });
  t.is(scoped.status, 403);
  t.is(scoped.body.errors[0]?.code, 'SCOPE_ERROR');

  const unknown = await api(server, 'DELETE', `/v1/accounts/nobody-${tag}`, { key });
  t.is(unknown.status, 404);
  t.is(unknown.body.errors[0]?.code, 'NOT_FOUND');
  t.is(unknown.body.errors[0]?.parameter, 'id');

  // The same external id used from a second live project too: one account in two projects.
  await send({ external_account_id: `keep-${tag}` }, await secondLiveProjectKey());
  const shared = await api(server, 'DELETE', `/v1/accounts/keep-${tag}`, { key });
  t.is(shared.status, 403);
  t.is(shared.body.errors[0]?.code, 'ACCOUNT_SHARED_ACROSS_PROJECTS');

  t.is((await links(`keep-${tag}`)).body.data.links.length, 1, 'still linked: nothing was erased');
});

test('erasure removes the account, its signals and links and the personal data of its events', async (t) => {
  const tag = unique();
  const email = `erase.me.${tag}@example.com`;
  const phone = `+4477009${String(parseInt(tag, 16) % 100000).padStart(5, '0')}`;
  const name = `Erika Mustermann ${tag}`;
  const userAgent = `TestAgent/${tag}`;
  const doomed = await send({
    external_account_id: `doomed-${tag}`,
    user: { email, phone, name },
    context: { ip: '203.0.113.200', user_agent: userAgent, fp_id: `fp_doomed_${tag}` },
    payment: { amount_cents: 12345, currency: 'EUR', bin: '411111', last4: '4321', card_token: `tok_doomed_${tag}` },
    extras: { note: `personal note ${tag}` },
  });
  // Linked through the device only: the survivor's own events must not hold the doomed values.
  await send({ external_account_id: `survivor-${tag}`, context: { fp_id: `fp_doomed_${tag}` } });
  t.is((await links(`survivor-${tag}`)).body.data.links.length, 1);

  const erased = await api(server, 'DELETE', `/v1/accounts/doomed-${tag}`, { key });
  t.is(erased.status, 200, erased.text);
  t.is(erased.body.data.account_public_id, doomed.account_public_id);
  t.is(erased.body.data.erased.events, 1);
  t.true(erased.body.data.erased.signals >= 5);
  t.is(erased.body.data.erased.links, 1);
  t.false(erased.body.data.already_erased);

  t.is((await links(`survivor-${tag}`)).body.data.links.length, 0, 'no other account lists it');
  t.is((await links(doomed.account_public_id)).status, 404);
  // The decision stays for audit; the personal data is gone from the database files.
  const score = await api(server, 'GET', `/v1/scores/${doomed.event_id}`, { key });
  t.is(score.status, 200);
  t.is(score.body.data.decision, doomed.decision);
  const text = databaseText();
  for (const secret of [email, phone, name, userAgent, `personal note ${tag}`, `tok_doomed_${tag}`, `doomed-${tag}`]) {
    t.false(text.includes(secret), `${secret} is still in the database`);
  }
  t.true(text.includes(`survivor-${tag}`), 'the search itself works');

  const again = await api(server, 'DELETE', `/v1/accounts/doomed-${tag}`, { key });
  t.is(again.status, 200);
  t.true(again.body.data.already_erased);
  t.is(again.body.data.account_public_id, doomed.account_public_id);
  const byId = await api(server, 'DELETE', `/v1/accounts/${doomed.account_public_id}`, { key });
  t.true(byId.body.data.already_erased);

  // The same external id later is a new account.
  const reborn = await send({ external_account_id: `doomed-${tag}` });
  t.not(reborn.account_public_id, doomed.account_public_id);
});

test('erasure takes only the erased account\'s events out of a shared device\'s velocity: other accounts\' events on it still count, as after a restart', async (t) => {
  const project = await newProject(server, 'none');
  await createRule(server, project.key, { rule_id: 'device_seen_twice', kind: 'scoring', status: 'active', score_delta: 10, expression: 'velocity.fp_24h == 2' });
  await publish(server, project.key);
  const tag = unique();
  const device = { fp_id: `fp_shared_${tag}` };
  const score = async (account: string): Promise<boolean> => {
    const response = await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ event_type: 'login', external_account_id: account, context: device }) });
    t.is(response.status, 200, response.text);
    return response.body.data.breakdown.find((entry: { rule_id: string }) => entry.rule_id === 'device_seen_twice').matched as boolean;
  };
  await score(`victim-${tag}`);
  await score(`victim-${tag}`);
  t.true(await score(`other-${tag}`), 'two earlier events on the device');
  // Three events on the device now (three would not match); erasing `other` leaves the victim's two (dropping the device's whole count would leave none).
  const erased = await api(server, 'DELETE', `/v1/accounts/other-${tag}`, { key: project.key });
  t.is(erased.status, 200, erased.text);
  t.true(await score(`victim-${tag}`), 'the victim\'s two events on the device still count, the erased one does not');
});
