// What a backtest reads besides the events' own records (docs/backtests.md, "Which events" and
// "Lists"): the project's lists as they are when it starts — an item expired since an event was
// scored is off the list, whether or not the sweep has deleted it yet; one added since is on it;
// one removed since is off — and the events that were scored when it started: an async event
// still pending then is left out and counted in `events_pending`, also when it is scored while
// the backtest runs, and a later backtest judges it against its stored outcome. The running
// backtest is held at the test-only hold point `backtest` (FAULT_INJECTION=hold_points), after
// it took its snapshot: no test waits for a stretch of time.
import test from 'ava';
import { heldAt, release } from '../_helpers/faults.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, ruleBody } from '../_helpers/rules.js';
import { api, startServer, waitFor, type TestServer } from '../_helpers/server.js';

const kMinute = 60_000;

function window(startedAt: number): { from: string; to: string } {
  return { from: new Date(startedAt - kMinute).toISOString(), to: new Date(Date.now() + kMinute).toISOString() };
}

async function backtestState(server: TestServer, key: string, id: string): Promise<any> {
  return (await api(server, 'GET', `/v1/rules/backtests/${id}`, { key })).body.data;
}

async function finished(server: TestServer, key: string, id: string): Promise<any> {
  return waitFor(async () => {
    const read = await backtestState(server, key, id);
    return read.state === 'done' || read.state === 'failed' ? read : null;
  }, `backtest ${id} to finish`, 120_000);
}

function transition(report: any, from: string, to: string): { events: number; sample_event_ids: string[] } {
  return report.transitions.find((tr: { from: string; to: string }) => tr.from === from && tr.to === to);
}

test('in_list() in a backtest reads the lists as they are when it starts: expired and removed items are off, items added since are on', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT_PER_ROUTE: '100000' } });
  t.teardown(() => server.stop());
  // The expiring item must still be on the list when its event is scored, a few seconds later.
  // A machine stalled past its expiry only makes the test try again, in a new project and with a
  // window twice as long: nothing is asserted about how long anything takes.
  const setUp = async (windowMs: number): Promise<{ project: { key: string }; startedAt: number; expiring: any | null; expiresAt: number }> => {
    const project = await newProject(server, 'none');
    t.is((await api(server, 'POST', '/v1/lists', { key: project.key, body: { list_id: 'bad_emails', kind: 'email' } })).status, 201);
    await createRule(server, project.key, { rule_id: 'listed', kind: 'hard_block', status: 'active', expression: "in_list('bad_emails', user.email)" });
    await publish(server, project.key);
    const startedAt = Date.now();
    const expiresAt = Date.now() + windowMs;
    const added = await api(server, 'POST', '/v1/lists/bad_emails/items', {
      key: project.key,
      body: { items: [{ value: 'expiring@example.com', expires_at: new Date(expiresAt).toISOString() }, { value: 'removed@example.com' }] },
    });
    // Refused only if the expiry had passed when it arrived: the same stall, tried again.
    if (added.status === 400 && added.body.errors?.[0]?.parameter === 'items[0].expires_at' && Date.now() > expiresAt) return { project, startedAt, expiring: null, expiresAt };
    t.is(added.status, 200, added.text);
    const response = await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ user: { email: 'expiring@example.com' } }) });
    t.is(response.status, 200, response.text);
    return { project, startedAt, expiring: response.body.data, expiresAt };
  };
  let attempt = await setUp(4_000);
  for (let windowMs = 8_000; attempt.expiring?.decision !== 'block'; windowMs *= 2) {
    if (Date.now() <= attempt.expiresAt) {
      t.fail(`not blocked while its item was on the list: ${JSON.stringify(attempt.expiring)}`);
      return;
    }
    attempt = await setUp(windowMs);
  }
  const { project, startedAt, expiring } = attempt;
  const score = async (email: string): Promise<any> => {
    const response = await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ user: { email } }) });
    t.is(response.status, 200, response.text);
    return response.body.data;
  };
  const removed = await score('removed@example.com');
  const late = await score('late@example.com');
  const clean = await score('clean@example.com');
  // The expiring item was on the list when its event was scored (its event was blocked).
  t.deepEqual([expiring.decision, removed.decision, late.decision, clean.decision], ['block', 'block', 'allow', 'allow']);

  // Since then: one item removed, one added, and one past its expires_at — off the list, though
  // the sweep (every minute) may not have deleted its row yet.
  t.is((await api(server, 'POST', '/v1/lists/bad_emails/remove', { key: project.key, body: { values: ['removed@example.com'] } })).body.data.removed, 1);
  t.is((await api(server, 'POST', '/v1/lists/bad_emails/items', { key: project.key, body: { items: [{ value: 'late@example.com' }] } })).body.data.added, 1);
  await waitFor(async () => {
    const list = await api(server, 'GET', '/v1/lists/bad_emails', { key: project.key });
    return !list.body.data.items.some((item: { value: string }) => item.value === 'expiring@example.com');
  }, 'the expiring item to expire');

  const started = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { version: 1, ...window(startedAt) } });
  t.is(started.status, 202, started.text);
  const done = await finished(server, project.key, started.body.data.backtest_id);
  t.is(done.state, 'done', done.error ?? '');
  const report = done.report;
  t.like(report, { events_scanned: 4, events_pending: 0, events_replayed: 4, unchanged: { decision: 1, decision_and_score: 1 } });
  t.deepEqual(report.decisions, { stored: { allow: 2, review: 0, block: 2 }, candidate: { allow: 3, review: 0, block: 1 } });
  t.deepEqual(transition(report, 'block', 'allow').sample_event_ids, [expiring.event_id, removed.event_id], 'expired and removed items match nothing');
  t.deepEqual(transition(report, 'allow', 'block').sample_event_ids, [late.event_id], 'an item added since matches');
  t.deepEqual(transition(report, 'allow', 'allow').sample_event_ids, [clean.event_id]);
});

