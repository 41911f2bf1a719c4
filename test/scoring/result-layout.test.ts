// The compact stored result: expanding what was stored gives, byte for byte, the result the event
// was answered with — over every combination of matches of a ruleset with each kind of rule,
// bands, actions, degraded values and shadow rules, in one function and in chunks (> 48 rules).
import test from 'ava';
import { compileRuleset, loadRulesetWithEntries, type RuleDefinition, type RuleKind, type RulesetOutcome } from '../../compiler/index.js';
import { ResultLayout } from '../../src/scoring/result-layout.js';
import { decide, storedResultJson } from '../../src/scoring/score-result.js';
import { input, rule } from '../compiler/_helpers/rules.js';

const kPolicy = { review_threshold: 20, block_threshold: 50 };

function kinds(rules: readonly RuleDefinition[]): Map<string, RuleKind> {
  return new Map(rules.map((r) => [r.rule_id, r.kind]));
}

/** The result as the worker built it before compact results: straight from the outcome. */
function directJson(outcome: RulesetOutcome, eventId: string, enrichment: Record<string, 'ok'>): string {
  const { decision, risk_score: riskScore } = decide(outcome, kPolicy);
  return storedResultJson({
    eventId, decision, riskScore, maxPossible: outcome.max_possible, breakdownJson: JSON.stringify(outcome.breakdown),
    flags: outcome.flags, actions: outcome.actions, trustOverride: outcome.trust_override, hardBlockHit: outcome.hard_block_hit,
    enrichment, rulesetVersion: 3,
  });
}

function load(rules: RuleDefinition[]): { evaluate: (event: Record<string, unknown>) => RulesetOutcome; layout: ResultLayout } {
  const compiled = compileRuleset(rules);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  const { evaluate, entries } = loadRulesetWithEntries(compiled.artifact.source);
  return { evaluate: (event) => evaluate(input(event)), layout: new ResultLayout(entries, kinds(rules), compiled.artifact.max_possible) };
}

function roundTrip(t: import('ava').ExecutionContext, loaded: ReturnType<typeof load>, event: Record<string, unknown>, label: string): RulesetOutcome {
  const outcome = loaded.evaluate(event);
  const enrichment = { phone: 'ok' as const };
  const { decision, risk_score: riskScore } = decide(outcome, kPolicy);
  const stored = loaded.layout.compact(outcome, enrichment);
  const expanded = loaded.layout.expand(stored, { eventId: 'evt_1', decision, riskScore, rulesetVersion: 3 });
  t.is(expanded, directJson(outcome, 'evt_1', enrichment), label);
  t.is(loaded.layout.breakdownJson(outcome.breakdown), JSON.stringify(outcome.breakdown), label);
  t.deepEqual(loaded.layout.expandShadow(loaded.layout.compactShadow(outcome.shadow)), outcome.shadow, label);
  return outcome;
}

const kRules: RuleDefinition[] = [
  rule({ rule_id: 'watch', kind: 'monitoring', expression: 'user.w == true', action: 'require_kyc:liveness' }),
  rule({ rule_id: 'watch2', kind: 'monitoring', expression: 'user.w2 == true' }),
  rule({ rule_id: 'loyal', expression: 'user.l == true', score_delta: -30 }),
  rule({ rule_id: 'vpn', expression: 'user.v == true', score_delta: 15, action: 'require_kyc:liveness' }),
  rule({
    rule_id: 'amount', expression: 'user.a > 0', score_delta: 0,
    bands: [
      { band: 'huge', expression: 'user.a > 100', score_delta: 40 },
      { band: 'big', expression: 'user.a > 10', score_delta: 20 },
    ],
  }),
  rule({ rule_id: 'fraudster', kind: 'hard_block', expression: 'user.f == true', action: 'require_kyc:document' }),
  rule({ rule_id: 'trusted', kind: 'trust', expression: 'user.t == true' }),
  rule({ rule_id: 'candidate', status: 'shadow', expression: 'user.v == true', score_delta: 7 }),
  rule({ rule_id: 'shadow_trust', kind: 'trust', status: 'shadow', expression: 'user.t == true' }),
];

