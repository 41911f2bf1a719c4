// compileRuleset and the outcome of the ruleset function: evaluation order,
// early endings, bands, shadow, actions, degraded, max_possible, signals,
// diagnostics.

import test from 'ava';
import { compileRuleset, loadRuleset } from '../../compiler/index.js';
import type { RuleDefinition } from '../../compiler/index.js';
import { compile, input, rule } from './_helpers/rules.js';

const trust = rule({ rule_id: 'trusted', kind: 'trust', expression: 'user.trusted == true' });
const block = rule({ rule_id: 'fraudster', kind: 'hard_block', expression: 'user.is_known_fraud == true', action: 'require_kyc:document' });
const amount = rule({
  rule_id: 'amount', expression: 'payment.amount_cents >= 1000',
  score_delta: 0,
  bands: [
    { band: 'huge', expression: 'payment.amount_cents >= 100000', score_delta: 40 },
    { band: 'big', expression: 'payment.amount_cents >= 10000', score_delta: 20 },
  ],
});
const vpn = rule({ rule_id: 'vpn', expression: 'context.session_anon == true', score_delta: 15, action: 'require_kyc:liveness' });
const loyal = rule({ rule_id: 'loyal', expression: 'account.events >= 100', score_delta: -30 });
const watch = rule({ rule_id: 'watch', kind: 'monitoring', expression: "context.country == 'NG'", action: 'require_kyc:liveness' });
const candidate = rule({ rule_id: 'candidate', status: 'shadow', expression: 'payment.amount_cents > 5', score_delta: 7 });
const shadowTrust = rule({ rule_id: 'shadow_trust', kind: 'trust', status: 'shadow', expression: 'user.vip == true' });
const old = rule({ rule_id: 'old', status: 'archived', expression: 'this is not CEL', score_delta: 500 });
const all: RuleDefinition[] = [watch, loyal, vpn, amount, block, candidate, trust, shadowTrust, old];
const fn = compile(all);

test('evaluation order: trust, hard_block, scoring, monitoring; input order within a kind', (t) => {
  const out = fn(input({ payment: { amount_cents: 50 } }));
  t.deepEqual(out.breakdown.map((b) => b.rule_id), ['trusted', 'fraudster', 'loyal', 'vpn', 'amount', 'watch']);
  t.false(out.trust_override);
  t.false(out.hard_block_hit);
  t.is(out.score, 0);
});

test('a matching trust rule ends evaluation: score 0, only the winner in the breakdown', (t) => {
  const out = fn(input({ user: { trusted: true, is_known_fraud: true }, payment: { amount_cents: 500000 }, context: { country: 'NG' } }));
  t.true(out.trust_override);
  t.false(out.hard_block_hit);
  t.is(out.score, 0);
  t.deepEqual(out.breakdown, [{ rule_id: 'trusted', rule_version: 1, score_delta: 0, band: 'match', matched: true, reason: 'trusted' }]);
  t.deepEqual(out.flags, []);
  t.deepEqual(out.actions, []);
});

test('a matching hard_block rule ends evaluation: score = max_possible, its action', (t) => {
  const out = fn(input({ user: { is_known_fraud: true }, payment: { amount_cents: 500000 } }));
  t.true(out.hard_block_hit);
  t.is(out.score, out.max_possible);
  t.is(out.max_possible, 40 + 15);
  t.deepEqual(out.breakdown, [{ rule_id: 'fraudster', rule_version: 1, score_delta: 0, band: 'match', matched: true, reason: 'fraudster', action: 'require_kyc:document' }]);
  t.deepEqual(out.actions, ['require_kyc:document']);
});

test('a mark set to false does not fire', (t) => {
  const out = fn(input({ user: { trusted: false, is_known_fraud: false } }));
  t.false(out.trust_override);
  t.false(out.hard_block_hit);
});

test('bands: first true band wins and gives its delta', (t) => {
  const at = (cents: number) => fn(input({ payment: { amount_cents: cents } })).breakdown.find((b) => b.rule_id === 'amount');
  t.like(at(200000), { matched: true, band: 'huge', score_delta: 40 });
  t.like(at(20000), { matched: true, band: 'big', score_delta: 20 });
  // The expression is true but no band is: not matched.
  t.like(at(2000), { matched: false, band: null, score_delta: 0 });
  t.like(at(10), { matched: false, band: null });
});

