// Rule statistics over real HTTP (GET /v1/rules/{rule_id}/stats, docs/backtests.md): per UTC day,
// the events an active rule ran on (not those a trust or hard-block rule ended first) and matched;
// a shadow rule's matches and the decisions it would have changed, in which direction, applied to
// the stored score with the version's policy; refusals name the parameter and store nothing.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, readStore, ruleBody, rulesState } from '../_helpers/rules.js';
import { api, startServer, type TestServer } from '../_helpers/server.js';

let server: TestServer;

test.before(async () => {
  server = await startServer();
});

test.after.always(async () => {
  await server?.stop();
});

const kDayMs = 86_400_000;

function day(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

async function score(key: string, fields: Record<string, unknown>): Promise<any> {
  const response = await api(server, 'POST', '/v1/events', { key, body: minimalEvent(fields) });
  if (response.status !== 200) throw new Error(`event not scored: ${response.text}`);
  return response.body.data;
}

async function stats(key: string, ruleId: string, query = ''): Promise<any> {
  const response = await api(server, 'GET', `/v1/rules/${ruleId}/stats${query}`, { key });
  if (response.status !== 200) throw new Error(`stats refused: ${response.text}`);
  return response.body.data;
}

test('per day: active rules ran and matched, shadow rules matched and the decisions they would have changed', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('watch', { kind: 'monitoring', expression: 'extras.watch == true' }));
  await createRule(server, project.key, ruleBody('shadow_block', { kind: 'hard_block', status: 'shadow', expression: 'extras.flag == true' }));
  await createRule(server, project.key, ruleBody('shadow_points', { kind: 'scoring', status: 'shadow', score_delta: 45, expression: 'extras.points == true' }));
  await publish(server, project.key);

  const plain = [await score(project.key, {}), await score(project.key, {})];
  const flagged = [await score(project.key, { extras: { flag: true } }), await score(project.key, { extras: { flag: true } }), await score(project.key, { extras: { flag: true } })];
  const pointed = [await score(project.key, { extras: { points: true } }), await score(project.key, { extras: { points: true } })];
  const watched = [await score(project.key, { extras: { watch: true } }), await score(project.key, { extras: { watch: true } })];
  // A trust verdict ends evaluation before `watch`, and before a hard-block rule could act.
  const trusted = await score(project.key, { user: { trusted: true }, extras: { watch: true, flag: true } });
  // A hard-block verdict ends evaluation before `watch`; a scoring rule cannot change it.
  const fraudster = await score(project.key, { user: { is_known_fraud: true }, extras: { watch: true, points: true } });
  t.like(trusted, { decision: 'allow', trust_override: true });
  t.like(fraudster, { decision: 'block', hard_block_hit: true });
  for (const result of [...plain, ...flagged, ...pointed, ...watched]) t.true(result.risk_score < 40 && result.decision === 'allow', JSON.stringify(result));
  const events = [...plain, ...flagged, ...pointed, ...watched, trusted, fraudster];

  // The flagged events also happened yesterday: copies of their rows a day earlier, stored before
  // everything else (lowest seqs), as events of yesterday would be.
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  try {
    db.pragma('busy_timeout = 5000');
    const lowest = (db.prepare('SELECT min(seq) AS seq FROM events').get() as { seq: number }).seq;
    const copy = db.prepare(
      `INSERT INTO events (seq, project_id, event_id, event_type, account_id, received_at, state, payload, body_hash, ruleset_version, decision, risk_score, result, shadow, signals, scored_at)
       SELECT ?, project_id, ?, event_type, account_id, received_at - ${kDayMs}, state, payload, body_hash, ruleset_version, decision, risk_score, result, shadow, signals, scored_at - ${kDayMs}
       FROM events WHERE project_id = ? AND event_id = ?`,
    );
    flagged.forEach((event, i) => copy.run(lowest - 10 - i, `${event.event_id.slice(0, -4)}000${i}`, project.projectId, event.event_id));
  } finally {
    db.close();
  }
  const arrived = new Map(readStore(server, (store) =>
    store.prepare('SELECT event_id, received_at FROM events WHERE project_id = ?').all(project.projectId) as Array<{ event_id: string; received_at: number }>,
  ).map((row) => [row.event_id, row.received_at]));
  const today = day(arrived.get(fraudster.event_id)!);
  const yesterday = day(arrived.get(fraudster.event_id)! - kDayMs);
  // Per day, from where each event was stored (robust to a run that crosses midnight).
  const perDay = (list: ReadonlyArray<{ event_id: string }>, date: string): number => list.filter((event) => day(arrived.get(event.event_id)!) === date).length;
  const eventsOn = (date: string): number => perDay(events, date) + (date === yesterday ? flagged.length : 0);

  const block = await stats(project.key, 'shadow_block', `?from=${yesterday}&to=${today}`);
  t.like(block, { rule_id: 'shadow_block', status: 'shadow', from: yesterday, to: today, labels: { fraud: 0, legitimate: 0, matched_fraud: 0, matched_legitimate: 0, precision: null, recall: null } });
  t.deepEqual(block.days.map((d: { date: string }) => d.date), [yesterday, today]);
  const flaggedOn = (date: string): number => perDay(flagged, date) + (date === yesterday ? flagged.length : 0);
  for (const entry of block.days) {
    const flags = flaggedOn(entry.date);
    const trustedThatDay = perDay([trusted], entry.date);
    t.deepEqual(entry, {
      date: entry.date,
      events: eventsOn(entry.date),
      active: { evaluated: 0, matched: 0 },
      shadow: {
        evaluated: eventsOn(entry.date),
        matched: flags + trustedThatDay,
        degraded: 0,
        decisions_changed: flags,
        changes: flags === 0 ? [] : [{ from: 'allow', to: 'block', events: flags }],
      },
    }, entry.date);
  }
  t.deepEqual(block.total, {
    events: events.length + flagged.length,
    active: { evaluated: 0, matched: 0 },
    shadow: { evaluated: events.length + flagged.length, matched: 2 * flagged.length + 1, degraded: 0, decisions_changed: 2 * flagged.length, changes: [{ from: 'allow', to: 'block', events: 2 * flagged.length }] },
  });

  // The scoring shadow rule adds 45 to the stored score: allow → review below 80, nothing on a hard block.
  const points = await stats(project.key, 'shadow_points', `?from=${today}&to=${today}`);
  const expectedReviews = pointed.filter((event) => day(arrived.get(event.event_id)!) === today && event.risk_score + 45 >= 40).length;
  t.like(points.total, { shadow: { matched: perDay([...pointed, fraudster], today), decisions_changed: expectedReviews } });
  t.deepEqual(points.total.shadow.changes, expectedReviews === 0 ? [] : [{ from: 'allow', to: 'review', events: expectedReviews }]);

  // The active monitoring rule ran on every event without a verdict.
  const watch = await stats(project.key, 'watch', `?from=${yesterday}&to=${today}`);
  t.like(watch, { status: 'active' });
  t.like(watch.total, { events: events.length + flagged.length, active: { evaluated: events.length + flagged.length - 2, matched: watched.length }, shadow: { evaluated: 0, matched: 0 } });

  // Without a range: the last 7 days, today included; asked again, the same answer.
  const lastWeek = await stats(project.key, 'shadow_block');
  t.is(lastWeek.days.length, 7);
  t.is(lastWeek.to, day(Date.now()));
  t.is(lastWeek.from, day(Date.now() - 6 * kDayMs));
  t.deepEqual(await stats(project.key, 'shadow_block', `?from=${yesterday}&to=${today}`), block);

  // A rule of the drafts never published: it exists, and it ran on nothing.
  await createRule(server, project.key, ruleBody('not_yet'));
  t.like((await stats(project.key, 'not_yet', `?from=${today}&to=${today}`)).total, { events: perDay(events, today), active: { evaluated: 0, matched: 0 }, shadow: { evaluated: 0 } });
});

