// The budget of 503 log lines: a few per second and per key, the rest counted and reported with
// the next line written.
import test from 'ava';
import { LogBudget } from '../../src/shared/log.js';

test('at most n lines per window and key; the next line written says how many were left out', (t) => {
  const budget = new LogBudget(2, 1000);
  t.is(budget.take('ASYNC_UNAVAILABLE', 0), 0);
  t.is(budget.take('ASYNC_UNAVAILABLE', 10), 0);
  t.is(budget.take('ASYNC_UNAVAILABLE', 20), null);
  t.is(budget.take('ASYNC_UNAVAILABLE', 999), null);
  t.is(budget.take('COMPILED_RULES_UNAVAILABLE', 30), 0, 'keys have budgets of their own');
  t.is(budget.take('ASYNC_UNAVAILABLE', 1000), 2, 'a new window: written, with the two left out');
  t.is(budget.take('ASYNC_UNAVAILABLE', 1001), 0);
  t.is(budget.take('ASYNC_UNAVAILABLE', 1002), null);
  t.is(budget.take('ASYNC_UNAVAILABLE', 5000), 1);
});
