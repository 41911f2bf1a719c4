// The shipped presets: the rules every preset must have, and that they work.

import test from 'ava';
import { compileRuleset, getPreset, listPresets } from '../../compiler/index.js';
import type { Preset } from '../../compiler/index.js';
import { compile, input } from './_helpers/rules.js';

const presets = listPresets();

test('listPresets ships default first, and getPreset finds each by name', (t) => {
  t.is(presets[0]?.name, 'default');
  t.true(presets.length >= 2);
  for (const p of presets) t.deepEqual(getPreset(p.name), p);
  t.is(getPreset('nope'), null);
});

test('callers get copies they may change', (t) => {
  const a = getPreset('default') as Preset;
  a.rules.pop();
  a.policy.block_threshold = 1;
  t.is(getPreset('default')?.rules.length, a.rules.length + 1);
  t.is(getPreset('default')?.policy.block_threshold, 80);
});

for (const preset of presets) {
  const byExpression = (kind: string, text: string) =>
    preset.rules.find((r) => r.kind === kind && r.status === 'active' && r.expression.includes(text));

  test(`${preset.name}: policy, descriptions, versions`, (t) => {
    t.deepEqual(preset.policy, { review_threshold: 40, block_threshold: 80 });
    t.true(preset.description.length > 20);
    for (const r of preset.rules) {
      t.true(r.description.length >= 30, `${r.rule_id} needs a description an analyst can read`);
      t.is(r.version, 1);
    }
  });

  test(`${preset.name}: compiles`, (t) => {
    const result = compileRuleset(preset.rules);
    t.true(result.ok, JSON.stringify(!result.ok && result.errors));
  });

  test(`${preset.name}: trust rules on user.trusted and user.vip, hard blocks on the four marks`, (t) => {
    for (const mark of ['user.trusted', 'user.vip']) t.truthy(byExpression('trust', mark), mark);
    for (const mark of ['user.is_known_fraud', 'user.chargeback_flag', 'user.name_blocked', 'user.sanctions_match']) {
      t.truthy(byExpression('hard_block', mark), mark);
    }
  });

  test(`${preset.name}: each mark acts when true and does nothing when false or absent`, (t) => {
    const fn = compile(preset.rules);
    for (const mark of ['trusted', 'vip']) {
      t.true(fn(input({ user: { [mark]: true } })).trust_override, mark);
      t.false(fn(input({ user: { [mark]: false } })).trust_override, `${mark}: false`);
    }
    for (const mark of ['is_known_fraud', 'chargeback_flag', 'name_blocked', 'sanctions_match']) {
      const hit = fn(input({ user: { [mark]: true } }));
      t.true(hit.hard_block_hit, mark);
      t.is(hit.score, hit.max_possible);
      t.false(fn(input({ user: { [mark]: false } })).hard_block_hit, `${mark}: false`);
    }
    const nothing = fn(input({ user: {} }));
    t.false(nothing.trust_override || nothing.hard_block_hit);
  });

  test(`${preset.name}: scoring covers amount (banded), country mismatch, velocity, links, new account, phone, email; monitoring exists`, (t) => {
    const scoring = preset.rules.filter((r) => r.kind === 'scoring' && r.status === 'active');
    const reads = (text: string) => scoring.some((r) => r.expression.includes(text) || (r.bands ?? []).some((b) => b.expression.includes(text)));
    t.true(scoring.some((r) => r.bands !== null && r.expression.includes('payment.amount_cents')), 'a banded amount rule');
    t.true(reads('payment.billing_country') && reads('context.country') && reads('user.country'), 'country mismatch');
    for (const v of ['velocity.card_', 'velocity.ip_', 'velocity.account_', 'velocity.email_']) t.true(reads(v), v);
    t.true(reads('links.email') || reads('links.phone'), 'links to other accounts');
    t.true(reads('links.fraud'), 'links to fraud');
    t.true(reads('account.age_days'), 'new account');
    t.true(reads('phone.parseable') && reads('phone.valid'), 'phone');
    t.true(reads('email.disposable'), 'disposable email');
    t.true(preset.rules.some((r) => r.kind === 'monitoring' && r.status === 'active'), 'a monitoring rule');
  });
}

test('default: a risky payment lands in review or block, a clean one in allow', (t) => {
  const preset = getPreset('default') as Preset;
  const fn = compile(preset.rules);
  const clean = fn(input(
    { event_type: 'payment', user: { country: 'US' }, payment: { amount_cents: 2500, billing_country: 'US' }, context: { country: 'US' } },
    { velocity: { card_1h: 0, card_24h: 1 }, links: { fraud: 0, fp: 0, email: 0, phone: 0, card: 0 }, account: { known: true, age_days: 400, events: 80, blocks: 0, reviews: 0 }, email: { present: true, valid: true, disposable: false }, phone: { present: true, parseable: true, valid: true, type: 'mobile', country: 'US' } },
  ));
  t.true(clean.score < preset.policy.review_threshold, `clean score ${clean.score}`);
  const risky = fn(input(
    { event_type: 'payment', user: { country: 'DE' }, payment: { amount_cents: 600000, billing_country: 'NG' }, context: { country: 'US', session_anon: true } },
    { velocity: { card_1h: 6 }, links: { fraud: 2 }, account: { known: true, age_days: 0.2 }, email: { disposable: true } },
  ));
  t.true(risky.score >= preset.policy.block_threshold, `risky score ${risky.score}`);
  t.deepEqual(risky.actions, ['require_kyc:document']);
});
