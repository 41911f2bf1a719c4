// The door of POST /v1/events (src/scoring/event-door.ts) on a clock the test moves.
import test from 'ava';
import { EventDoor } from '../../src/scoring/event-door.js';

function door(max: number, overloadAt: number, afterMs: number): { door: EventDoor; clock: { ms: number } } {
  const clock = { ms: 1_000 };
  return { door: new EventDoor({ max, overloadAt, afterMs }, () => clock.ms), clock };
}

function admit(d: EventDoor, n: number): void {
  for (let i = 0; i < n; i++) d.enter();
}

test('past the overload count for less than its time, events are admitted; past max, never', (t) => {
  const { door: d, clock } = door(6, 2, 50);
  admit(d, 2);
  t.false(d.refuses);
  clock.ms += 49;
  admit(d, 4);
  t.is(d.admitted, 6);
  t.true(d.refuses, 'at max');
  t.false(d.overloaded);
  d.leave();
  t.false(d.refuses, 'below max, not yet overloaded');
});

test('at or above the overload count for its time without a break: refused past it until below it for as long', (t) => {
  const { door: d, clock } = door(100, 2, 50);
  admit(d, 3);
  clock.ms += 50;
  t.true(d.overloaded);
  t.true(d.refuses);
  // A dip below the count shorter than the time changes nothing.
  d.leave();
  d.leave();
  t.is(d.admitted, 1);
  t.false(d.refuses, 'below the count an event is admitted');
  clock.ms += 10;
  d.enter();
  t.true(d.overloaded);
  t.true(d.refuses, 'back at the count after 10 ms: still overloaded');
  // Below it for the whole time: over.
  d.leave();
  clock.ms += 50;
  t.false(d.overloaded);
  d.enter();
  t.false(d.refuses);
});

test('a stay above the count shorter than its time leaves the door open, however often it comes back', (t) => {
  const { door: d, clock } = door(100, 2, 50);
  for (let i = 0; i < 5; i++) {
    admit(d, 4);
    clock.ms += 30;
    t.false(d.refuses, `stall ${i}`);
    for (let j = 0; j < 4; j++) d.leave();
    clock.ms += 5;
  }
  t.is(d.admitted, 0);
});

test('time 0: refused past the overload count at once', (t) => {
  const { door: d } = door(100, 2, 0);
  admit(d, 1);
  t.false(d.refuses);
  d.enter();
  t.true(d.refuses);
  d.leave();
  t.false(d.refuses);
  t.false(d.overloaded);
});

test('an overload count at or above max never comes into play: the door is max alone', (t) => {
  const { door: d, clock } = door(4, 8, 50);
  admit(d, 3);
  clock.ms += 1_000;
  t.false(d.refuses);
  d.enter();
  t.true(d.refuses, 'at max');
  clock.ms += 1_000;
  t.false(d.overloaded, 'the overload count was never reached');
  d.leave();
  t.false(d.refuses);
});