test('async events pending when a backtest starts are left out and counted, also when scored while it runs; a later backtest judges them against their stored outcome', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', RATE_LIMIT_PER_ROUTE: '100000' } });
  // A stop drains events in flight: let the held ones go first, also when an assertion ended the test.
  t.teardown(async () => {
    for (const point of ['async-scorer', 'still-pending', 'backtest']) release(server, point);
    await server.stop();
  });
  // The background scorer is held at its start: async events stay pending until it is let go.
  await heldAt(server, 'async-scorer');
  const project = await newProject(server, 'none');
  await createRule(server, project.key, ruleBody('points', {
    kind: 'scoring', expression: 'extras.points > 0',
    bands: [70, 50, 30, 10].map((points) => ({ band: `p${points}`, expression: `extras.points == ${points}`, score_delta: points })),
  }));
  await publish(server, project.key);

  const startedAt = Date.now();
  for (const points of [10, 30]) {
    const response = await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ extras: { points } }) });
    t.is(response.status, 200, response.text);
  }
  // Two async events: one scored while the first backtest is held, one that stays pending
  // through it (scored, then held before its result is stored).
  const scoredMeanwhile = minimalEvent({ async: true, extras: { points: 70 } });
  const stillPending = minimalEvent({ async: true, extras: { points: 50, fault_hold: 'still-pending' } });
  for (const event of [scoredMeanwhile, stillPending]) t.is((await api(server, 'POST', '/v1/events', { key: project.key, body: event })).status, 202);

  const first = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { version: 1, ...window(startedAt) } });
  t.is(first.status, 202, first.text);
  const firstId = first.body.data.backtest_id as string;
  await heldAt(server, 'backtest');
  t.is((await backtestState(server, project.key, firstId)).state, 'running');
  release(server, 'async-scorer');
  const scored = await waitFor(async () => {
    const read = await api(server, 'GET', `/v1/scores/${scoredMeanwhile.event_id}`, { key: project.key });
    return read.body.data?.state === 'scored' ? read.body.data : null;
  }, 'the first async event to be scored');
  t.is(scored.decision, 'review');
  await heldAt(server, 'still-pending');
  release(server, 'backtest');
  const held = await finished(server, project.key, firstId);
  t.is(held.state, 'done', held.error ?? '');
  t.like(held.report, { events_scanned: 2, events_pending: 2, events_replayed: 2, unchanged: { decision_and_score: 2 } });
  t.deepEqual(held.report.decisions.stored, { allow: 2, review: 0, block: 0 }, 'the event scored while it ran is not in it');

  // The next backtest starts after the first async event was scored: it is in, once, judged
  // against what was stored for it; the other is still pending.
  const second = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { version: 1, ...window(startedAt) } });
  t.is(second.status, 202, second.text);
  await heldAt(server, 'backtest');
  release(server, 'backtest');
  const after = await finished(server, project.key, second.body.data.backtest_id);
  t.is(after.state, 'done', after.error ?? '');
  t.like(after.report, { events_scanned: 3, events_pending: 1, events_replayed: 3, unchanged: { decision: 3, decision_and_score: 3 } });
  t.deepEqual(after.report.decisions.stored, { allow: 2, review: 1, block: 0 });
  t.deepEqual(transition(after.report, 'review', 'review').sample_event_ids, [scoredMeanwhile.event_id]);
  release(server, 'still-pending');
});

test('events_pending counts the pending events among those looked at: none past the limit', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', RATE_LIMIT_PER_ROUTE: '100000' } });
  t.teardown(async () => {
    for (const point of ['async-scorer', 'backtest']) release(server, point);
    await server.stop();
  });
  // The background scorer is held at its start: the async event stays pending.
  await heldAt(server, 'async-scorer');
  const project = await newProject(server, 'none');
  await createRule(server, project.key, ruleBody('points', { kind: 'scoring', score_delta: 10, expression: 'extras.points > 0' }));
  await publish(server, project.key);
  const startedAt = Date.now();
  const sync = (): Promise<number> => api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ extras: { points: 1 } }) }).then((response) => response.status);
  // In the log: two scored events, an async one held pending, a scored one.
  t.deepEqual([await sync(), await sync()], [200, 200]);
  t.is((await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ async: true, extras: { points: 1 } }) })).status, 202);
  t.is(await sync(), 200);

  const cut = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { version: 1, ...window(startedAt), limit: 2 } });
  t.is(cut.status, 202, cut.text);
  await heldAt(server, 'backtest');
  release(server, 'backtest');
  const report = (await finished(server, project.key, cut.body.data.backtest_id)).report;
  t.like(report, { events_scanned: 2, truncated: true, events_pending: 0, events_replayed: 2 });
  // With room for it, the pending event is looked at, and counted.
  const whole = await api(server, 'POST', '/v1/rules/backtests', { key: project.key, body: { version: 1, ...window(startedAt), limit: 3 } });
  await heldAt(server, 'backtest');
  release(server, 'backtest');
  t.like((await finished(server, project.key, whole.body.data.backtest_id)).report, { events_scanned: 3, truncated: false, events_pending: 1 });
});
