// The hot state against the reference model of the SQL it replaces (_model.ts): random streams of
// events over three spaces, five projects, shared emails, phones, devices, IPs and cards, with
// time moving by steps across the 1-hour refresh and the 24-hour IP window (and now and then a
// step back), erasures and fraud marks in between. After every step: the counts of rows, and for
// the accounts the step touched and one more, the `account` and `links` signals and the links
// route of every project of the space; at the end, every account.
import test from 'ava';
import fc from 'fast-check';
import type { ModelSignal, ModelType } from './_model.js';
import { Pair } from './_harness.js';

/** Projects of each space (space = tenant × environment). */
const kSpaces: readonly (readonly number[])[] = [[0, 1], [2], [3, 4]];
/** The same external ids in every space: they must stay apart. One needs JSON escaping. */
const kExternalIds = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'ü "9"\\'];
const kPools: Record<ModelType, number> = { email: 6, phone: 3, fp: 5, ip: 6, card: 4 };
const kTypes = Object.keys(kPools) as ModelType[];

const signalOf = ([type, n]: [ModelType, number]): ModelSignal => {
  const value = `${type}-${n % kPools[type]}`;
  // Masks are a function of the value, as storedIdentifiers makes them; one needs escaping.
  return { type, value, masked: n % kPools[type] === 5 ? `ä"***${type}` : `${type[0]}***${n % kPools[type]}` };
};

// Time moves mostly on a grid of 15 minutes, so that a value comes back exactly 1 hour or exactly
// 24 hours after it was last seen (the two boundaries), nudged by a millisecond either way now and
// then, and sometimes steps back (a clock corrected by NTP).
const kMinute = 60_000;
const kSteps = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(0, 15 * kMinute, 30 * kMinute, 45 * kMinute, 60 * kMinute, 120 * kMinute, 360 * kMinute, 23 * 60 * kMinute, 24 * 60 * kMinute) },
  { weight: 2, arbitrary: fc.constantFrom(1, -1, 60 * kMinute - 1, 60 * kMinute + 1, 24 * 60 * kMinute - 1, 24 * 60 * kMinute + 1) },
  { weight: 1, arbitrary: fc.constantFrom(-15 * kMinute, -60 * kMinute) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 120 * kMinute }) },
);
const kSignals = fc.array(fc.tuple(fc.constantFrom(...kTypes), fc.nat(11)), { maxLength: 6 });

const kCommand = fc.record({
  kind: fc.oneof({ weight: 12, arbitrary: fc.constant('event' as const) }, { weight: 1, arbitrary: fc.constant('erase' as const) }, { weight: 1, arbitrary: fc.constant('fraud' as const) }),
  // A few busy accounts come back often (so that a value returns exactly at a boundary), the rest
  // now and then.
  space: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(kSpaces.length - 1) }),
  project: fc.nat(1),
  external: fc.oneof({ weight: 3, arbitrary: fc.nat(2) }, { weight: 1, arbitrary: fc.nat(kExternalIds.length - 1) }),
  decision: fc.constantFrom('allow' as const, 'allow' as const, 'review' as const, 'block' as const),
  fraud: fc.boolean(),
  signals: kSignals,
  step: kSteps,
  probe: kSignals,
  other: fc.nat(kExternalIds.length - 1),
});

test('random streams: signals, routes, erasures and counts agree with the model after every step', (t) => {
  fc.assert(
    fc.property(fc.array(kCommand, { minLength: 100, maxLength: 300, size: 'max' }), fc.nat(), (commands, seed) => {
      const pair = new Pair(seed);
      let now = Date.UTC(2026, 10, 23, 8);
      for (const [step, command] of commands.entries()) {
        now += command.step;
        const projects = kSpaces[command.space]!;
        const externalId = kExternalIds[command.external]!;
        let failure: string | null = null;
        if (command.kind === 'event') {
          const project = projects[command.project % projects.length]!;
          failure = pair.record(command.space, project, externalId, command.decision, now, command.signals.map(signalOf));
        } else if (command.kind === 'erase') {
          failure = pair.erase(command.space, externalId);
        } else {
          const accountId = pair.model.accountOf(command.space, externalId);
          if (accountId !== null) {
            pair.model.setFraud(accountId, command.fraud);
            pair.hot.setFraud(pair.hot.findAccount(command.space, externalId), command.fraud);
          }
        }
        const probe = command.probe.map(signalOf);
        failure ??= pair.compareCounts()
          ?? pair.compareAccount(command.space, projects, externalId, probe, now)
          ?? pair.compareAccount(command.space, projects, kExternalIds[command.other]!, probe, now);
        if (failure !== null) throw new Error(`step ${step} (${command.kind} ${command.space}/${externalId} at +${command.step} ms): ${failure}`);
      }
      for (const [space, projects] of kSpaces.entries()) {
        for (const externalId of kExternalIds) {
          const failure = pair.compareAccount(space, projects, externalId, commands[0]!.probe.map(signalOf), now);
          if (failure !== null) throw new Error(`at the end: ${failure}`);
        }
      }
    }),
    { seed: 20261123, numRuns: 30 },
  );
  t.pass();
});
