// A shadow rule's would-be decision (rule stats, docs/backtests.md): its delta joins the event's
// raw sum of deltas, as an active rule's would, and only the total is floored at 0.
import test from 'ava';
import type { ShadowOutcome } from '../../compiler/index.js';
import { shadowDecision, type StoredOutcome } from '../../src/analysis/stored-outcomes.js';

const kPolicy = { review_threshold: 35, block_threshold: 80 };

const shadow = (kind: ShadowOutcome['kind'], scoreDelta: number, matched = true): ShadowOutcome =>
  ({ rule_id: 'tried', rule_version: 1, kind, matched, band: matched ? 'match' : null, score_delta: scoreDelta, degraded: false });

const stored = (rawScore: number, verdictKind: StoredOutcome['verdictKind'] = null): StoredOutcome => ({
  matched: [],
  verdict: verdictKind === null ? null : { rule_id: 'ended', rule_version: 1, score_delta: 0, band: 'match', matched: true, reason: 'ended' },
  verdictKind,
  rawScore,
  shadow: [],
});

test('a scoring shadow rule adds to the raw sum, not to the floored score', (t) => {
  // Active deltas −10 (stored risk 0, allow); +40 in shadow: 30, still allow — not 40, review.
  t.is(shadowDecision(shadow('scoring', 40), stored(-10), 'allow', kPolicy), 'allow');
  t.is(shadowDecision(shadow('scoring', 45), stored(-10), 'allow', kPolicy), 'review');
  t.is(shadowDecision(shadow('scoring', 90), stored(-10), 'allow', kPolicy), 'block');
  // A negative shadow delta can only lower the total to 0.
  t.is(shadowDecision(shadow('scoring', -100), stored(50), 'review', kPolicy), 'allow');
});

test('trust allows, hard block blocks unless trust ended evaluation, a verdict hides a scoring rule, monitoring and no match change nothing', (t) => {
  t.is(shadowDecision(shadow('trust', 0), stored(90), 'block', kPolicy), 'allow');
  t.is(shadowDecision(shadow('hard_block', 0), stored(0), 'allow', kPolicy), 'block');
  t.is(shadowDecision(shadow('hard_block', 0), stored(0, 'trust'), 'allow', kPolicy), 'allow');
  t.is(shadowDecision(shadow('scoring', 100), stored(0, 'trust'), 'allow', kPolicy), 'allow');
  t.is(shadowDecision(shadow('scoring', -100), stored(0, 'hard_block'), 'block', kPolicy), 'block');
  t.is(shadowDecision(shadow('monitoring', 0), stored(90), 'block', kPolicy), 'block');
  t.is(shadowDecision(shadow('scoring', 100, false), stored(0), 'allow', kPolicy), 'allow');
});
