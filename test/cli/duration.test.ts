// --overlap of webhook rotate-secret.
import test from 'ava';
import { parseDuration } from '../../src/cli/webhook.js';

test('durations: a whole number and one unit of s, m, h, d; 0 alone', (t) => {
  t.is(parseDuration('0'), 0);
  t.is(parseDuration('45s'), 45_000);
  t.is(parseDuration('90m'), 5_400_000);
  t.is(parseDuration('24h'), 86_400_000);
  t.is(parseDuration('2d'), 172_800_000);
  for (const bad of ['', '24', 'h', '1.5h', '-1h', '1w', '24 h', '0s0', '1h30m']) t.is(parseDuration(bad), null, bad);
});
