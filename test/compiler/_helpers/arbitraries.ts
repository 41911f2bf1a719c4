// fast-check arbitraries: ruleset inputs shaped like the service's, and
// well-typed random CEL expressions over the declared environment.
//
// Inputs contain absent members and wrong-typed values, never JSON null:
// null is where we deliberately differ from cel-js (docs/rules.md).

import fc from 'fast-check';
import type { RuleDefinition, RulesetInput } from '../../../compiler/index.js';

export const kBaseNow = Date.parse('2026-11-20T12:30:00Z');

/** A value that is usually of the declared type and sometimes of another one. */
function typed<T>(good: fc.Arbitrary<T>, wrongRate = 0.06): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: Math.round((1 - wrongRate) * 100), arbitrary: good },
    { weight: Math.round(wrongRate * 100), arbitrary: fc.oneof(fc.constant('7'), fc.constant(2.5), fc.constant(true), fc.constant([1])) },
  );
}

/** An object whose members are each present or absent. */
function record(members: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(members, { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>;
}

const country = fc.constantFrom('US', 'DE', 'us', 'NG', 'FR');
const smallInt = fc.integer({ min: 0, max: 12 });
/** Trust and hard-block marks: usually false, so most events reach the scoring rules. */
const mark = fc.constantFrom(false, false, false, false, false, false, false, false, false, true);
const word = fc.constantFrom('a', 'ab', 'vip', 'gold', 'x1', 'Mozilla/5.0', 'curl/8.1', 'HeadlessChrome', '');
const registeredAt = fc.oneof(
  { weight: 9, arbitrary: fc.integer({ min: -2000, max: 48 }).map((h) => new Date(kBaseNow - h * 3_600_000 - 1234).toISOString()) },
  { weight: 1, arbitrary: fc.constantFrom('yesterday', '2026-02-30T00:00:00Z') },
);

const eventArb = record({
  event_type: typed(fc.constantFrom('payment', 'login', 'payout', 'registration', 'deposit', 'withdrawal')),
  brand_id: fc.constantFrom('acme', 'beta'),
  external_account_id: fc.constantFrom('acc1', 'acc2'),
  user: typed(record({
    email: typed(fc.constantFrom('a@example.com', 'Bob@Mail.ru', 'x@y')),
    country: typed(country),
    name: typed(word),
    registered_at: typed(registeredAt),
    trusted: typed(mark),
    vip: typed(mark),
    is_known_fraud: typed(mark),
    chargeback_flag: typed(mark),
    name_blocked: typed(mark),
    sanctions_match: typed(mark),
    tier: fc.constantFrom('gold', 'silver'),
    score: fc.double({ min: -5, max: 5, noNaN: true }),
  }), 0.02),
  payment: typed(record({
    amount_cents: typed(fc.oneof(fc.integer({ min: 0, max: 2_000_000 }), fc.constantFrom(50_000, 100_000, 500_000))),
    currency: typed(fc.constantFrom('USD', 'EUR')),
    billing_country: typed(country),
    card_token: fc.constantFrom('tok_1', 'tok_2'),
    three_ds: fc.boolean(),
  }), 0.02),
  context: typed(record({
    country: typed(country),
    user_agent: typed(word),
    session_anon: typed(fc.boolean()),
    ip: fc.constantFrom('10.0.0.1', '10.0.0.2'),
    device_score: fc.double({ min: 0, max: 1, noNaN: true }),
  }), 0.02),
  extras: record({
    n: fc.oneof(fc.integer({ min: -3, max: 12 }), fc.double({ min: -3, max: 12, noNaN: true })),
    s: word,
    flag: fc.boolean(),
    tags: fc.array(word, { maxLength: 4 }),
    items: fc.array(fc.oneof(fc.integer({ min: 0, max: 6 }), word), { maxLength: 4 }),
    m: record({ x: smallInt, y: word }),
  }),
});

const signalsArb = record({
  velocity: record({
    card_1h: typed(smallInt), card_24h: typed(smallInt), ip_1h: typed(smallInt), ip_24h: typed(fc.integer({ min: 0, max: 80 })),
    account_1h: typed(smallInt), account_24h: typed(smallInt), email_1h: typed(smallInt), email_24h: typed(smallInt),
    fp_1h: typed(smallInt), fp_24h: typed(smallInt), card_amount_24h: typed(fc.integer({ min: 0, max: 2_000_000 })),
    account_amount_24h: typed(fc.integer({ min: 0, max: 2_000_000 })),
  }),
  links: record({
    email: typed(smallInt), phone: typed(smallInt), fp: typed(smallInt), ip_24h: typed(smallInt), card: typed(smallInt),
    total: typed(smallInt), fraud: typed(fc.integer({ min: 0, max: 4 })),
  }),
  account: record({
    known: typed(fc.boolean()), age_days: typed(fc.double({ min: 0, max: 400, noNaN: true })), events: typed(fc.integer({ min: 0, max: 60 })),
    blocks: typed(fc.integer({ min: 0, max: 2 })), reviews: typed(fc.integer({ min: 0, max: 3 })), fraud_confirmed: typed(mark),
  }),
  phone: record({
    present: typed(fc.boolean()), valid: typed(fc.boolean()), parseable: typed(fc.boolean()), country: typed(country),
    type: typed(fc.constantFrom('mobile', 'voip', 'fixed_line', 'toll_free')),
  }),
  email: record({
    present: typed(fc.boolean()), valid: typed(fc.boolean()), disposable: typed(fc.boolean()), free_provider: typed(fc.boolean()),
    domain: typed(fc.constantFrom('example.com', 'mail.ru')),
  }),
});

export const inputArb: fc.Arbitrary<RulesetInput> = fc.record({
  event: eventArb,
  signals: signalsArb,
  now: fc.integer({ min: -36, max: 36 }).map((h) => kBaseNow + h * 3_600_000),
}) as fc.Arbitrary<RulesetInput>;

// ---------------------------------------------------------------------------
// Expressions

const kInts = ['payment.amount_cents', 'velocity.card_1h', 'velocity.ip_24h', 'links.fraud', 'links.total', 'account.events', 'account.blocks', 'velocity.card_amount_24h'];
const kDoubles = ['account.age_days', 'user.score', 'context.device_score'];
const kStrings = ['user.email', 'user.country', 'context.country', 'payment.billing_country', 'payment.currency', 'context.user_agent', 'event_type', 'phone.type', 'email.domain', 'user.name'];
const kBools = ['user.vip', 'user.trusted', 'context.session_anon', 'account.known', 'email.disposable', 'phone.valid', 'payment.three_ds'];
const kDyns = ['extras.n', 'extras.s', 'extras.flag', 'extras.tags', 'extras.items', 'user.tier', 'extras.m.x', 'extras.m.y'];
const kStringLiterals = ["'US'", "'de'", "'gold'", "'a'", "'Mozilla'", "'@example.com'", "''", "'payment'"];
const kPatterns = ["'^[a-z]+@example\\\\.com$'", "'(curl|python-requests)/'", "'Headless'", "'^[A-Z]{2}$'", "'\\\\d+'"];

const pick = (xs: readonly string[]): fc.Arbitrary<string> => fc.constantFrom(...xs);
const bin = (op: string) => ([a, b]: [string, string]): string => `(${a} ${op} ${b})`;

export interface ExprArbs {
  bool: fc.Arbitrary<string>;
  int: fc.Arbitrary<string>;
  dbl: fc.Arbitrary<string>;
  str: fc.Arbitrary<string>;
  ts: fc.Arbitrary<string>;
  dur: fc.Arbitrary<string>;
  dyn: fc.Arbitrary<string>;
}

/** Well-typed expressions, depth-bounded; `bool` is what a rule needs. */
export const expr: ExprArbs = fc.letrec<{ [K in keyof ExprArbs]: string }>((tie) => {
  const bool = tie('bool');
  const int = tie('int');
  const dbl = tie('dbl');
  const str = tie('str');
  const ts = tie('ts');
  const dur = tie('dur');
  const dyn = tie('dyn');
  const cmp = fc.constantFrom('<', '<=', '>', '>=', '==', '!=');
  const order = fc.constantFrom('<', '<=', '>', '>=');
  return {
    bool: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      pick(kBools).map((f) => `${f} == true`),
      pick(kBools),
      fc.constantFrom('true', 'false', 'has(user.email)', 'has(extras.n)', 'has(velocity.card_1h)', '!has(payment.amount_cents)'),
      fc.tuple(int, cmp, int).map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(int, order, dbl).map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(dbl, order, dbl).map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(str, cmp, str).map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(ts, order, ts).map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(dur, order, dur).map(([a, o, b]) => `(${a} ${o} ${b})`),
      fc.tuple(bool, bool).map(bin('&&')),
      fc.tuple(bool, bool).map(bin('||')),
      bool.map((b) => `!${b}`),
      fc.tuple(bool, bool, bool).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
      fc.tuple(str, fc.constantFrom('startsWith', 'endsWith', 'contains'), pick(kStringLiterals)).map(([s, f, l]) => `${s}.${f}(${l})`),
      fc.tuple(str, pick(kPatterns)).map(([s, p]) => `${s}.matches(${p})`),
      fc.tuple(str, fc.subarray(kStringLiterals, { minLength: 1 })).map(([s, l]) => `(${s} in [${l.join(', ')}])`),
      fc.tuple(int, fc.subarray(['0', '1', '3', '50000'], { minLength: 1 })).map(([i, l]) => `(${i} in [${l.join(', ')}])`),
      fc.tuple(dyn, fc.constantFrom("== 'gold'", '== 3.0', '> 1.0', '== true', "!= 'a'", '< 2')).map(([d, c]) => `(${d} ${c})`),
      fc.tuple(pick(kStringLiterals), dyn).map(([l, d]) => `(${l} in ${d})`),
      fc.tuple(dyn, fc.constantFrom('x == \'a\'', 'x > 1.0', 'x == 3', "x.startsWith('a')")).map(([d, p]) => `${d}.exists(x, ${p})`),
      fc.tuple(dyn, fc.constantFrom('x != \'\'', 'x < 5.0', "size(x) > 0")).map(([d, p]) => `${d}.all(x, ${p})`),
      fc.tuple(dyn, fc.constantFrom('x == \'a\'', 'x == 1.0')).map(([d, p]) => `${d}.exists_one(x, ${p})`),
      fc.tuple(dyn).map(([d]) => `${d}.filter(x, x != 'a').size() >= 1`),
      fc.tuple(str, int).map(([s, i]) => `(size(${s}) > ${i})`),
    ),
    int: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      pick(kInts),
      fc.integer({ min: 0, max: 200 }).map(String),
      fc.constantFrom('50000', '100000'),
      fc.tuple(int, int).map(bin('+')),
      fc.tuple(int, int).map(bin('-')),
      fc.tuple(int, fc.integer({ min: 0, max: 100 })).map(([a, b]) => `(${a} * ${b})`),
      fc.tuple(int, int).map(bin('/')),
      fc.tuple(int, fc.integer({ min: 1, max: 9 })).map(([a, b]) => `(${a} % ${b})`),
      str.map((s) => `size(${s})`),
      int.map((i) => `(-${i})`),
      fc.tuple(bool, int, int).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
      dbl.map((d) => `int(${d})`),
    ),
    dbl: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      pick(kDoubles),
      fc.constantFrom('0.5', '1.0', '7.0', '100.5', '-2.25'),
      fc.tuple(dbl, dbl).map(bin('+')),
      fc.tuple(dbl, dbl).map(bin('*')),
      fc.tuple(dbl, dbl).map(bin('/')),
      int.map((i) => `double(${i})`),
    ),
    str: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      pick(kStrings),
      pick(kStringLiterals),
      fc.tuple(str, str).map(bin('+')),
      str.map((s) => `${s}.lowerAscii()`),
      str.map((s) => `${s}.upperAscii()`),
      fc.tuple(bool, str, str).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    ),
    ts: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom('now', 'user.registered_at', "timestamp('2026-11-19T00:00:00Z')"),
      fc.tuple(ts, dur).map(bin('+')),
      fc.tuple(ts, dur).map(bin('-')),
    ),
    dur: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom("duration('24h')", "duration('90m')", "duration('1.5h')", "duration('720h')"),
      fc.tuple(ts, ts).map(bin('-')),
      fc.tuple(dur, dur).map(bin('+')),
    ),
    dyn: fc.oneof({ depthSize: 'small' }, pick(kDyns)),
  };
});

/** A random rule built from random expressions. */
export const ruleArb = (id: string): fc.Arbitrary<RuleDefinition> =>
  fc
    .record({
      kind: fc.constantFrom('trust', 'hard_block', 'scoring', 'scoring', 'scoring', 'monitoring'),
      status: fc.constantFrom('active', 'active', 'active', 'shadow', 'archived'),
      expression: expr.bool,
      bands: fc.option(fc.array(fc.tuple(expr.bool, fc.integer({ min: -20, max: 40 })), { minLength: 1, maxLength: 3 }), { freq: 2 }),
      delta: fc.integer({ min: -20, max: 40 }),
      action: fc.option(fc.constantFrom('require_kyc:phone', 'require_kyc:document'), { freq: 3 }),
    })
    .map(({ kind, status, expression, bands, delta, action }) => ({
      rule_id: id,
      kind: kind as RuleDefinition['kind'],
      status: status as RuleDefinition['status'],
      expression,
      score_delta: kind === 'scoring' && bands === null ? delta : 0,
      bands: bands === null ? null : bands.map(([e, d], i) => ({ band: `b${i}`, expression: e, score_delta: kind === 'scoring' ? d : 0 })),
      action,
      description: '',
      version: 1,
    }));
