// The Prometheus registry of one server (GET /metrics). Request counts and latencies are recorded
// by the HTTP front end; other parts (writer, async queue, webhook outbox) register gauges whose
// value is read at scrape time, so the hot path pays nothing for them.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { kLatencyBuckets, LatencyTally } from './latency-tally.js';

/** Answers of one route ("METHOD /pattern"): counts by status, and their latencies. */
interface RouteTally {
  readonly statuses: Map<number, number>;
  readonly latency: LatencyTally;
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
    this.labeledHistogram(kDurationName, kDurationHelp, 'route', () => [...this.#routes].map(([route, tally]) => [route, tally.latency] as const));
  }

  /** `route` is "METHOD /pattern" (never a concrete path: bounded label values). */
  recordRequest(route: string, status: number, seconds: number): void {
    let tally = this.#routes.get(route);
    if (tally === undefined) {
      tally = { statuses: new Map(), latency: new LatencyTally() };
      this.#routes.set(route, tally);
    }
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    tally.latency.record(seconds);
  }

  /**
   * A histogram (kLatencyBuckets) with one label, kept by its owner as LatencyTallies and read at
   * scrape time as (label value, tally) pairs; the owner bounds the label values. What a
   * prom-client Histogram would give (registerMetric takes any object with a name and get()).
   */
  labeledHistogram(name: string, help: string, labelName: string, read: () => Iterable<readonly [string, LatencyTally]>): void {
    const values = (): Array<{ labels: Record<string, string | number>; value: number; metricName: string }> => {
      const out: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
      for (const [label, tally] of read()) {
        let cumulative = 0;
        for (let i = 0; i < kLatencyBuckets.length; i++) {
          cumulative += tally.buckets[i]!;
          out.push({ labels: { le: kLatencyBuckets[i]!, [labelName]: label }, value: cumulative, metricName: `${name}_bucket` });
        }
        out.push({ labels: { le: '+Inf', [labelName]: label }, value: tally.count, metricName: `${name}_bucket` });
        out.push({ labels: { [labelName]: label }, value: tally.sum, metricName: `${name}_sum` });
        out.push({ labels: { [labelName]: label }, value: tally.count, metricName: `${name}_count` });
      }
      return out;
    };
    this.registry.registerMetric({ name, get: () => Promise.resolve({ name, help, type: 'histogram', aggregator: 'sum', values: values() }) } as never);
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
