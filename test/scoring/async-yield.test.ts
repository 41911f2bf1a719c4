// The background scorer yields the HTTP thread while it is saturated (scoring/async-scorer.ts
// activeLimit): a burst of async events is accepted first and scored after; near the queue's bound
// it stops yielding, so that sustained overload is scored at full speed and refused at the bound.
import test from 'ava';
import { activeLimit, limitBesideLiveBacklog } from '../../src/scoring/async-scorer.js';

test('full concurrency unless the thread is saturated', (t) => {
  t.is(activeLimit(0, 0, 100_000), 256);
  t.is(activeLimit(0.85, 50_000, 100_000), 256, 'at the threshold: not saturated');
  t.is(activeLimit(0.86, 50_000, 100_000), 1);
  t.is(activeLimit(1, 0, 100_000), 1);
});

test('no yielding once the queue holds 90 % of its bound', (t) => {
  t.is(activeLimit(1, 89_999, 100_000), 1);
  t.is(activeLimit(1, 90_000, 100_000), 256);
  t.is(activeLimit(1, 1, 1), 256, 'a bound of one: never yields');
});

test('beside a live backlog, the sandbox scorer keeps eight at most, or fewer if it yields already', (t) => {
  t.is(limitBesideLiveBacklog(activeLimit(0, 0, 100_000)), 8);
  t.is(limitBesideLiveBacklog(activeLimit(1, 0, 100_000)), 1);
  t.is(limitBesideLiveBacklog(activeLimit(1, 95_000, 100_000)), 8, 'near its own bound it still lets live go first');
});
