// The door of POST /v1/events (src/scoring/event-door.ts) on a clock the test moves.
import test from 'ava';
import { EventDoor, sandboxBound } from '../../src/scoring/event-door.js';

function door(max: number, overloadAt: number, afterMs: number): { door: EventDoor; clock: { ms: number } } {
  const clock = { ms: 1_000 };
  return { door: new EventDoor({ max, overloadAt, afterMs }, () => clock.ms), clock };
}

function admit(d: EventDoor, n: number): void {
  for (let i = 0; i < n; i++) d.enter('live');
}

test('past the overload count for less than its time, events are admitted; past max, never', (t) => {
  const { door: d, clock } = door(6, 2, 50);
  admit(d, 2);
  t.false(d.refuses('live'));
  clock.ms += 49;
  admit(d, 4);
  t.is(d.admitted, 6);
  t.true(d.refuses('live'), 'at max');
  t.false(d.overloaded);
  d.leave('live');
  t.false(d.refuses('live'), 'below max, not yet overloaded');
});

test('at or above the overload count for its time without a break: refused past it until below it for as long', (t) => {
  const { door: d, clock } = door(100, 2, 50);
  admit(d, 3);
  clock.ms += 50;
  t.true(d.overloaded);
  t.true(d.refuses('live'));
  // A dip below the count shorter than the time changes nothing.
  d.leave('live');
  d.leave('live');
  t.is(d.admitted, 1);
  t.false(d.refuses('live'), 'below the count an event is admitted');
  clock.ms += 10;
  d.enter('live');
  t.true(d.overloaded);
  t.true(d.refuses('live'), 'back at the count after 10 ms: still overloaded');
  // Below it for the whole time: over.
  d.leave('live');
  clock.ms += 50;
  t.false(d.overloaded);
  d.enter('live');
  t.false(d.refuses('live'));
});

test('a stay above the count shorter than its time leaves the door open, however often it comes back', (t) => {
  const { door: d, clock } = door(100, 2, 50);
  for (let i = 0; i < 5; i++) {
    admit(d, 4);
    clock.ms += 30;
    t.false(d.refuses('live'), `stall ${i}`);
    for (let j = 0; j < 4; j++) d.leave('live');
    clock.ms += 5;
  }
  t.is(d.admitted, 0);
});

test('time 0: refused past the overload count at once', (t) => {
  const { door: d } = door(100, 2, 0);
  admit(d, 1);
  t.false(d.refuses('live'));
  d.enter('live');
  t.true(d.refuses('live'));
  d.leave('live');
  t.false(d.refuses('live'));
  t.false(d.overloaded);
});

test('an overload count at or above max never comes into play: the door is max alone', (t) => {
  const { door: d, clock } = door(4, 8, 50);
  admit(d, 3);
  clock.ms += 1_000;
  t.false(d.refuses('live'));
  d.enter('live');
  t.true(d.refuses('live'), 'at max');
  clock.ms += 1_000;
  t.false(d.overloaded, 'the overload count was never reached');
  d.leave('live');
  t.false(d.refuses('live'));
});

test('an overload count equal to max: the door full for longer than its time is not overload; sandbox events pass once it empties', (t) => {
  const { door: d, clock } = door(2, 2, 3_000);
  admit(d, 2);
  t.true(d.refuses('live'), 'at max');
  clock.ms += 3_300;
  t.false(d.overloaded);
  d.leave('live');
  d.leave('live');
  t.false(d.refuses('sandbox'));
  d.enter('live');
  t.false(d.refuses('sandbox'), 'one of two in flight, none of the sandbox share');
});

test('sandbox events hold at most half the overload count; live events are admitted beside them', (t) => {
  const { door: d } = door(100, 8, 50);
  t.is(sandboxBound({ max: 100, overloadAt: 8, afterMs: 50 }), 4);
  for (let i = 0; i < 4; i++) d.enter('sandbox');
  t.is(d.sandboxAdmitted, 4);
  t.true(d.refuses('sandbox'), 'the sandbox share is full');
  t.false(d.refuses('live'));
  d.enter('live');
  t.is(d.admitted, 5);
  d.leave('sandbox');
  t.false(d.refuses('sandbox'), 'a sandbox event answered frees a place for another');
  t.is(d.sandboxAdmitted, 3);
});

test('sandbox events are refused while the server is overloaded, below their share too', (t) => {
  const { door: d, clock } = door(100, 4, 50);
  admit(d, 4);
  t.false(d.refuses('sandbox'), 'at the count, not yet overloaded');
  clock.ms += 50;
  t.true(d.overloaded);
  for (let i = 0; i < 2; i++) d.leave('live');
  t.is(d.sandboxAdmitted, 0);
  t.false(d.refuses('live'), 'below the count, live is admitted');
  t.true(d.refuses('sandbox'), 'overloaded: sandbox waits until the overload is over');
  clock.ms += 50;
  t.false(d.overloaded);
  t.false(d.refuses('sandbox'));
});

test('the sandbox share is half the lower of the two counts, and at least one', (t) => {
  t.is(sandboxBound({ max: 512, overloadAt: 64, afterMs: 150 }), 32);
  t.is(sandboxBound({ max: 6, overloadAt: 64, afterMs: 150 }), 3);
  t.is(sandboxBound({ max: 1, overloadAt: 1, afterMs: 0 }), 1);
  const { door: d } = door(1, 1, 0);
  d.enter('sandbox');
  t.true(d.refuses('live'), 'the hard bound holds for live events too');
});