test('a band that errors is skipped; a type error in a band degrades only if nothing matched', (t) => {
  const r = rule({
    rule_id: 'r', expression: 'true', score_delta: 0,
    bands: [
      { band: 'first', expression: 'extras.x > 1.0', score_delta: 5 },
      { band: 'second', expression: 'extras.y == true', score_delta: 3 },
    ],
  });
  const f = compile([r]);
  t.like(f(input({ extras: { y: true } })).breakdown[0], { matched: true, band: 'second', score_delta: 3 });
  t.like(f(input({ extras: { x: 'a', y: true } })).breakdown[0], { matched: true, band: 'second' });
  t.deepEqual(f(input({ extras: { x: 'a', y: false } })).degraded, ['r']);
  t.deepEqual(f(input({ extras: { y: false } })).degraded, []);
});

test('scores add up, negative deltas included; the score is not floored', (t) => {
  const out = fn(input({ payment: { amount_cents: 200000 }, context: { session_anon: true } }, { account: { events: 500 } }));
  t.is(out.score, 40 + 15 - 30);
  const low = fn(input({}, { account: { events: 500 } }));
  t.is(low.score, -30);
});

test('monitoring rules flag, add no score, and their actions are kept, deduplicated', (t) => {
  const out = fn(input({ context: { country: 'NG', session_anon: true } }));
  t.deepEqual(out.flags, ['watch']);
  t.is(out.score, 15);
  t.deepEqual(out.actions, ['require_kyc:liveness']);
  t.like(out.breakdown.find((b) => b.rule_id === 'watch'), { matched: true, score_delta: 0, band: 'match', action: 'require_kyc:liveness' });
  t.false('action' in (out.breakdown.find((b) => b.rule_id === 'amount') ?? {}));
});

test('shadow rules are always evaluated, never in the breakdown, never scored', (t) => {
  const normal = fn(input({ payment: { amount_cents: 50 }, user: { vip: true } }));
  t.deepEqual(normal.shadow, [
    { rule_id: 'candidate', rule_version: 1, kind: 'scoring', matched: true, band: 'match', score_delta: 7, degraded: false },
    { rule_id: 'shadow_trust', rule_version: 1, kind: 'trust', matched: true, band: 'match', score_delta: 0, degraded: false },
  ]);
  t.is(normal.score, 0);
  t.false(normal.trust_override);
  t.false(normal.breakdown.some((b) => b.rule_id === 'candidate' || b.rule_id === 'shadow_trust'));
  const trusted = fn(input({ payment: { amount_cents: 50 }, user: { trusted: true } }));
  t.true(trusted.trust_override);
  t.is(trusted.shadow.length, 2);
  t.true(trusted.shadow[0]?.matched);
  const degraded = fn(input({ payment: { amount_cents: 'x' } }));
  t.like(degraded.shadow[0], { matched: false, degraded: true });
  t.deepEqual(degraded.degraded, ['amount']);
});

test('archived rules are not compiled, evaluated or listed', (t) => {
  const result = compileRuleset(all);
  t.true(result.ok);
  if (!result.ok) return;
  t.false(result.artifact.rules.some((r) => r.rule_id === 'old'));
  t.deepEqual(result.artifact.rules.map((r) => r.rule_id), ['trusted', 'fraudster', 'loyal', 'vpn', 'amount', 'watch', 'candidate', 'shadow_trust']);
  t.false(result.artifact.source.includes('this is not CEL'));
});

test('max_possible: largest positive delta of each active scoring rule', (t) => {
  const result = compileRuleset([
    amount, vpn, loyal, candidate,
    rule({ rule_id: 'all_negative', expression: 'true', score_delta: 0, bands: [{ band: 'a', expression: 'true', score_delta: -5 }] }),
  ]);
  t.true(result.ok && result.artifact.max_possible === 55);
});

test('degraded lists active rules with a present value of the wrong type only', (t) => {
  const out = fn(input({ payment: { amount_cents: '12' }, context: { session_anon: 'yes', country: 'US' } }));
  t.deepEqual(out.degraded, ['vpn', 'amount']);
  t.is(out.score, 0);
  t.deepEqual(fn(input({})).degraded, []);
});

