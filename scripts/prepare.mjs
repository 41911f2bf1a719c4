// npm runs `prepare` after `npm install` and `npm ci`. A development install has TypeScript (a dev
// dependency) and builds dist/ here. A production install (`npm ci --omit=dev`) has no compiler:
// it keeps the dist/ built before it (docs/operations.md, "Install") and only says so when there is
// none, instead of failing the install.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  if (!existsSync(new URL('../dist/src/cli/main.js', import.meta.url))) {
    process.stderr.write('fraud-scorer: TypeScript is not installed (a production install), so dist/ was not built; build it first with npm ci (docs/operations.md, "Install").\n');
  }
  process.exit(0);
}
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit', cwd: new URL('..', import.meta.url) });
process.exit(build.status ?? 1);
