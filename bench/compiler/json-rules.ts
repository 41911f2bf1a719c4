// json-rules-engine with rules equivalent to ours, and the same outcome
// assembly. Equivalence details:
//   - custom operators return false for absent or wrong-typed values, as a CEL
//     comparison on absent data never makes a rule match;
//   - a band becomes one engine rule: expression, this band, and `not` every
//     earlier band (first true band wins);
//   - a few values CEL computes in the expression are derived facts here
//     (sums, the registration age, the lower-cased user agent);
//   - the engine runs as documented (JSONPath paths), and, as a second
//     configuration, with a plain property read as its pathResolver: the
//     fastest way to run it, reported beside the default one.

import { Engine } from 'json-rules-engine';
import type { NestedCondition, TopLevelCondition } from 'json-rules-engine';
import type { BreakdownEntry, RuleDefinition, RulesetInput, RulesetOutcome, ShadowOutcome } from '../../compiler/index.js';
import { getPreset } from '../../compiler/index.js';

export type Cond = NestedCondition;

/** A rule with its engine conditions: `when` is the expression, `bands` one per band. */
export interface JreRule {
  readonly def: RuleDefinition;
  readonly when: Cond;
  readonly bands: readonly Cond[] | null;
}

const isNum = (v: unknown): v is number => typeof v === 'number';
const isStr = (v: unknown): v is string => typeof v === 'string';
const kRegexes = new Map<string, RegExp>();

function addOperators(engine: Engine): void {
  engine.addOperator('numGte', (a: unknown, b: unknown) => isNum(a) && isNum(b) && a >= b);
  engine.addOperator('numGt', (a: unknown, b: unknown) => isNum(a) && isNum(b) && a > b);
  engine.addOperator('numLt', (a: unknown, b: unknown) => isNum(a) && isNum(b) && a < b);
  engine.addOperator('numLte', (a: unknown, b: unknown) => isNum(a) && isNum(b) && a <= b);
  engine.addOperator('numEq', (a: unknown, b: unknown) => isNum(a) && isNum(b) && a === b);
  engine.addOperator('strEq', (a: unknown, b: unknown) => isStr(a) && isStr(b) && a === b);
  engine.addOperator('strNe', (a: unknown, b: unknown) => isStr(a) && isStr(b) && a !== b);
  engine.addOperator('strNeCi', (a: unknown, b: unknown) => isStr(a) && isStr(b) && a.toUpperCase() !== b.toUpperCase());
  engine.addOperator('strIn', (a: unknown, b: unknown) => isStr(a) && Array.isArray(b) && b.includes(a));
  engine.addOperator('isTrue', (a: unknown) => a === true);
  engine.addOperator('isFalse', (a: unknown) => a === false);
  engine.addOperator('matchesRe', (a: unknown, b: unknown) => {
    if (!isStr(a) || !isStr(b) || a.length > 512) return false;
    let re = kRegexes.get(b);
    if (re === undefined) kRegexes.set(b, (re = new RegExp(b)));
    return re.test(a);
  });
}

export const always: Cond = { fact: 'always', operator: 'isTrue', value: true };
export const leaf = (fact: string, path: string | null, operator: string, value: unknown): Cond =>
  (path === null ? { fact, operator, value } : { fact, path: `$.${path}`, operator, value }) as Cond;
export const all = (...c: Cond[]): Cond => ({ all: c });
export const any = (...c: Cond[]): Cond => ({ any: c });

/** The facts of one input: event members, signal groups, derived values. */
export function facts(input: RulesetInput): Record<string, unknown> {
  const ev = input.event;
  const sg = input.signals as Record<string, Record<string, unknown> | undefined>;
  const user = ev.user as Record<string, unknown> | undefined;
  const payment = ev.payment as Record<string, unknown> | undefined;
  const context = ev.context as Record<string, unknown> | undefined;
  const cardAmount = sg.velocity?.card_amount_24h;
  const amount = payment?.amount_cents;
  const registered = typeof user?.registered_at === 'string' ? Date.parse(user.registered_at) : NaN;
  return {
    always: true,
    event_type: ev.event_type,
    user, payment, context, extras: ev.extras,
    velocity: sg.velocity, links: sg.links, account: sg.account, phone: sg.phone, email: sg.email,
    card_amount_total: isNum(cardAmount) && isNum(amount) ? cardAmount + amount : undefined,
    registered_age_ms: registered === registered ? input.now - registered : undefined,
    ua_lower: typeof context?.user_agent === 'string' ? context.user_agent.toLowerCase() : undefined,
  };
}

