// The hot state against the reference model of the SQL it replaces (_model.ts): random streams of
// events over three spaces, five projects, shared emails, phones, devices, IPs and cards, with
// time moving by steps across the 1-hour refresh and the 24-hour IP window (and now and then a
// step back), erasures and fraud marks in between (_stream.ts). After every step: the counts of
// rows, and for the accounts the step touched and one more, the `account` and `links` signals and
// the links route of every project of the space; at the end, every account.
import test from 'ava';
import fc from 'fast-check';
import { Pair } from './_harness.js';
import { applyCommand, compareEveryAccount, kCommand, kT0, signalOf } from './_stream.js';

test('random streams: signals, routes, erasures and counts agree with the model after every step', (t) => {
  fc.assert(
    fc.property(fc.array(kCommand, { minLength: 100, maxLength: 300, size: 'max' }), fc.nat(), (commands, seed) => {
      const pair = new Pair(seed);
      let now = kT0;
      for (const [step, command] of commands.entries()) {
        now += command.step;
        const failure = applyCommand(pair, command, now);
        if (failure !== null) throw new Error(`step ${step}, ${failure}`);
      }
      const failure = compareEveryAccount(pair, commands[0]!.probe.map(signalOf), now);
      if (failure !== null) throw new Error(`at the end: ${failure}`);
    }),
    { seed: 20261123, numRuns: 30 },
  );
  t.pass();
});
