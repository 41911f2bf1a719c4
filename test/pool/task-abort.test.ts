// The rule pool's task deadline (src/pool/task-abort.ts) as piscina uses it: one listener, called
// once when the deadline passes, and not at all once piscina has taken it off. That piscina aborts
// a hung task through it is shown over HTTP (test/http/rules-guard.test.ts, rule_worker_hang).
import test from 'ava';
import { TaskAbort } from '../../src/pool/task-abort.js';

test('an abort calls the listener once and keeps its reason', (t) => {
  const abort = new TaskAbort();
  let calls = 0;
  abort.once('abort', () => calls++);
  t.false(abort.aborted);
  const reason = new Error('no answer within 10 ms');
  abort.abort(reason);
  abort.abort(new Error('again'));
  t.is(calls, 1);
  t.true(abort.aborted);
  t.is(abort.reason, reason);
});

test('a listener taken off is not called', (t) => {
  const abort = new TaskAbort();
  let calls = 0;
  const listener = (): void => {
    calls++;
  };
  abort.once('abort', listener);
  abort.removeListener('abort', listener);
  abort.abort(new Error('late'));
  t.is(calls, 0);
  t.true(abort.aborted);
});
