// The collect body schema on its own (no server): every refusal names the right field, and what
// agent.js sends is accepted. The same refusals go over HTTP in test/http/fingerprint.test.ts.
import test from 'ava';
import { checkCollectBody } from '../../src/fingerprint/collect-request.js';
import { components, kRejectedBodies } from '../_helpers/fingerprint.js';

test('the sample components are accepted', (t) => {
  const checked = checkCollectBody({ components: components() });
  t.true(checked.ok);
});

test('volatile components may be left out, stable ones may be null where a browser lacks them', (t) => {
  const sparse = components((c) => {
    for (const name of ['timezone_offset', 'window', 'battery', 'network', 'user_agent', 'collected_at']) delete c[name];
    Object.assign(c, { canvas: null, webgl: null, timezone: null, hardware_concurrency: null, device_memory: null, languages: [], fonts: [] });
  });
  t.true(checkCollectBody({ components: sparse }).ok);
  t.true(checkCollectBody({ components: components((c) => Object.assign(c, { battery: null, network: null })) }).ok);
});

for (const rejected of kRejectedBodies) {
  test(`refused: ${rejected.title}`, (t) => {
    const checked = checkCollectBody(rejected.body);
    if (checked.ok) return t.fail('accepted');
    t.is(checked.error.code, 'VALIDATION_ERROR');
    t.is(checked.error.status, 400);
    t.is(checked.error.parameter, rejected.parameter);
    t.true(checked.error.message.startsWith(rejected.parameter), checked.error.message);
  });
}