test('a shadow rule that could not judge an event (a value of the wrong type) counts it as degraded, not matched', async (t) => {
  const project = await newProject(server);
  await createRule(server, project.key, ruleBody('shadow_typed', { kind: 'scoring', status: 'shadow', score_delta: 10, expression: 'extras.sc > 1.0' }));
  await publish(server, project.key);
  const events = [await score(project.key, { extras: { sc: 'x' } }), await score(project.key, { extras: { sc: 'y' } }), await score(project.key, { extras: { sc: 5 } }), await score(project.key, {})];
  t.false(events.some((event) => (event.degraded ?? []).includes('shadow_typed')), 'the answer lists active rules only');
  // Yesterday too: a run that crosses midnight still finds its events (the project has no others).
  const total = (await stats(project.key, 'shadow_typed', `?from=${day(Date.now() - kDayMs)}&to=${day(Date.now())}`)).total;
  t.like(total, { events: 4, shadow: { evaluated: 4, matched: 1, degraded: 2 } });
});

test('stats refusals: malformed or repeated dates, a range too long, unknown parameters and rules, a missing scope; nothing stored changes', async (t) => {
  const project = await newProject(server);
  const eventsOnly = (await createKeyWithCli(server.dataDir, ['--project', project.projectId, '--kind', 'secret', '--scopes', 'events:write'])).key;
  const before = rulesState(server, project.projectId);
  const cases: Array<[string, string, number, string, string]> = [
    [project.key, '/v1/rules/high_amount/stats?from=2026-11-1', 400, 'VALIDATION_ERROR', 'from'],
    [project.key, '/v1/rules/high_amount/stats?to=2026-02-30', 400, 'VALIDATION_ERROR', 'to'],
    [project.key, '/v1/rules/high_amount/stats?to=0000-01-03', 400, 'VALIDATION_ERROR', 'to'],
    [project.key, '/v1/rules/high_amount/stats?from=2026-11-20T00:00:00Z', 400, 'VALIDATION_ERROR', 'from'],
    [project.key, '/v1/rules/high_amount/stats?from=2026-11-10&to=2026-11-09', 400, 'VALIDATION_ERROR', 'from'],
    [project.key, '/v1/rules/high_amount/stats?from=2026-10-01&to=2026-11-01', 400, 'VALIDATION_ERROR', 'from'],
    [project.key, '/v1/rules/high_amount/stats?from=2026-11-01&from=2026-11-02', 400, 'VALIDATION_ERROR', 'from'],
    [project.key, '/v1/rules/high_amount/stats?rule=x', 400, 'VALIDATION_ERROR', 'rule'],
    [project.key, '/v1/rules/no_such_rule/stats', 404, 'NOT_FOUND', 'rule_id'],
    [eventsOnly, '/v1/rules/high_amount/stats', 403, 'SCOPE_ERROR', ''],
  ];
  for (const [key, path, status, code, parameter] of cases) {
    const response = await api(server, 'GET', path, { key });
    t.is(response.status, status, `${path}: ${response.text}`);
    t.like(response.body.errors[0], { code, parameter }, path);
  }
  // 31 days is the longest range.
  const longest = await api(server, 'GET', '/v1/rules/high_amount/stats?from=2026-10-02&to=2026-11-01', { key: project.key });
  t.is(longest.status, 200, longest.text);
  t.is(longest.body.data.days.length, 31);
  t.is((await api(server, 'POST', '/v1/rules/high_amount/stats', { key: project.key, body: {} })).status, 405);
  t.deepEqual(rulesState(server, project.projectId), before);
});
