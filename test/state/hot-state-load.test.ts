// A hot state loaded from the rows of the tables (as a server's start will load it) against the
// reference model (_model.ts): a random stream (_stream.ts) is recorded by a hot state and the
// model; the model's rows — accounts, account_projects, account_signals with their masks and
// times, account_links — are loaded into a fresh hot state (_harness.ts loadRows: holders in
// ascending last seen, or shuffled); the loaded state must answer the `account` and `links`
// signals, the links route (the same JSON text as the state that recorded the rows), resolve and
// projectsOf as the model does, for every account; then a second stream goes on against the
// loaded state and the model, compared after every step (the 1-hour refresh, the 24-hour IP
// window and the links a new use makes all read what was loaded). Some new accounts of the second
// stream are given their public id.
import test from 'ava';
import fc from 'fast-check';
import { HotState } from '../../src/state/hot-state.js';
import { idMaker, kHasher, loadRows, Pair } from './_harness.js';
import { applyCommand, compareEveryAccount, kCommand, kExternalIds, kSpaces, kT0, signalOf } from './_stream.js';

/** The links route of every account and project, as text, from one state and the other. */
function sameRoutes(recorded: HotState, loaded: HotState): string | null {
  for (const [space, projects] of kSpaces.entries()) {
    for (const externalId of kExternalIds) {
      const a = recorded.findAccount(space, externalId);
      const b = loaded.findAccount(space, externalId);
      for (const project of projects) {
        if (recorded.linksJson(a, project) !== loaded.linksJson(b, project)) {
          return `route of ${space}/${externalId} for project ${project}:\n  recorded ${recorded.linksJson(a, project)}\n  loaded   ${loaded.linksJson(b, project)}`;
        }
      }
    }
  }
  return null;
}

test('a state loaded from the rows answers as the model does, and goes on recording as it does', (t) => {
  fc.assert(
    fc.property(
      fc.array(kCommand, { minLength: 50, maxLength: 250, size: 'max' }),
      fc.array(kCommand, { minLength: 50, maxLength: 150, size: 'max' }),
      fc.nat(),
      fc.boolean(),
      (before, after, seed, shuffled) => {
        const recorded = new Pair(seed);
        let now = kT0;
        for (const [step, command] of before.entries()) {
          now += command.step;
          const failure = applyCommand(recorded, command, now);
          if (failure !== null) throw new Error(`recording, step ${step}, ${failure}`);
        }
        // Ids for accounts created after the load: not the recorded state's sequence.
        const hot = new HotState({ hasher: kHasher, newPublicId: idMaker(seed ^ 0x2545f491) });
        const loadFailure = loadRows(recorded.model.dump(), hot, shuffled ? seed : null);
        if (loadFailure !== null) throw new Error(`loading: ${loadFailure}`);
        const loaded = new Pair(seed, { hot, model: recorded.model });
        let failure = loaded.compareCounts() ?? sameRoutes(recorded.hot, hot);
        for (const command of after.slice(0, 3)) failure ??= compareEveryAccount(loaded, command.signals.map(signalOf), now);
        if (failure !== null) throw new Error(`after loading${shuffled ? ' (holders shuffled)' : ''}: ${failure}`);
        const given = idMaker(seed ^ 0x9e3779b9);
        for (const [step, command] of after.entries()) {
          now += command.step;
          failure = applyCommand(loaded, command, now, step % 4 === 0 ? given : undefined);
          if (failure !== null) throw new Error(`after loading${shuffled ? ' (holders shuffled)' : ''}, step ${step}, ${failure}`);
        }
        failure = compareEveryAccount(loaded, after[0]!.probe.map(signalOf), now);
        if (failure !== null) throw new Error(`at the end: ${failure}`);
      },
    ),
    { seed: 20261124, numRuns: 30 },
  );
  t.pass();
});
