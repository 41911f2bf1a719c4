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
