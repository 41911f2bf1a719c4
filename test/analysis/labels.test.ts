// Precision and recall from labels (src/analysis/labels.ts): events scored and labelled through a
// real server (PUT /v1/events/{event_id}/label), then a backtest and the rule statistics run on its
// store directly: the join of labels with events, and the figures made of it.
import test from 'ava';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { kCells, runBacktest } from '../../src/analysis/backtest-run.js';
import { kArrivalDisorderMs } from '../../src/analysis/event-range.js';
import { precisionRecall } from '../../src/analysis/labels.js';
import { signalGroupsOf } from '../../src/analysis/replay.js';
import { kKeptDays, RuleStatsReader } from '../../src/analysis/stats-reader.js';
import { minimalEvent } from '../_helpers/events.js';
import { createRule, newProject, publish, ruleBody } from '../_helpers/rules.js';
import { api, startServer } from '../_helpers/server.js';

test('precision and recall: null where there is nothing to divide by, four decimals otherwise', (t) => {
  t.deepEqual(precisionRecall(0, 0, 0), { precision: null, recall: null });
  t.deepEqual(precisionRecall(0, 0, 4), { precision: null, recall: 0 });
  t.deepEqual(precisionRecall(1, 2, 3), { precision: 0.3333, recall: 0.3333 });
  t.deepEqual(precisionRecall(2, 0, 2), { precision: 1, recall: 1 });
});

test('labelled events give precision and recall per rule and per decision, in backtests and rule statistics', async (t) => {
  const server = await startServer({ keepDataDir: true });
  let projectId: string;
  const ids = new Map<number, string[]>();
  const startedAt = Date.now();
  try {
    const project = await newProject(server, 'none');
    projectId = project.projectId;
    await createRule(server, project.key, ruleBody('points', {
      kind: 'scoring', expression: 'extras.points > 0',
      bands: [70, 50, 30, 10].map((points) => ({ band: `p${points}`, expression: `extras.points == ${points}`, score_delta: points })),
    }));
    await createRule(server, project.key, ruleBody('shadow_fifty', { kind: 'hard_block', status: 'shadow', expression: 'extras.points == 50' }));
    await publish(server, project.key);
    for (const points of [70, 70, 50, 50, 30, 30, 10, 10]) {
      const response = await api(server, 'POST', '/v1/events', { key: project.key, body: minimalEvent({ extras: { points } }) });
      t.is(response.status, 200, response.text);
      ids.set(points, [...(ids.get(points) ?? []), response.body.data.event_id]);
    }
    const label = async (eventId: string, value: 'fraud' | 'legitimate'): Promise<void> => {
      const labelled = await api(server, 'PUT', `/v1/events/${eventId}/label`, { key: project.key, body: { label: value, reason: 'other' } });
      t.is(labelled.status, 200, labelled.text);
    };
    // 70s fraud; one 50 fraud, one legitimate; 30s legitimate; 10s unlabelled.
    for (const id of ids.get(70)!) await label(id, 'fraud');
    await label(ids.get(50)![0]!, 'fraud');
    await label(ids.get(50)![1]!, 'legitimate');
    for (const id of ids.get(30)!) await label(id, 'legitimate');
  } finally {
    await server.stop();
  }

  const db = new Database(join(server.dataDir, 'fraud-scorer.db'));
  t.teardown(() => db.close());
  const version = db.prepare('SELECT source, rules, signals FROM rulesets WHERE project_id = ? AND version = 1').get(projectId) as { source: string; rules: string; signals: string };
  const report = runBacktest(db, {
    backtestId: 'bt_test', projectId, from: startedAt - 60_000, to: Date.now() + 60_000, limit: 1000,
    candidate: {
      source: version.source,
      reads: signalGroupsOf(JSON.parse(version.signals) as string[]),
      rules: (JSON.parse(version.rules) as Array<{ rule_id: string; kind: 'scoring'; status: 'active' }>).map(({ rule_id, kind, status }) => ({ rule_id, kind, status })),
      // Blocks at 60: the 70s are blocked, the 50s stay in review.
      policy: { review_threshold: 40, block_threshold: 60 },
    },
  }, new Int32Array(new SharedArrayBuffer(kCells * 4))) as any;
  t.like(report, { events_scanned: 8, events_replayed: 8 });
  t.deepEqual(report.labels, {
    fraud: 3,
    legitimate: 3,
    // Stored (review 40, block 80): nothing blocked; 70s and 50s in review.
    stored: { block: { precision: null, recall: 0 }, review_or_block: { precision: 0.75, recall: 1 } },
    candidate: { block: { precision: 1, recall: 0.6667 }, review_or_block: { precision: 0.75, recall: 1 } },
  });
  const rule = (ruleId: string): any => report.rules.find((r: { rule_id: string }) => r.rule_id === ruleId);
  t.deepEqual(rule('points').candidate, { hits: 8, shadow_hits: 0, precision: 0.5, recall: 1 });
  t.deepEqual(rule('shadow_fifty').stored, { hits: 0, shadow_hits: 2, precision: 0.5, recall: 0.3333 });

  const day = Date.now() - (Date.now() % 86_400_000);
  // Asked at least kArrivalDisorderMs after midnight, whenever the suite runs: yesterday is then
  // finished (a CI run a few minutes after midnight found it still open and kept nothing).
  const now = Math.max(Date.now(), day + kArrivalDisorderMs);
  const reader = new RuleStatsReader(db);
  const stats = reader.read({ projectId, ruleId: 'shadow_fifty', from: day - 86_400_000, to: day, now });
  t.deepEqual(stats.labels, { fraud: 3, legitimate: 3, matched_fraud: 1, matched_legitimate: 1, precision: 0.5, recall: 0.3333 });
  t.like(stats.total, { events: 8, shadow: { evaluated: 8, matched: 2, decisions_changed: 2, changes: [{ from: 'review', to: 'block', events: 2 }] } });
  // Yesterday is finished: asked again, it is answered from the kept counts.
  t.is(reader.read({ projectId, ruleId: 'points', from: day - 86_400_000, to: day, now }).days_kept, 1);

  // A day taken from the kept counts and pushed out of them while the same request keeps the days
  // it read is not read again on top of its counts (which were then kept doubled).
  const kDay = 86_400_000;
  const later = day + 2 * kDay; // the events' day is finished too
  const fresh = new RuleStatsReader(db);
  const ask = (from: number, to: number) => fresh.read({ projectId, ruleId: 'points', from, to, now: later });
  // The events' days (today, or yesterday too for a run across midnight) kept first...
  t.like(ask(day - kDay, day).total, { events: 8 });
  // ...then as many older days as are kept, all but the day before them...
  let kept = 2;
  for (let end = day - 3 * kDay; kept < kKeptDays; ) {
    const days = Math.min(31, kKeptDays - kept);
    ask(end - (days - 1) * kDay, end);
    kept += days;
    end -= days * kDay;
  }
  // ...which, read now, pushes the events' days out of the kept counts within this request.
  const three = ask(day - 2 * kDay, day);
  t.like(three.total, { events: 8 });
  t.like(ask(day - kDay, day).total, { events: 8 });
});
