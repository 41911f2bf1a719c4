// The validators compiled at build time are refused when the schema changed since (a build with tsc
// alone keeps the last full build's validators): a stale validator would accept what the schema no
// longer does.
import test from 'ava';
import { kCollectSchema } from '../../src/fingerprint/collect-schema.js';
import { kEventSchema } from '../../src/validation/event-schema.js';
import { precompiledValidator } from '../../src/validation/precompiled.js';

test('a validator built from its schema is given', (t) => {
  const validate = precompiledValidator('event-input', kEventSchema);
  t.true(validate({ event_id: '3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c', event_type: 'login' }));
  t.false(validate({ event_id: '3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c', event_type: 'refund' }));
  t.is(typeof precompiledValidator('collect-request', kCollectSchema), 'function');
});

test('a validator built from another schema is refused', (t) => {
  const changed = { ...kEventSchema, required: ['event_id'] };
  t.throws(() => precompiledValidator('event-input', changed), { message: 'the request validator event-input was built from another schema: run npm run build' });
  t.throws(() => precompiledValidator('collect-request', kEventSchema), { message: /collect-request was built from another schema/ });
});
