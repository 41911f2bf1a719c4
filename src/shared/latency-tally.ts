// Durations tallied as plain numbers per latency bucket, by whoever times them; /metrics turns
// tallies into histograms at scrape time (shared/metrics.ts). Pure.

// Latency buckets in seconds: dense below 10 ms, where an inline payment check must live.
export const kLatencyBuckets = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Durations counted per bucket of kLatencyBuckets (not cumulative): what a histogram needs. */
export class LatencyTally {
  readonly buckets = new Float64Array(kLatencyBuckets.length);
  count = 0;
  sum = 0;

  record(seconds: number): void {
    let bucket = 0;
    while (bucket < kLatencyBuckets.length && seconds > kLatencyBuckets[bucket]!) bucket++;
    if (bucket < kLatencyBuckets.length) this.buckets[bucket]!++;
    this.count++;
    this.sum += seconds;
  }
}
