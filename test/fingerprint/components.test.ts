// docs/fingerprint.md is what page authors and analysts read about the components: its table must
// list every component the schema knows, with the stability that decides whether it is part of
// the fp_id.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { kComponents } from '../../src/fingerprint/components.js';

const kDocs = fileURLToPath(new URL('../../../docs/fingerprint.md', import.meta.url));

test('docs/fingerprint.md lists every component with its stability, and no other', (t) => {
  const rows = readFileSync(kDocs, 'utf8')
    .split('\n')
    .map((line) => /^\| `([a-z_]+)` \| (stable|volatile) \|/.exec(line))
    .filter((match) => match !== null)
    .map((match) => [match[1], match[2]]);
  t.deepEqual(rows, kComponents.map((component) => [component.name, component.stability]));
});
