// The lowest seq of the events scored since the stamp (scoring/scored-since-stamp.ts), against a
// scan of every such event, over random runs: seqs mostly ascending, some scored late (async),
// stamps now and then, and stamps of parts that move nothing.
import test from 'ava';
import { ScoredSinceStamp } from '../../src/scoring/scored-since-stamp.js';

/** A small deterministic generator (mulberry32), so that a failure repeats. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (const seed of [1, 2, 3, 4, 5]) {
  test(`the lowest seq is that of a scan of every event since the stamp (seed ${seed})`, (t) => {
    const next = random(seed);
    const since = new ScoredSinceStamp();
    let events: Array<[number, number]> = [];
    let order = 0;
    let stamped = 0;
    let seq = 0;
    for (let step = 0; step < 20_000; step++) {
      const roll = next();
      if (roll < 0.8) {
        order++;
        // Most events are appended; some are async events scored late, at an earlier seq.
        const late = next() < 0.1 && seq > 50;
        const eventSeq = late ? seq - 1 - Math.floor(next() * 50) : ++seq;
        since.scored(order, eventSeq);
        events.push([order, eventSeq]);
      } else if (roll < 0.85) {
        // A part of a flush: the stamp stays. The last part: up to some order already scored.
        stamped = Math.max(stamped, Math.floor(stamped + (order - stamped) * next()));
        since.stamped(stamped);
        events = events.filter(([eventOrder]) => eventOrder > stamped);
      }
      const expected = events.length === 0 ? null : Math.min(...events.map(([, eventSeq]) => eventSeq));
      if (since.lowestSeq !== expected) {
        t.fail(`step ${step}: ${since.lowestSeq}, a scan says ${expected}`);
        return;
      }
    }
    t.pass();
  });
}

for (const seed of [11, 12, 13]) {
  test(`a stamp whose transaction rolled back is undone: the lowest seq is a scan's again (seed ${seed})`, (t) => {
    const next = random(seed);
    const since = new ScoredSinceStamp();
    // What the writer holds: events scored in a transaction that rolled back stay counted (harmless:
    // they only hold from_seq lower), so the scan counts them too; only stamps are undone.
    let events: Array<[number, number]> = [];
    let order = 0;
    let stamped = 0;
    let seq = 0;
    for (let transaction = 0; transaction < 3_000; transaction++) {
      const before = { stamped, events: [...events] };
      const scoredHere: Array<[number, number]> = [];
      const undos: Array<() => void> = [];
      const ops = 1 + Math.floor(next() * 6);
      for (let op = 0; op < ops; op++) {
        if (next() < 0.75) {
          order++;
          const late = next() < 0.1 && seq > 50;
          const eventSeq = late ? seq - 1 - Math.floor(next() * 50) : ++seq;
          since.scored(order, eventSeq);
          events.push([order, eventSeq]);
          scoredHere.push([order, eventSeq]);
        } else {
          // Now and then a stamp far ahead, so that the arrays are compacted within a transaction.
          stamped = Math.max(stamped, Math.floor(stamped + (order - stamped) * next()));
          undos.push(since.stamped(stamped));
          events = events.filter(([eventOrder]) => eventOrder > stamped);
        }
      }
      if (next() < 0.3) {
        for (let i = undos.length - 1; i >= 0; i--) undos[i]!();
        stamped = before.stamped;
        events = [...before.events, ...scoredHere];
      }
      const expected = events.length === 0 ? null : Math.min(...events.map(([, eventSeq]) => eventSeq));
      if (since.lowestSeq !== expected) {
        t.fail(`transaction ${transaction}: ${since.lowestSeq}, a scan says ${expected}`);
        return;
      }
    }
    t.pass();
  });
}

test('a stamp that passed thousands of events and dropped them from its arrays, rolled back, counts them again', (t) => {
  const since = new ScoredSinceStamp();
  for (let i = 1; i <= 3_000; i++) since.scored(i, i);
  const first = since.stamped(1_000);
  const second = since.stamped(2_500);
  t.is(since.lowestSeq, 2_501);
  second();
  t.is(since.lowestSeq, 1_001);
  first();
  t.is(since.lowestSeq, 1);
  // Stamped again after the rollback: as if the first had never been.
  since.stamped(2_999);
  t.is(since.lowestSeq, 3_000);
});
