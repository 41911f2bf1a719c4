// Load generation with autocannon (programmatic), and the figures we print.
import autocannon from 'autocannon';

export interface LoadOptions {
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** A new body for every request (unique event ids); omit for a fixed request. */
  readonly body?: () => string;
  readonly connections: number;
  readonly seconds: number;
  /** Fixed offered load (requests per second over all connections); omit for closed-loop maximum. */
  readonly rate?: number;
}

export interface LoadFigures {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly statusCodes: Record<string, number>;
  /** Requests completed, whatever their status, and the run's measured duration. */
  readonly requests: number;
  readonly seconds: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadFigures> {
  const makeBody = options.body;
  const result = await autocannon({
    url: `${options.url}${options.path}`,
    method: options.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...options.headers },
    connections: options.connections,
    duration: options.seconds,
    ...(options.rate === undefined ? {} : { overallRate: options.rate }),
    ...(makeBody === undefined
      ? {}
      : { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: makeBody() }) }] }),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    requests: result.requests.total,
    seconds: result.duration,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, (stats as { count: number }).count])),
  };
}

export function formatFigures(name: string, figures: LoadFigures): string {
  return `${name.padEnd(44)} ${figures.requestsPerSecond.toFixed(0).padStart(8)} req/s   p50 ${figures.p50Ms.toFixed(2).padStart(6)} ms   p99 ${figures.p99Ms.toFixed(2).padStart(6)} ms   non-2xx ${figures.non2xx}   errors ${figures.errors}`;
}
