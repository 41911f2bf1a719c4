// The node flags the server is tuned for (src/cli/node-flags.ts): npm start and the systemd unit
// pass them, and a server started without them says so in its log.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { kServerNodeFlags, missingServerNodeFlags } from '../../src/cli/node-flags.js';
import { shellWord } from '../../src/cli/serve.js';
import { startServer } from '../_helpers/server.js';

const kRepository = fileURLToPath(new URL('../../../', import.meta.url));

test('npm start and docs/fraud-scorer.service start node with every flag', (t) => {
  const start = (JSON.parse(readFileSync(`${kRepository}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start;
  const unit = readFileSync(`${kRepository}docs/fraud-scorer.service`, 'utf8');
  const execStart = /^ExecStart=(.*)$/m.exec(unit)![1]!;
  // node's own flags: the words between node and the script it runs.
  const nodeFlagsOf = (command: string): string[] => /\bnode ((?:--\S+ )*)\S+main\.js serve/.exec(command)![1]!.trim().split(' ');
  t.deepEqual(nodeFlagsOf(start), [...kServerNodeFlags], 'npm start');
  t.deepEqual(nodeFlagsOf(execStart), [...kServerNodeFlags], 'ExecStart');
});

test('a flag counts as given on the command line or in NODE_OPTIONS, with any value', (t) => {
  t.deepEqual(missingServerNodeFlags([], undefined), [...kServerNodeFlags]);
  t.deepEqual(missingServerNodeFlags([...kServerNodeFlags], undefined), []);
  // Node takes --v8-pool-size in NODE_OPTIONS; it refuses --no-allocation-site-pretenuring there.
  t.deepEqual(missingServerNodeFlags(['--inspect', '--no-allocation-site-pretenuring'], ' --v8-pool-size=1 --max-old-space-size=4096'), []);
  t.deepEqual(missingServerNodeFlags(['--v8-pool-size=3', '--allocation-site-pretenuring'], ''), [], 'other values, chosen on purpose');
  t.deepEqual(missingServerNodeFlags(['--v8_pool_size=1', '--no_allocation_site_pretenuring'], ''), [], "V8's spelling with underscores");
  t.deepEqual(missingServerNodeFlags(['--v8-pool-size=1'], '--max-old-space-size=4096'), ['--no-allocation-site-pretenuring']);
});

test('a server started without the flags warns once, naming them; with them it does not', async (t) => {
  const bare = await startServer({ nodeArgs: [] });
  const tuned = await startServer();
  try {
    const warnings = bare.output().split('\n').filter((line) => line.includes('started without flags'));
    t.is(warnings.length, 1);
    const warning = JSON.parse(warnings[0]!) as { level: string; missing: string[]; start_with: string };
    t.is(warning.level, 'warn');
    t.deepEqual(warning.missing, [...kServerNodeFlags]);
    // The same command with the flags: its data dir and port kept (without them it would start another server).
    t.is(warning.start_with, ['node', ...kServerNodeFlags, ...bare.child.spawnargs.slice(1)].map(shellWord).join(' '));
    t.true(warning.start_with.includes(`--data-dir ${shellWord(bare.dataDir)}`));
    t.false(tuned.output().includes('started without flags'));
  } finally {
    await bare.stop();
    await tuned.stop();
  }
});

test("the command the warning suggests keeps the node flags given, the server's own among them, and adds only the missing", async (t) => {
  const server = await startServer({ nodeArgs: ['--max-old-space-size=3000', '--v8-pool-size=2'] });
  try {
    const warning = JSON.parse(server.output().split('\n').find((line) => line.includes('started without flags'))!) as { missing: string[]; start_with: string };
    t.deepEqual(warning.missing, ['--no-allocation-site-pretenuring']);
    t.is(warning.start_with, ['node', '--max-old-space-size=3000', '--v8-pool-size=2', '--no-allocation-site-pretenuring', ...server.child.spawnargs.slice(3)].map(shellWord).join(' '));
  } finally {
    await server.stop();
  }
});
