// npm run bench — every benchmark, one after the other, each printing its figures:
// the compiler against cel-js, json-rules-engine and a hand-written function; the hop to the rule
// workers, single against batched; accounts, links and signals at 100,000 accounts; the HTTP front
// end and POST /v1/events at load; CPU per event by thread against the bare handler (about 2
// minutes). bench/README.md records the figures; overload.bench.ts and profile.ts run by hand.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const kSuites = ['compiler/ruleset.bench.js', 'compiler/regex.bench.js', 'pool/batching.bench.js', 'accounts/signals.bench.js', 'http/front-end.bench.js', 'http/cpu.bench.js'];

let failed = 0;
for (const suite of kSuites) {
  console.log(`\n=== bench/${suite.replace(/\.js$/, '.ts')}\n`);
  // One process per suite: one's heap and JIT state do not colour the next one's figures.
  const result = spawnSync(process.execPath, [fileURLToPath(new URL(`./${suite}`, import.meta.url))], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;
