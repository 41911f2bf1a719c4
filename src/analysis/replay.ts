// An event judged again, exactly as it was judged (DESIGN §8: the log keeps "the signals its rules
// read"): its payload as received, seen the way rules see it; the phone and email signals computed
// from the payload as the rule worker computes them (pool/prepare-event.ts); the velocity, links
// and account signals its rules were given, as recorded (scoring/recorded-signals.ts); and the
// time it was scored as `now`. The exact-replay test (test/http/backtests.test.ts) holds this to
// the worker's computation: a backtest of the version that scored the events reproduces every
// decision and score.
import type { RulesetInput, Signals } from '../../compiler/index.js';
import { viewForRules } from '../pool/prepare-event.js';
import { decodeRecordedSignals } from '../scoring/recorded-signals.js';
import { analyzeEmail, normalizeEmail } from '../signals/email.js';
import { analyzeEventPhone } from '../signals/phone.js';
import type { EventInput } from '../validation/event-input.js';

/** The stateful signal groups a ruleset reads: only those were computed (and recorded) for its events. */
export interface SignalGroups {
  readonly velocity: boolean;
  readonly links: boolean;
  readonly account: boolean;
}

export const kSignalGroups = ['velocity', 'links', 'account'] as const;
export type SignalGroup = (typeof kSignalGroups)[number];

/** The groups a ruleset's signal paths (RulesetArtifact.signals, rulesets.signals) read. */
export function signalGroupsOf(signals: readonly string[]): SignalGroups {
  const reads = (group: string): boolean => signals.some((path) => path === group || path.startsWith(`${group}.`));
  return { velocity: reads('velocity'), links: reads('links'), account: reads('account') };
}

export type ReplayInput =
  | { readonly ok: true; readonly input: RulesetInput }
  /** Scored before signals were recorded (migration 010). */
  | { readonly ok: false; readonly reason: 'no_recorded_signals' }
  /** Its account was erased: the payload keeps only amounts and ids (accounts/erasure.ts). */
  | { readonly ok: false; readonly reason: 'erased' }
  /** The candidate reads a group the scoring version did not, so it was never computed for the event. */
  | { readonly ok: false; readonly reason: 'signals_not_recorded'; readonly groups: readonly SignalGroup[] };

export function replayInput(payload: string, recorded: string | null, scoredAt: number, reads: SignalGroups): ReplayInput {
  if (recorded === null) return { ok: false, reason: 'no_recorded_signals' };
  const event = JSON.parse(payload) as EventInput & { erased?: unknown };
  if (event.erased === true) return { ok: false, reason: 'erased' };
  const stateful = decodeRecordedSignals(recorded);
  // Every group missing, not the first: the report counts each (docs/backtests.md).
  const missing = kSignalGroups.filter((group) => reads[group] && stateful[group] === undefined);
  if (missing.length > 0) return { ok: false, reason: 'signals_not_recorded', groups: missing };
  // As prepare-event.ts computes them for the rules.
  const phone = analyzeEventPhone(event);
  const email = analyzeEmail(typeof event.user?.email === 'string' ? normalizeEmail(event.user.email) : null);
  const signals = { phone: phone.signals, email, ...stateful } as Partial<Signals>;
  return { ok: true, input: { event: viewForRules(event), signals, now: scoredAt } };
}