/** A ruleset on json-rules-engine, producing our RulesetOutcome. */
export class JreRuleset {
  readonly #engine: Engine;
  readonly #shadow: readonly JreRule[];
  readonly #active: readonly JreRule[];
  readonly #maxPossible: number;

  constructor(rules: readonly JreRule[], options: { plainPaths?: boolean } = {}) {
    this.#engine = new Engine([], {
      allowUndefinedFacts: true,
      ...(options.plainPaths === true ? { pathResolver: (o: unknown, path: string) => (o as Record<string, unknown> | undefined)?.[path.slice(2)] } : {}),
    });
    addOperators(this.#engine);
    const live = rules.filter((r) => r.def.status !== 'archived');
    for (const r of live) {
      const bands = r.bands ?? [always];
      bands.forEach((band, i) => {
        const conditions: TopLevelCondition = { all: [r.when, band, ...bands.slice(0, i).map((b) => ({ not: b }) as Cond)] };
        this.#engine.addRule({ name: `${r.def.rule_id}#${i}`, conditions, event: { type: r.def.rule_id, params: { band: i } } });
      });
    }
    this.#shadow = live.filter((r) => r.def.status === 'shadow');
    this.#active = (['trust', 'hard_block', 'scoring', 'monitoring'] as const).flatMap((k) => live.filter((r) => r.def.status === 'active' && r.def.kind === k));
    this.#maxPossible = this.#active
      .filter((r) => r.def.kind === 'scoring')
      .reduce((sum, r) => sum + Math.max(0, ...(r.def.bands?.map((b) => b.score_delta) ?? [r.def.score_delta])), 0);
  }

  async evaluate(input: RulesetInput): Promise<RulesetOutcome> {
    const { events } = await this.#engine.run(facts(input));
    const matched = new Map<string, number>();
    for (const e of events) matched.set(e.type, (e.params as { band: number }).band);
    const bandOf = (r: JreRule, i: number): { label: string; delta: number } => {
      const b = r.def.bands?.[i];
      const delta = r.def.kind === 'scoring' ? (b === undefined ? r.def.score_delta : b.score_delta) : 0;
      return { label: b?.band ?? 'match', delta };
    };
    const shadow: ShadowOutcome[] = this.#shadow.map((r) => {
      const i = matched.get(r.def.rule_id);
      const band = i === undefined ? undefined : bandOf(r, i);
      return { rule_id: r.def.rule_id, rule_version: r.def.version, kind: r.def.kind, matched: band !== undefined, band: band?.label ?? null, score_delta: band?.delta ?? 0, degraded: false };
    });
    const entry = (r: JreRule, i: number | undefined): BreakdownEntry => {
      const band = i === undefined ? undefined : bandOf(r, i);
      const e: BreakdownEntry = { rule_id: r.def.rule_id, rule_version: r.def.version, score_delta: band?.delta ?? 0, band: band?.label ?? null, matched: band !== undefined, reason: r.def.rule_id };
      if (band !== undefined && r.def.action !== null) e.action = r.def.action;
      return e;
    };
    const breakdown: BreakdownEntry[] = [];
    const flags: string[] = [];
    const actions: string[] = [];
    let score = 0;
    for (const r of this.#active) {
      const i = matched.get(r.def.rule_id);
      if (i !== undefined && (r.def.kind === 'trust' || r.def.kind === 'hard_block')) {
        const trust = r.def.kind === 'trust';
        return { trust_override: trust, hard_block_hit: !trust, score: trust ? 0 : this.#maxPossible, max_possible: this.#maxPossible, breakdown: [entry(r, i)], flags: [], actions: r.def.action === null ? [] : [r.def.action], degraded: [], shadow, over_budget: false };
      }
      breakdown.push(entry(r, i));
      if (i === undefined) continue;
      score += bandOf(r, i).delta;
      if (r.def.kind === 'monitoring') flags.push(r.def.rule_id);
      if (r.def.action !== null && !actions.includes(r.def.action)) actions.push(r.def.action);
    }
    return { trust_override: false, hard_block_hit: false, score, max_possible: this.#maxPossible, breakdown, flags, actions, degraded: [], shadow, over_budget: false };
  }
}

const n = (group: string, field: string, op: string, value: unknown): Cond => leaf(group, field, op, value);

