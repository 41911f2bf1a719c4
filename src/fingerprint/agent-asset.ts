// The browser agent served at GET /v1/fp/agent.js. Its source is a plain browser script kept as a
// real file (src/fingerprint/agent.js) so editors, linters and `node --check` treat it as what it
// is; tsc does not copy it, so it is read from the source tree, which is always beside dist/ (the
// service runs from its checkout: bin/fraud-scorer.js imports dist/). Read once at start: a
// missing file stops the server at boot rather than failing pages later.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** From dist/src/fingerprint/ back to src/fingerprint/. */
export const kAgentSourcePath = fileURLToPath(new URL('../../../src/fingerprint/agent.js', import.meta.url));

export function loadAgentScript(path: string = kAgentSourcePath): string {
  return readFileSync(path, 'utf8');
}
