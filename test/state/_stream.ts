// Random streams of commands for the hot state and the model (_harness.ts Pair): events over three
// spaces, five projects, shared emails, phones, devices, IPs and cards, with time moving by steps
// across the 1-hour refresh and the 24-hour IP window (and now and then a step back), erasures and
// fraud marks in between. Shared by hot-state.test.ts (recorded state) and hot-state-load.test.ts
// (state loaded from the model's rows).
import fc from 'fast-check';
import type { ModelSignal, ModelType } from './_model.js';
import type { Pair } from './_harness.js';

/** Projects of each space (space = tenant × environment). */
export const kSpaces: readonly (readonly number[])[] = [[0, 1], [2], [3, 4]];
/** The same external ids in every space: they must stay apart. One needs JSON escaping. */
export const kExternalIds = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'ü "9"\\'];
const kPools: Record<ModelType, number> = { email: 6, phone: 3, fp: 5, ip: 6, card: 4 };
const kTypes = Object.keys(kPools) as ModelType[];

export const signalOf = ([type, n]: [ModelType, number]): ModelSignal => {
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

export const kCommand = fc.record({
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

export type Command = typeof kCommand extends fc.Arbitrary<infer T> ? T : never;

export const kT0 = Date.UTC(2026, 10, 23, 8);

/**
 * Applies one command at `now` to both sides, then compares the counts of rows and, for the
 * account the command named and one more, everything (Pair.compareAccount). A new account of an
 * event gets publicId() when given and it returns an id. A message when they disagree.
 */
export function applyCommand(pair: Pair, command: Command, now: number, publicId?: () => string | undefined): string | null {
  const projects = kSpaces[command.space]!;
  const externalId = kExternalIds[command.external]!;
  let failure: string | null = null;
  if (command.kind === 'event') {
    const project = projects[command.project % projects.length]!;
    failure = pair.record(command.space, project, externalId, command.decision, now, command.signals.map(signalOf), publicId?.());
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
  return failure === null ? null : `${command.kind} ${command.space}/${externalId} at +${command.step} ms: ${failure}`;
}

/** Compares every (space, external id), known or not, with `probe` as the event's values. */
export function compareEveryAccount(pair: Pair, probe: readonly ModelSignal[], now: number): string | null {
  for (const [space, projects] of kSpaces.entries()) {
    for (const externalId of kExternalIds) {
      const failure = pair.compareAccount(space, projects, externalId, probe, now);
      if (failure !== null) return failure;
    }
  }
  return null;
}
