// npm run bench:http — the HTTP front end against the bare uWebSockets.js limit, measured in one
// run on this machine, and the scoring route at load (bench/http/events.bench.ts has the details).
//
// The front-end figure drives GET /v1/scores/{event_id} for an unknown id with a real key: routing,
// request id, authentication, scope, rate limit, one indexed read and the envelope. The bare
// handler answers a JSON envelope with nothing else. Their ratio is the cost of our front end.
import { randomUUID } from 'node:crypto';
import { startBareUws, startFraudScorer } from '../_helpers/processes.js';
import { formatFigures, runLoad } from '../_helpers/load.js';
import { runEventBenchmarks } from './events.bench.js';

const kSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const kConnections = 64;

async function main(): Promise<void> {
  console.log(`fraud-scorer HTTP benchmark: ${kConnections} connections, ${kSeconds} s per run, load generator (autocannon) on the same machine\n`);
  const bare = await startBareUws();
  const bareFigures = await runLoad({ url: bare.url, method: 'POST', path: '/', body: () => `{"event_id":"${randomUUID()}","event_type":"login"}`, connections: kConnections, seconds: kSeconds });
  await bare.stop();
  console.log(formatFigures('bare uWebSockets.js JSON handler', bareFigures));

  const server = await startFraudScorer();
  const headers = { authorization: `Bearer ${server.liveKey}` };
  const frontEnd = await runLoad({ url: server.url, path: `/v1/scores/${randomUUID()}`, headers, connections: kConnections, seconds: kSeconds });
  await server.stop();
  console.log(formatFigures('GET /v1/scores/{id} (auth, limits, lookup)', frontEnd));
  console.log(`front end / bare: ${(frontEnd.requestsPerSecond / bareFigures.requestsPerSecond).toFixed(2)}\n`);

  if (process.env.BENCH_FRONT_END_ONLY !== '1') await runEventBenchmarks(bareFigures.requestsPerSecond, kSeconds);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
