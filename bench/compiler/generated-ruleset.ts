// A seeded ruleset of 200 rules, each written once as a small condition tree
// and rendered both as CEL (for our compiler and cel-js) and as
// json-rules-engine conditions, so all engines run the same logic.

import type { RuleDefinition } from '../../compiler/index.js';
import { prng } from './events.js';
import { all, always, any, leaf } from './json-rules.js';
import type { Cond, JreRule } from './json-rules.js';

interface Leaf {
  readonly cel: string;
  readonly jre: Cond;
}

type NumOp = '>=' | '>' | '<' | '<=';
const kNumOps: Readonly<Record<NumOp, string>> = { '>=': 'numGte', '>': 'numGt', '<': 'numLt', '<=': 'numLte' };

// [group, field, int?, threshold range] — ranges follow the bench events.
const kNumeric: readonly (readonly [string, string, boolean, number])[] = [
  ['velocity', 'card_1h', true, 7], ['velocity', 'card_24h', true, 14], ['velocity', 'ip_1h', true, 15],
  ['velocity', 'ip_24h', true, 70], ['velocity', 'account_1h', true, 7], ['velocity', 'account_24h', true, 25],
  ['velocity', 'email_1h', true, 7], ['velocity', 'email_24h', true, 25], ['velocity', 'fp_1h', true, 7],
  ['velocity', 'fp_24h', true, 25], ['velocity', 'card_amount_24h', true, 1_500_000],
  ['links', 'email', true, 2], ['links', 'fp', true, 5], ['links', 'card', true, 3], ['links', 'total', true, 8],
  ['links', 'fraud', true, 3], ['account', 'events', true, 60], ['account', 'reviews', true, 3],
  ['account', 'age_days', false, 400], ['payment', 'amount_cents', true, 750_000],
];
const kStrings: readonly (readonly [string, string | null, readonly string[]])[] = [
  ['context', 'country', ['US', 'DE', 'FR', 'GB', 'NG']],
  ['user', 'country', ['US', 'us', 'DE', 'FR', 'GB']],
  ['payment', 'billing_country', ['US', 'DE', 'fr', 'GB']],
  ['phone', 'type', ['mobile', 'fixed_line', 'voip']],
  ['event_type', null, ['payment', 'login', 'payout', 'deposit', 'registration', 'withdrawal']],
];
const kBools: readonly (readonly [string, string, boolean])[] = [
  ['context', 'session_anon', true], ['email', 'disposable', true], ['phone', 'valid', false],
  ['account', 'known', true], ['email', 'free_provider', true], ['phone', 'parseable', false],
];

function literal(v: number, int: boolean): string {
  return int ? String(v) : Number.isInteger(v) ? `${v}.0` : String(v);
}

export function generatedRuleset(count = 200, seed = 7): JreRule[] {
  const rnd = prng(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;

  const numeric = (): Leaf => {
    const [group, field, isInt, max] = pick(kNumeric);
    const op = pick(['>=', '>', '<', '<='] as const);
    // Thresholds in the upper part of the range for >, lower for <: each leaf is true now and then.
    const frac = op === '<' || op === '<=' ? 0.05 + rnd() * 0.3 : 0.55 + rnd() * 0.4;
    const value = isInt ? Math.round(max * frac) : Math.round(max * frac * 10) / 10;
    return { cel: `${group}.${field} ${op} ${literal(value, isInt)}`, jre: leaf(group, field, kNumOps[op], value) };
  };
  const text = (): Leaf => {
    const [group, field, values] = pick(kStrings);
    const path = field === null ? group : `${group}.${field}`;
    if (rnd() < 0.5) {
      const v = pick(values);
      return { cel: `${path} == '${v}'`, jre: leaf(group, field, 'strEq', v) };
    }
    const vs = [...new Set([pick(values), pick(values)])];
    return { cel: `${path} in [${vs.map((v) => `'${v}'`).join(', ')}]`, jre: leaf(group, field, 'strIn', vs) };
  };
  const flag = (): Leaf => {
    const [group, field, value] = pick(kBools);
    return { cel: `${group}.${field} == ${value}`, jre: leaf(group, field, value ? 'isTrue' : 'isFalse', value) };
  };
  const anyLeaf = (): Leaf => {
    const r = rnd();
    return r < 0.55 ? numeric() : r < 0.8 ? text() : flag();
  };
  const condition = (): Leaf => {
    const n = 1 + int(3);
    const leaves = Array.from({ length: n }, anyLeaf);
    if (n === 1) return leaves[0] as Leaf;
    const and = rnd() < 0.6;
    return {
      cel: leaves.map((l) => `(${l.cel})`).join(and ? ' && ' : ' || '),
      jre: and ? all(...leaves.map((l) => l.jre)) : any(...leaves.map((l) => l.jre)),
    };
  };

  const rules: JreRule[] = [];
  for (let i = 0; i < count; i++) {
    const id = `g${String(i).padStart(3, '0')}`;
    let kind: RuleDefinition['kind'] = 'scoring';
    let status: RuleDefinition['status'] = 'active';
    let when: Leaf;
    if (i < 3) {
      kind = 'trust';
      const n = numeric();
      when = { cel: `user.trusted == true && (${n.cel})`, jre: all(leaf('user', 'trusted', 'isTrue', true), n.jre) };
    } else if (i < 8) {
      kind = 'hard_block';
      const n = numeric();
      when = { cel: `account.fraud_confirmed == true && (${n.cel})`, jre: all(leaf('account', 'fraud_confirmed', 'isTrue', true), n.jre) };
    } else {
      if (i >= count - 30) kind = 'monitoring';
      if (i % 20 === 10) status = 'shadow';
      when = condition();
    }
    let bands: { band: string; cel: string; jre: Cond; delta: number }[] | null = null;
    if (kind === 'scoring' && rnd() < 0.3) {
      const nb = 2 + int(2);
      bands = Array.from({ length: nb }, (_, b) => {
        const last = b === nb - 1 && rnd() < 0.5;
        const l = last ? { cel: 'true', jre: always } : numeric();
        return { band: `b${b}`, cel: l.cel, jre: l.jre, delta: 5 + int(30) };
      });
    }
    const delta = kind === 'scoring' && bands === null ? (rnd() < 0.1 ? -(1 + int(10)) : 1 + int(25)) : 0;
    const def: RuleDefinition = {
      rule_id: id, kind, status, expression: when.cel,
      score_delta: delta,
      bands: bands === null ? null : bands.map((b) => ({ band: b.band, expression: b.cel, score_delta: b.delta })),
      action: kind !== 'trust' && rnd() < 0.05 ? pick(['require_kyc:phone', 'require_kyc:document', 'require_kyc:liveness']) : null,
      description: `Generated benchmark rule ${i}.`,
      version: 1,
    };
    rules.push({ def, when: when.jre, bands: bands === null ? null : bands.map((b) => b.jre) });
  }
  return rules;
}