/** The default preset's rules as engine conditions, by rule id. */
const kDefaultConditions: Readonly<Record<string, { when: Cond; bands?: Cond[] }>> = {
  trusted_user: { when: n('user', 'trusted', 'isTrue', true) },
  vip_user: { when: n('user', 'vip', 'isTrue', true) },
  known_fraudster: { when: n('user', 'is_known_fraud', 'isTrue', true) },
  chargeback_history: { when: n('user', 'chargeback_flag', 'isTrue', true) },
  blocked_name: { when: n('user', 'name_blocked', 'isTrue', true) },
  sanctions_hit: { when: n('user', 'sanctions_match', 'isTrue', true) },
  confirmed_fraud_account: { when: n('account', 'fraud_confirmed', 'isTrue', true) },
  high_amount: {
    when: n('payment', 'amount_cents', 'numGte', 50000),
    bands: [n('payment', 'amount_cents', 'numGte', 500000), n('payment', 'amount_cents', 'numGte', 200000), always],
  },
  billing_ip_country_mismatch: { when: n('payment', 'billing_country', 'strNeCi', { fact: 'context', path: '$.country' }) },
  user_ip_country_mismatch: { when: n('user', 'country', 'strNeCi', { fact: 'context', path: '$.country' }) },
  card_velocity: {
    when: any(n('velocity', 'card_1h', 'numGte', 3), n('velocity', 'card_24h', 'numGte', 10)),
    bands: [n('velocity', 'card_1h', 'numGte', 5), n('velocity', 'card_1h', 'numGte', 3), always],
  },
  card_amount_velocity: { when: leaf('card_amount_total', null, 'numGt', 1000000) },
  ip_velocity: { when: any(n('velocity', 'ip_1h', 'numGte', 10), n('velocity', 'ip_24h', 'numGte', 50)) },
  account_velocity: { when: any(n('velocity', 'account_1h', 'numGte', 5), n('velocity', 'account_24h', 'numGte', 20)) },
  email_velocity: { when: any(n('velocity', 'email_1h', 'numGte', 5), n('velocity', 'email_24h', 'numGte', 20)) },
  device_velocity: { when: any(n('velocity', 'fp_1h', 'numGte', 5), n('velocity', 'fp_24h', 'numGte', 20)) },
  shared_device: { when: n('links', 'fp', 'numGte', 3) },
  shared_identity: { when: any(n('links', 'email', 'numGte', 1), n('links', 'phone', 'numGte', 1), n('links', 'card', 'numGte', 2)) },
  linked_to_fraud: { when: n('links', 'fraud', 'numGte', 1), bands: [n('links', 'fraud', 'numGte', 3), always] },
  new_account: {
    when: all(n('account', 'known', 'isTrue', true), n('account', 'age_days', 'numLt', 7)),
    bands: [n('account', 'age_days', 'numLt', 1), always],
  },
  recently_registered: { when: leaf('registered_age_ms', null, 'numLt', 72 * 3600 * 1000) },
  phone_unparseable: { when: all(n('phone', 'present', 'isTrue', true), n('phone', 'parseable', 'isFalse', false)) },
  phone_invalid: { when: all(n('phone', 'parseable', 'isTrue', true), n('phone', 'valid', 'isFalse', false)) },
  phone_virtual: { when: n('phone', 'type', 'strIn', ['voip', 'premium_rate', 'toll_free', 'shared_cost', 'uan']) },
  phone_country_mismatch: { when: n('phone', 'country', 'strNe', { fact: 'context', path: '$.country' }) },
  disposable_email: { when: n('email', 'disposable', 'isTrue', true) },
  previously_blocked: { when: n('account', 'blocks', 'numGte', 1) },
  anonymous_session: { when: n('context', 'session_anon', 'isTrue', true) },
  established_account: {
    when: all(n('account', 'age_days', 'numGte', 180), n('account', 'events', 'numGte', 20), n('account', 'blocks', 'numEq', 0), n('account', 'reviews', 'numEq', 0)),
  },
  large_withdrawal: { when: all(leaf('event_type', null, 'strIn', ['payout', 'withdrawal']), n('payment', 'amount_cents', 'numGte', 100000)) },
  many_linked_accounts: { when: n('links', 'total', 'numGte', 5) },
  automation_user_agent: { when: leaf('ua_lower', null, 'matchesRe', '(headless|phantomjs|selenium|python-requests|curl/|wget/)') },
  repeat_reviews: { when: n('account', 'reviews', 'numGte', 2) },
  high_amount_new_device: {
    when: all(n('payment', 'amount_cents', 'numGte', 100000), n('velocity', 'fp_24h', 'numEq', 0), n('account', 'events', 'numGte', 5)),
  },
};

/** The default preset on json-rules-engine. */
export function defaultPresetRules(): JreRule[] {
  return (getPreset('default')?.rules ?? []).map((def) => {
    const c = kDefaultConditions[def.rule_id];
    if (c === undefined) throw new Error(`no engine conditions for preset rule ${def.rule_id}`);
    return { def, when: c.when, bands: c.bands ?? null };
  });
}
