// One value of a server's /metrics (Prometheus text), NaN when absent.
export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

/** Polls the async queue until it is empty (or `limitMs` passes); returns the seconds it took. */
export async function drainAsyncQueue(url: string, limitMs = 600_000): Promise<number> {
  const started = Date.now();
  while ((await metric(url, 'fraud_scorer_async_queue_depth')) > 0 && Date.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (Date.now() - started) / 1000;
}

/** A histogram of /metrics with one label besides `le`: counts by upper bound in seconds, cumulative, and the total. */
export interface Buckets {
  readonly bounds: number[];
  readonly cumulative: number[];
  readonly count: number;
}

/**
 * The server's own latency histogram of a route (fraud_scorer_http_request_duration_seconds).
 * Timed from the moment the HTTP thread reads a request to its answer: time a request waits in the
 * socket while that thread is busy (a collection, a turn of other work) is not in it — the load
 * generator's own figure is.
 */
export async function durationBuckets(url: string, route: string): Promise<Buckets> {
  return histogramBuckets(await (await fetch(`${url}/metrics`)).text(), 'fraud_scorer_http_request_duration_seconds', 'route', route);
}

/** How long scored events waited for a hop (fraud_scorer_scoring_stage_seconds): `rules` or `commit`. */
export async function stageBuckets(url: string, stage: string): Promise<Buckets> {
  return histogramBuckets(await (await fetch(`${url}/metrics`)).text(), 'fraud_scorer_scoring_stage_seconds', 'stage', stage);
}

function histogramBuckets(text: string, name: string, label: string, value: string): Buckets {
  const bounds: number[] = [];
  const cumulative: number[] = [];
  let count = 0;
  const pattern = new RegExp(`^${name}_bucket\\{le="([^"]+)",${label}="([^"]+)"\\} (\\S+)$`, 'gm');
  for (const match of text.matchAll(pattern)) {
    if (match[2] !== value) continue;
    if (match[1] === '+Inf') count = Number(match[3]);
    else {
      bounds.push(Number(match[1]));
      cumulative.push(Number(match[3]));
    }
  }
  return { bounds, cumulative, count };
}
