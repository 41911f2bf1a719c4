// The failure envelope (src/http/envelope.ts): a frozen error's body is made once and kept; it
// reads exactly as a fresh one.
import test from 'ava';
import { failureBody } from '../../src/http/envelope.js';
import { apiError } from '../../src/shared/errors.js';

test('the body of a frozen error, kept, is the body of the same error made fresh', (t) => {
  const frozen = Object.freeze(apiError('COMPILED_RULES_UNAVAILABLE', 'The server is at capacity.'));
  const fresh = apiError('COMPILED_RULES_UNAVAILABLE', 'The server is at capacity.');
  const first = failureBody([frozen]);
  t.is(failureBody([frozen]), first);
  t.is(failureBody([fresh]), first);
  t.deepEqual(JSON.parse(first), { status: 0, data: null, errors: [{ code: 'COMPILED_RULES_UNAVAILABLE', message: 'The server is at capacity.', parameter: '' }] });
  const two = failureBody([frozen, apiError('VALIDATION_ERROR', 'bad', 'event_id')]);
  t.is(JSON.parse(two).errors.length, 2, 'several errors: made each time');
});
