// The Prometheus registry of one server (GET /metrics). Request counts and latencies are recorded
// by the HTTP front end; other parts (writer, async queue, webhook outbox) register gauges whose
// value is read at scrape time, so the hot path pays nothing for them.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

// Latency buckets in seconds: dense below 10 ms, where an inline payment check must live.
export const kLatencyBuckets = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Answers of one route ("METHOD /pattern"): counts by status, and the latency histogram's counts per bucket (not cumulative). */
interface RouteTally {
  readonly statuses: Map<number, number>;
  readonly buckets: Float64Array;
  count: number;
  sum: number;
}

const kDurationName = 'fraud_scorer_http_request_duration_seconds';
const kDurationHelp = 'Time from request arrival to the end of the response, by route pattern.';

export class Metrics {
  readonly registry = new Registry();
  // Requests are tallied here as plain numbers and handed to the registry at scrape time: prom-client's
  // inc() and observe() hash their labels on every call, several microseconds a request.
  readonly #routes = new Map<string, RouteTally>();

  readonly #requests: Counter<'route' | 'status'> = new Counter({
    name: 'fraud_scorer_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
    collect: () => {
      this.#requests.reset();
      for (const [route, tally] of this.#routes) {
        for (const [status, count] of tally.statuses) this.#requests.inc({ route, status }, count);
      }
    },
  });

  readonly #unavailableByCode = new Map<string, number>();
  readonly #unavailable: Counter<'code'> = new Counter({
    name: 'fraud_scorer_http_unavailable_total',
    help: '503 answers by cause (the error code: ASYNC_UNAVAILABLE, COMPILED_RULES_UNAVAILABLE, ...).',
    labelNames: ['code'] as const,
    registers: [this.registry],
    collect: () => {
      this.#unavailable.reset();
      for (const [code, count] of this.#unavailableByCode) this.#unavailable.inc({ code }, count);
    },
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'fraud_scorer_' });
    // What a prom-client Histogram would give, from the tallies (registerMetric takes any object
    // with a name and get()).
    this.registry.registerMetric({ name: kDurationName, get: () => Promise.resolve(this.#durationValues()) } as never);
  }

  /** `route` is "METHOD /pattern" (never a concrete path: bounded label values). */
  recordRequest(route: string, status: number, seconds: number): void {
    let tally = this.#routes.get(route);
    if (tally === undefined) {
      tally = { statuses: new Map(), buckets: new Float64Array(kLatencyBuckets.length), count: 0, sum: 0 };
      this.#routes.set(route, tally);
    }
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < kLatencyBuckets.length && seconds > kLatencyBuckets[bucket]!) bucket++;
    if (bucket < kLatencyBuckets.length) tally.buckets[bucket]!++;
    tally.count++;
    tally.sum += seconds;
  }

  #durationValues(): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: unknown[] } {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const [route, tally] of this.#routes) {
      let cumulative = 0;
      for (let i = 0; i < kLatencyBuckets.length; i++) {
        cumulative += tally.buckets[i]!;
        values.push({ labels: { le: kLatencyBuckets[i]!, route }, value: cumulative, metricName: `${kDurationName}_bucket` });
      }
      values.push({ labels: { le: '+Inf', route }, value: tally.count, metricName: `${kDurationName}_bucket` });
      values.push({ labels: { route }, value: tally.sum, metricName: `${kDurationName}_sum` });
      values.push({ labels: { route }, value: tally.count, metricName: `${kDurationName}_count` });
    }
    return { name: kDurationName, help: kDurationHelp, type: 'histogram', aggregator: 'sum', values };
  }

  /** A 503 answer; `code` is one of the registry's 503 codes (bounded label values). */
  recordUnavailable(code: string): void {
    this.#unavailableByCode.set(code, (this.#unavailableByCode.get(code) ?? 0) + 1);
  }

  /** A gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Gauges with labels, read at scrape time as (labels, value) pairs; the owner bounds the label values. */
  labeledGauge(name: string, help: string, labelNames: readonly string[], read: () => Iterable<readonly [Record<string, string>, number]>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of read()) this.set(labels, value);
      },
    });
  }

  /** A counter kept by its owner as a plain number, read at scrape time. */
  counter(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /**
   * Counters with labels, kept by their owner and read at scrape time as (labels, value) pairs.
   * The owner bounds the label values.
   */
  labeledCounter(name: string, help: string, labelNames: readonly string[], read: () => Iterable<readonly [Record<string, string>, number]>): void {
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of read()) this.inc(labels, value);
      },
    });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
