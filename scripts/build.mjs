// `npm run build` (with --clean: dist/ removed first) and `prepare`: TypeScript into dist/, then the
// request validators ajv compiles from their schemas (src/validation/write-validators.ts).
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url);
if (process.argv.includes('--clean')) rmSync(new URL('dist', root), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
for (const args of [[tsc, '-p', 'tsconfig.json'], ['dist/src/validation/write-validators.js']]) {
  const step = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  if (step.status !== 0) process.exit(step.status ?? 1);
}
