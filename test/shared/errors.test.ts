// What errors may carry back (src/shared/errors.ts, apiError): card numbers masked, lone surrogates
// written as their escapes' text, and each done without spoiling the other.
import test from 'ava';
import { apiError } from '../../src/shared/errors.js';

test('a lone surrogate is written as its escape; a card beside it is masked; the escape keeps its hex', (t) => {
  t.is(apiError('VALIDATION_ERROR', 'x', 'extras.k\udc00').parameter, 'extras.k\\udc00');
  t.is(apiError('VALIDATION_ERROR', 'x', '\ud8004111111111111111').parameter, '\\ud800****************');
  t.is(apiError('VALIDATION_ERROR', 'x', '4111111111111111\udc00').parameter, '****************\\udc00');
  t.is(apiError('VALIDATION_ERROR', '\ud800 4111111111111111 is odd.').message, '\\ud800 **************** is odd.');
  t.is(apiError('VALIDATION_ERROR', 'x', 'emoji \ud83d\ude00 stays').parameter, 'emoji \ud83d\ude00 stays');
});
