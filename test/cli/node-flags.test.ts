// The node flags the server is tuned for (src/cli/node-flags.ts): npm start and the systemd unit
// pass them, and a server started without them says so in its log.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { kServerNodeFlags, missingServerNodeFlags } from '../../src/cli/node-flags.js';
import { startServer } from '../_helpers/server.js';

const kRepository = fileURLToPath(new URL('../../../', import.meta.url));

test('npm start and docs/fraud-scorer.service start node with every flag', (t) => {
  const start = (JSON.parse(readFileSync(`${kRepository}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start;
  const unit = readFileSync(`${kRepository}docs/fraud-scorer.service`, 'utf8');
  const execStart = /^ExecStart=(.*)$/m.exec(unit)![1]!;
  for (const flag of kServerNodeFlags) {
    t.regex(start, new RegExp(`\\bnode ${flag} `), `npm start passes ${flag} to node`);
    t.regex(execStart, new RegExp(`/node ${flag} `), `ExecStart passes ${flag} to node`);
  }
});

test('a flag counts as given on the command line or in NODE_OPTIONS, with any value', (t) => {
  t.deepEqual(missingServerNodeFlags([], undefined), [...kServerNodeFlags]);
  t.deepEqual(missingServerNodeFlags([...kServerNodeFlags], undefined), []);
  t.deepEqual(missingServerNodeFlags(['--inspect'], ` ${kServerNodeFlags.join(' ')} --max-old-space-size=4096`), []);
  t.deepEqual(missingServerNodeFlags(['--v8-pool-size=3'], ''), [], 'another pool size, chosen on purpose');
});

test('a server started without the flags warns once, naming them; with them it does not', async (t) => {
  const bare = await startServer({ nodeArgs: [] });
  const tuned = await startServer();
  try {
    const warnings = bare.output().split('\n').filter((line) => line.includes('started without flags'));
    t.is(warnings.length, 1);
    const warning = JSON.parse(warnings[0]!) as { level: string; missing: string[] };
    t.is(warning.level, 'warn');
    t.deepEqual(warning.missing, [...kServerNodeFlags]);
    t.false(tuned.output().includes('started without flags'));
  } finally {
    await bare.stop();
    await tuned.stop();
  }
});
