// validateRuleDefinition: field-level problems, defaults, expression feedback.

import test from 'ava';
import type { ExecutionContext } from 'ava';
import { validateRuleDefinition } from '../../compiler/index.js';

const base = {
  rule_id: 'high_amount', kind: 'scoring', status: 'active', expression: 'payment.amount_cents > 100',
  score_delta: 10, bands: null, action: null, description: 'Big payment.', version: 3,
};

test('a valid record comes back normalised', (t) => {
  const r = validateRuleDefinition(base);
  t.deepEqual(r, { ok: true, rule: base, lists: [] });
});

test('missing optional fields get defaults', (t) => {
  const r = validateRuleDefinition({ rule_id: 'x', kind: 'monitoring', status: 'shadow', expression: 'true' });
  t.deepEqual(r, { ok: true, rule: { rule_id: 'x', kind: 'monitoring', status: 'shadow', expression: 'true', score_delta: 0, bands: null, action: null, description: '', version: 1 }, lists: [] });
});

const problem = test.macro({
  exec(t: ExecutionContext, patch: Record<string, unknown>, field: string, message: RegExp) {
    const r = validateRuleDefinition({ ...base, ...patch });
    t.false(r.ok);
    if (r.ok) return;
    const p = r.problems.find((x) => x.field === field);
    t.truthy(p, `expected a problem on ${field}, got ${JSON.stringify(r.problems)}`);
    t.regex(p?.message ?? '', message);
  },
  title: (_p, patch: Record<string, unknown>, field: string) => `${field}: ${JSON.stringify(patch)}`,
});

test(problem, { rule_id: 'High' }, 'rule_id', /\[a-z\]/);
test(problem, { rule_id: 'a'.repeat(65) }, 'rule_id', /\[a-z\]/);
test(problem, { rule_id: 7 }, 'rule_id', /\[a-z\]/);
test(problem, { kind: 'block' }, 'kind', /one of trust, hard_block, scoring, monitoring/);
test(problem, { status: 'enabled' }, 'status', /one of active, shadow, archived/);
test(problem, { expression: 12 }, 'expression', /must be a string/);
test(problem, { expression: '' }, 'expression', /must not be empty/);
test(problem, { expression: 'payment.amount_cents >' }, 'expression', /^line 1, column 23: /);
test(problem, { expression: 'payment.amount_cents' }, 'expression', /must be bool/);
test(problem, { expression: '!has(user.email.domain)' }, 'expression', /has\(\): user\.email is of type string and has no fields/);
test(problem, { expression: 'has(velocity.card_1h.x)' }, 'expression', /has\(\): velocity\.card_1h is of type int and has no fields/);
test(problem, { expression: 'has(event_type.x)' }, 'expression', /has\(\): event_type is of type string and has no fields/);
test(problem, { expression: '!has(now.x)' }, 'expression', /has\(\): now is of type timestamp and has no fields/);
test(problem, { expression: '!has(external_account_id.x)' }, 'expression', /has\(\): external_account_id is of type string and has no fields/);
test(problem, { score_delta: 2.5 }, 'score_delta', /integer/);
test(problem, { score_delta: '10' }, 'score_delta', /integer/);
test(problem, { score_delta: 2_000_000 }, 'score_delta', /between/);
test(problem, { kind: 'monitoring' }, 'score_delta', /must be 0 for a rule that is not a scoring rule/);
test(problem, { bands: [] }, 'bands', /1 to 16/);
test(problem, { bands: 'x' }, 'bands', /array or null/);
test(problem, { score_delta: 0, bands: [{ band: 'Big', expression: 'true', score_delta: 1 }] }, 'bands[0].band', /\[a-z\]/);
test(problem, { score_delta: 0, bands: [{ band: 'a', expression: 'true', score_delta: 1 }, { band: 'a', expression: 'true', score_delta: 1 }] }, 'bands[1].band', /duplicate band/);
test(problem, { score_delta: 0, bands: [{ band: 'a', expression: 'true', score_delta: 1.5 }] }, 'bands[0].score_delta', /integer/);
test(problem, { score_delta: 0, bands: [{ band: 'a', expression: 'nope > 1', score_delta: 1 }] }, 'bands[0].expression', /Unknown variable: nope/);
test(problem, { score_delta: 0, bands: [{ band: 'a', expression: 'true', score_delta: 1, extra: 1 }] }, 'bands[0].extra', /unknown property/);
test(problem, { score_delta: 0, bands: ['x'] }, 'bands[0]', /must be an object/);
test(problem, { bands: [{ band: 'a', expression: 'true', score_delta: 1 }] }, 'score_delta', /must be 0 when the rule has bands/);
test(problem, { kind: 'monitoring', score_delta: 0, bands: [{ band: 'a', expression: 'true', score_delta: 5 }] }, 'bands[0].score_delta', /not a scoring rule/);
test(problem, { action: 'require_kyc:selfie' }, 'action', /require_kyc:<phone\|document\|liveness\|sanctions\|pep>/);
test(problem, { action: 'block' }, 'action', /require_kyc/);
test(problem, { description: 5 }, 'description', /string/);
test(problem, { description: 'x'.repeat(2001) }, 'description', /at most 2000/);
test(problem, { version: 0 }, 'version', />= 1/);
test(problem, { version: 1.5 }, 'version', />= 1/);
test(problem, { priority: 1 }, 'priority', /unknown property/);

test('every problem is reported at once, expressions included', (t) => {
  const r = validateRuleDefinition({ ...base, kind: 'x', expression: 'user.emial == "a"', action: 'x' });
  t.false(r.ok);
  if (!r.ok) t.deepEqual(r.problems.map((p) => p.field).sort(), ['action', 'expression', 'kind']);
});

test('a record that is not an object', (t) => {
  for (const v of [null, 'rule', 3, []]) t.deepEqual(validateRuleDefinition(v), { ok: false, problems: [{ field: '', message: 'a rule must be a JSON object' }] });
});

test('every valid action kind', (t) => {
  for (const kind of ['phone', 'document', 'liveness', 'sanctions', 'pep']) {
    t.true(validateRuleDefinition({ ...base, action: `require_kyc:${kind}` }).ok);
  }
});