test('signals: sorted dotted paths, a group read dynamically listed whole', (t) => {
  const result = compileRuleset([
    rule({ rule_id: 'a', expression: 'velocity.ip_1h > 3 && links.email > 0' }),
    rule({ rule_id: 'b', expression: "account.age_days < 1.0 || has(email.domain)" }),
    rule({ rule_id: 'c', expression: 'links[extras.which] > 2' }),
    rule({ rule_id: 'd', expression: "user.email == 'x' && context.ip == '1'" }),
  ]);
  t.true(result.ok);
  if (result.ok) t.deepEqual(result.artifact.signals, ['account.age_days', 'email.domain', 'links', 'velocity.ip_1h']);
});

test('an empty ruleset scores 0', (t) => {
  const out = compile([])(input({}));
  t.deepEqual(out, { trust_override: false, hard_block_hit: false, score: 0, max_possible: 0, breakdown: [], flags: [], actions: [], degraded: [], shadow: [], over_budget: false });
});

test('duplicate ids are rejected', (t) => {
  const result = compileRuleset([vpn, { ...vpn, expression: 'true' }]);
  t.false(result.ok);
  if (!result.ok) t.deepEqual(result.errors, [{ rule_id: 'vpn', field: 'rule_id', message: "duplicate rule id 'vpn'", position: null }]);
});

test('every broken rule is reported, with rule id, field and position', (t) => {
  const result = compileRuleset([
    rule({ rule_id: 'syntax', expression: 'payment.amount_cents >' }),
    rule({ rule_id: 'types', expression: "payment.amount_cents + 'x' > 1" }),
    rule({ rule_id: 'banded', expression: 'true', score_delta: 0, bands: [{ band: 'a', expression: 'true', score_delta: 1 }, { band: 'b', expression: "payment.amount_cents.startsWith('4')", score_delta: 1 }] }),
    rule({ rule_id: 'multiline', expression: 'user.vip == true &&\n  velocity.nope > 1' }),
    vpn,
  ]);
  t.false(result.ok);
  if (result.ok) return;
  const byId = Object.fromEntries(result.errors.map((e) => [e.rule_id, e]));
  t.is(result.errors.length, 4);
  t.like(byId.syntax, { field: 'expression', position: { line: 1, column: 23, offset: 22 } });
  t.regex(byId.syntax?.message ?? '', /^line 1, column 23: /);
  t.like(byId.types, { field: 'expression' });
  t.regex(byId.types?.message ?? '', /^line 1, column \d+: no such overload: int \+ string/);
  t.like(byId.banded, { field: 'bands[1].expression' });
  t.like(byId.multiline, { field: 'expression', position: { line: 2, column: 12 } });
  t.regex(byId.multiline?.message ?? '', /^line 2, column 12: No such key: nope/);
});

test('invalid records are diagnosed by field', (t) => {
  const result = compileRuleset([{ ...vpn, kind: 'bogus' as never, score_delta: 1.5 }]);
  t.false(result.ok);
  if (!result.ok) {
    t.deepEqual(result.errors.map((e) => e.field).sort(), ['kind', 'score_delta']);
    t.true(result.errors.every((e) => e.rule_id === 'vpn' && e.position === null));
  }
});

test('the emitted source is stable: same rules, same source', (t) => {
  const a = compileRuleset(all);
  const b = compileRuleset(all);
  t.true(a.ok && b.ok && a.artifact.source === b.artifact.source);
});

test('shared outcome entries are frozen; outcome arrays are fresh per call', (t) => {
  const one = fn(input({ context: { country: 'NG' } }));
  const two = fn(input({ context: { country: 'NG' } }));
  t.true(Object.isFrozen(one.breakdown[0]));
  t.not(one.breakdown, two.breakdown);
  t.not(one.flags, two.flags);
  one.flags.push('mutated');
  t.deepEqual(two.flags, ['watch']);
});

test('the ruleset function never throws, whatever the input', (t) => {
  const hostile = [
    undefined, null, 42, 'str', [], { event: null, signals: null }, { event: [], signals: 'x', now: 'soon' },
    { event: { user: [], payment: 7, context: 'x', extras: [1] }, signals: { velocity: [], links: 5 }, now: NaN },
    { event: Object.create(null), signals: Object.create(null), now: Infinity },
  ];
  for (const h of hostile) t.notThrows(() => fn(h as never));
});

test('loadRuleset rejects a source that is not a compiled ruleset', (t) => {
  t.throws(() => loadRuleset('return 42;'), { message: /not the source of a compiled ruleset/ });
  t.throws(() => loadRuleset(42 as never), { instanceOf: TypeError });
});
