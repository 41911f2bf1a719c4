// The Prometheus registry of one server (GET /metrics). Request counts and latencies are recorded
// by the HTTP front end; other parts (writer, async queue, webhook outbox) register gauges whose
// value is read at scrape time, so the hot path pays nothing for them.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// Latency buckets in seconds: dense below 10 ms, where an inline payment check must live.
const kLatencyBuckets = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class Metrics {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'fraud_scorer_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly #duration = new Histogram({
    name: 'fraud_scorer_http_request_duration_seconds',
    help: 'Time from request arrival to the end of the response, by route pattern.',
    labelNames: ['route'] as const,
    buckets: kLatencyBuckets,
    registers: [this.registry],
  });

  readonly #unavailable = new Counter({
    name: 'fraud_scorer_http_unavailable_total',
    help: '503 answers by cause (the error code: ASYNC_UNAVAILABLE, COMPILED_RULES_UNAVAILABLE, ...).',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'fraud_scorer_' });
  }

  /** `route` is "METHOD /pattern" (never a concrete path: bounded label values). */
  recordRequest(route: string, status: number, seconds: number): void {
    this.#requests.inc({ route, status });
    this.#duration.observe({ route }, seconds);
  }

  /** A 503 answer; `code` is one of the registry's 503 codes (bounded label values). */
  recordUnavailable(code: string): void {
    this.#unavailable.inc({ code });
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
