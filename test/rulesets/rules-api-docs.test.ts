// docs/rules-api.md must keep up with the route table: every rules route has its section and its
// scope in the summary table, and the documented bounds are the code's.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { buildRouteTable, type RouteHandlers } from '../../src/http/routes.js';
import { kDefaultRulesetPage, kMaxRulesetPage, kMaxThreshold } from '../../src/rulesets/rules-request.js';

const doc = readFileSync(new URL('../../../docs/rules-api.md', import.meta.url), 'utf8');
// Only the table's shape is read here; no handler runs.
const handlers = new Proxy({}, { get: () => () => null }) as unknown as RouteHandlers;
const rulesRoutes = buildRouteTable(handlers).filter((route) => /^\/v1\/(rules|policy|rulesets)\b/.test(route.pattern));

test('every rules route has a section and its scope in the summary table', (t) => {
  t.is(rulesRoutes.length, 13);
  for (const route of rulesRoutes) {
    const path = route.pattern.replace(/:([a-z_]+)/g, '{$1}');
    t.true(doc.includes(`\n## ${route.method} ${path}\n`), `section for ${route.method} ${path}`);
    const row = doc.split('\n').find((line) => line.startsWith(`| [\`${route.method} ${path}\`]`));
    t.truthy(row, `summary row for ${route.method} ${path}`);
    t.true(row?.includes(`| \`${route.scope}\` |`), `scope ${route.scope} of ${route.method} ${path}`);
  }
});

test('the documented bounds are the code\'s', (t) => {
  t.true(doc.includes(`block_threshold ≤ ${kMaxThreshold.toLocaleString('en-US')}`));
  t.true(doc.includes(`\`limit\` (1 to ${kMaxRulesetPage}, default ${kDefaultRulesetPage})`));
});
