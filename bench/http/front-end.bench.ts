// npm run bench:http — the HTTP front end against the bare uWebSockets.js limit, measured in one
// run on this machine, then the scoring route at load (events.bench.ts).
//
// The front-end figure drives GET /v1/scores/{event_id} for an unknown id with a real key: routing,
// request id, authentication, scope, rate limit, one indexed read and the envelope (a 404). The bare
// handler answers a JSON envelope with nothing else. Their ratio is the cost of our front end.
// Closed-loop runs use wrk (C) when installed, autocannon otherwise.
import { randomUUID } from 'node:crypto';
import { startBareUws, startFraudScorer } from '../_helpers/processes.js';
import { formatFigures, runLoad, type LoadFigures } from '../_helpers/load.js';
import { hasWrk, runWrk } from '../_helpers/wrk.js';
import { eventMix } from '../_helpers/event-mix.js';
import { runEventBenchmarks } from './events.bench.js';

const kSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const kConnections = 64;

export const kUseWrk = hasWrk();

/** Closed-loop maximum: wrk with a Lua script, or autocannon with the equivalent generator. */
export async function closedLoop(url: string, script: 'events.lua' | 'get.lua', env: Record<string, string>, seconds: number): Promise<LoadFigures> {
  if (kUseWrk) return runWrk({ url, script, env, connections: kConnections, seconds });
  const headers = { authorization: `Bearer ${env.FS_KEY ?? ''}` };
  return script === 'get.lua'
    ? runLoad({ url, path: env.FS_PATH ?? '/', headers, connections: kConnections, seconds })
    : runLoad({ url, method: 'POST', path: '/v1/events', headers, body: eventMix(Number(env.FS_SEED ?? 2), { async: env.FS_ASYNC === '1' }), connections: kConnections, seconds });
}

async function main(): Promise<void> {
  console.log(`fraud-scorer HTTP benchmark: ${kConnections} connections, ${kSeconds} s per run, load generator ${kUseWrk ? 'wrk' : 'autocannon (install wrk for better figures)'} on the same machine\n`);
  const bare = await startBareUws();
  await closedLoop(bare.url, 'events.lua', {}, 2);
  const bareFigures = await closedLoop(bare.url, 'events.lua', {}, kSeconds);
  await bare.stop();
  console.log(formatFigures('bare uWebSockets.js JSON handler', bareFigures));

  const server = await startFraudScorer();
  const env = { FS_KEY: server.liveKey, FS_PATH: `/v1/scores/${randomUUID()}` };
  await closedLoop(server.url, 'get.lua', env, 2);
  const frontEnd = await closedLoop(server.url, 'get.lua', env, kSeconds);
  await server.stop();
  console.log(formatFigures('GET /v1/scores/{id} (auth, limits, lookup)', frontEnd));
  console.log(`front end / bare: ${(frontEnd.requestsPerSecond / bareFigures.requestsPerSecond).toFixed(2)}\n`);

  if (process.env.BENCH_FRONT_END_ONLY !== '1') await runEventBenchmarks(bareFigures.requestsPerSecond, kSeconds);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
