// Request counts and latencies are tallied as plain numbers (src/shared/metrics.ts) and rendered
// at scrape time: the lines must be exactly those prom-client's own Counter and Histogram give for
// the same requests.
import test from 'ava';
import { Counter, Histogram, Registry } from 'prom-client';
import { kLatencyBuckets, LatencyTally } from '../../src/shared/latency-tally.js';
import { Metrics } from '../../src/shared/metrics.js';

const requests: ReadonlyArray<readonly [string, number, number]> = [
  ['POST /v1/events', 200, 0.0031],
  ['POST /v1/events', 200, 0.0002],
  ['POST /v1/events', 503, 0.012],
  ['GET /healthz', 200, 0.00001],
  ['POST /v1/events', 200, 7.5],
  ['unmatched', 404, 0.0005],
];

/** The lines of one metric family (its HELP, TYPE and samples) in a rendering, sorted: sample order does not matter to Prometheus. */
function family(text: string, name: string): string[] {
  const sample = new RegExp(`^${name}(_bucket|_sum|_count)?\\{`);
  return text.split('\n').filter((line) => line.startsWith(`# HELP ${name} `) || line.startsWith(`# TYPE ${name} `) || sample.test(line)).sort();
}

test('the request counter and latency histogram render as prom-client renders them', async (t) => {
  const ours = new Metrics();
  for (const [route, status, seconds] of requests) ours.recordRequest(route, status, seconds);

  const registry = new Registry();
  const counter = new Counter({ name: 'fraud_scorer_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status.', labelNames: ['route', 'status'], registers: [registry] });
  const histogram = new Histogram({
    name: 'fraud_scorer_http_request_duration_seconds', help: 'Time from request arrival to the end of the response, by route pattern.',
    labelNames: ['route'], buckets: [...kLatencyBuckets], registers: [registry],
  });
  for (const [route, status, seconds] of requests) {
    counter.inc({ route, status });
    histogram.observe({ route }, seconds);
  }
  const mine = await ours.render();
  const theirs = await registry.metrics();
  for (const name of ['fraud_scorer_http_requests_total', 'fraud_scorer_http_request_duration_seconds']) {
    t.deepEqual(family(mine, name), family(theirs, name), name);
    t.true(family(mine, name).length > 2, `${name} has samples`);
  }
});

test('nothing recorded: both families are there, without samples', async (t) => {
  const text = await new Metrics().render();
  t.true(text.includes('# TYPE fraud_scorer_http_requests_total counter'));
  t.true(text.includes('# TYPE fraud_scorer_http_request_duration_seconds histogram'));
  t.false(text.includes('fraud_scorer_http_request_duration_seconds_bucket{'));
});

test('503s are counted by code, as prom-client counts them', async (t) => {
  const ours = new Metrics();
  const registry = new Registry();
  const counter = new Counter({ name: 'fraud_scorer_http_unavailable_total', help: '503 answers by cause (the error code: ASYNC_UNAVAILABLE, COMPILED_RULES_UNAVAILABLE, ...).', labelNames: ['code'], registers: [registry] });
  for (const code of ['COMPILED_RULES_UNAVAILABLE', 'ASYNC_UNAVAILABLE', 'COMPILED_RULES_UNAVAILABLE']) {
    ours.recordUnavailable(code);
    counter.inc({ code });
  }
  t.deepEqual(family(await ours.render(), 'fraud_scorer_http_unavailable_total'), family(await registry.metrics(), 'fraud_scorer_http_unavailable_total'));
  t.true((await ours.render()).includes('fraud_scorer_http_unavailable_total{code="COMPILED_RULES_UNAVAILABLE"} 2'));
});

test('a histogram kept as tallies by its owner renders as prom-client renders the same observations', async (t) => {
  const ours = new Metrics();
  const tallies = { rules: new LatencyTally(), commit: new LatencyTally() };
  ours.labeledHistogram('fraud_scorer_scoring_stage_seconds', 'Stage times.', 'stage', () => Object.entries(tallies));
  const registry = new Registry();
  const histogram = new Histogram({ name: 'fraud_scorer_scoring_stage_seconds', help: 'Stage times.', labelNames: ['stage'], buckets: [...kLatencyBuckets], registers: [registry] });
  const observations: ReadonlyArray<readonly ['rules' | 'commit', number]> = [['rules', 0.0004], ['rules', 0.003], ['commit', 0.0011], ['rules', 9], ['commit', 0.0002]];
  for (const [stage, seconds] of observations) {
    tallies[stage].record(seconds);
    histogram.observe({ stage }, seconds);
  }
  const name = 'fraud_scorer_scoring_stage_seconds';
  t.deepEqual(family(await ours.render(), name), family(await registry.metrics(), name));
  t.true(family(await ours.render(), name).length > 2);
});
