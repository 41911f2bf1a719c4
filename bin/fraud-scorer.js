#!/usr/bin/env node
// The package bin: runs the compiled command line (dist/, built by npm ci or npm run build).
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('fraud-scorer: dist/ is missing; build it with npm run build (docs/operations.md, "Install")\n');
  process.exit(1);
}
await import(main.href);