test('every combination of matches, verdicts, bands and wrong-typed values round-trips', (t) => {
  const loaded = load(kRules);
  const flags = ['w', 'w2', 'l', 'v', 'f', 't'];
  let verdicts = 0;
  for (let mask = 0; mask < 1 << flags.length; mask++) {
    for (const a of [0, 5, 50, 500, 'x']) {
      const user: Record<string, unknown> = { a };
      flags.forEach((flag, i) => (user[flag] = (mask & (1 << i)) !== 0 ? true : i === 3 && a === 'x' ? 'yes' : false));
      const outcome = roundTrip(t, loaded, { user }, JSON.stringify(user));
      if (outcome.trust_override || outcome.hard_block_hit) verdicts++;
    }
  }
  t.true(verdicts > 0);
});

test('a chunked ruleset (more rules than one function holds) round-trips', (t) => {
  const many: RuleDefinition[] = [...kRules];
  for (let i = 0; i < 120; i++) {
    many.push(rule({ rule_id: `r${i}`, kind: i % 5 === 0 ? 'monitoring' : 'scoring', expression: `user.n > ${i}`, score_delta: i % 5 === 0 ? 0 : i % 7, action: i % 11 === 0 ? 'require_kyc:liveness' : null }));
  }
  const loaded = load(many);
  for (const n of [-1, 0, 3, 47, 48, 49, 100, 200]) {
    roundTrip(t, loaded, { user: { n, a: n } }, `n=${n}`);
    roundTrip(t, loaded, { user: { n, t: true } }, `n=${n}, trusted`);
    roundTrip(t, loaded, { user: { n, f: true } }, `n=${n}, blocked`);
  }
});

test('a ruleset without rules stores an empty list', (t) => {
  const loaded = load([]);
  const outcome = roundTrip(t, loaded, {}, 'empty');
  t.is(loaded.layout.compact(outcome, {}), '[1,[],{}]');
});

test('the stored form is small, and a result stored in full earlier is returned as it was', (t) => {
  const loaded = load(kRules);
  const outcome = loaded.evaluate({ user: { v: true, a: 500, w: true } });
  const compact = loaded.layout.compact(outcome, { phone: 'ok' });
  t.true(compact.length < 40, compact);
  const full = directJson(outcome, 'evt_old', { phone: 'ok' });
  t.is(loaded.layout.expand(full, { eventId: 'ignored', decision: 'allow', riskScore: 0, rulesetVersion: 1 }), full);
  t.deepEqual(loaded.layout.expandShadow(JSON.stringify(outcome.shadow)), outcome.shadow);
});

test('a stored form naming an entry its ruleset does not have is an error, not a wrong result', (t) => {
  const loaded = load(kRules);
  t.throws(() => loaded.layout.expand('[1,[999],{}]', { eventId: 'e', decision: 'allow', riskScore: 0, rulesetVersion: 1 }), { message: /entry 999/ });
  t.throws(() => loaded.layout.expand('[2,[],{}]', { eventId: 'e', decision: 'allow', riskScore: 0, rulesetVersion: 1 }), { message: /unknown format/ });
});

test('matchedEntries reads the matched entries back from a compact or a full stored result; activeRuleIds is the evaluation order', (t) => {
  const loaded = load(kRules);
  const plain = loaded.evaluate({ user: { a: 50, v: true, w: true } });
  t.deepEqual(loaded.layout.activeRuleIds(), plain.breakdown.map((entry) => entry.rule_id));
  for (const user of [{ a: 50, v: true, w: true }, { a: 500, f: true }, { t: true, f: true }, { a: 0 }]) {
    const outcome = loaded.evaluate({ user });
    const matched = outcome.breakdown.filter((entry) => entry.matched);
    t.deepEqual(loaded.layout.matchedEntries(loaded.layout.compact(outcome, {})), matched, JSON.stringify(user));
    t.deepEqual(loaded.layout.matchedEntries(directJson(outcome, 'evt_1', {})), matched, `${JSON.stringify(user)}, stored in full`);
  }
});
