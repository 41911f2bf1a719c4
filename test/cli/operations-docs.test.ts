// docs/operations.md is what an operator configures from: its settings table must name every
// setting the server reads, with its flag and default.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { kSettings } from '../../src/config/settings.js';

const kDocs = fileURLToPath(new URL('../../../docs/operations.md', import.meta.url));

test('docs/operations.md lists every setting with its flag and default', (t) => {
  const docs = readFileSync(kDocs, 'utf8');
  for (const setting of Object.values(kSettings)) {
    const shown = typeof setting.default === 'boolean' ? (setting.default ? 'on' : 'off') : String(setting.default);
    t.true(docs.includes(`| \`${setting.env}\` | \`--${setting.flag}\` | ${shown} |`), `${setting.env} is missing or out of date`);
  }
});
