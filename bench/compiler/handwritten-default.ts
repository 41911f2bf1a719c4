// The default preset written by hand in plain JavaScript: the physical limit
// the compiled ruleset is measured against. Same rules, same outcome object,
// and the same precomputed frozen breakdown entries (the best a person would
// do). Fields are read once, absent or wrong-typed values simply do not match
// (a hand-written scorer would not report `degraded`; the bench events are
// well-typed, so outcomes agree).

import { RE2JS } from 're2js';
import type { BreakdownEntry, RulesetInput, RulesetOutcome, ShadowOutcome } from '../../compiler/index.js';
import { getPreset } from '../../compiler/index.js';

type Obj = Record<string, unknown>;
const kNone: Obj = Object.freeze({}) as Obj;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : kNone;
}
function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

const kRfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
// The same engine as compiled rules (RE2 semantics, linear time), so the comparison is of the code around it.
const kAutomation = RE2JS.compile('(headless|phantomjs|selenium|python-requests|curl/|wget/)');
const kVirtualPhone = new Set(['voip', 'premium_rate', 'toll_free', 'shared_cost', 'uan']);

const rules = getPreset('default')?.rules ?? [];
const version = new Map(rules.map((r) => [r.rule_id, r.version]));
const hit = (id: string, band: string, delta: number, action?: string): BreakdownEntry =>
  Object.freeze({
    rule_id: id, rule_version: version.get(id) ?? 1, score_delta: delta, band, matched: true, reason: id,
    ...(action === undefined ? {} : { action }),
  });
const miss = (id: string): BreakdownEntry =>
  Object.freeze({ rule_id: id, rule_version: version.get(id) ?? 1, score_delta: 0, band: null, matched: false, reason: id });

const H = {
  trusted: hit('trusted_user', 'match', 0), vip: hit('vip_user', 'match', 0),
  fraudster: hit('known_fraudster', 'match', 0), chargeback: hit('chargeback_history', 'match', 0),
  name: hit('blocked_name', 'match', 0), sanctions: hit('sanctions_hit', 'match', 0, 'require_kyc:sanctions'),
  confirmed: hit('confirmed_fraud_account', 'match', 0),
  amountVeryHigh: hit('high_amount', 'very_high', 30), amountHigh: hit('high_amount', 'high', 20),
  amountElevated: hit('high_amount', 'elevated', 10),
  billing: hit('billing_ip_country_mismatch', 'match', 15), userCountry: hit('user_ip_country_mismatch', 'match', 10),
  cardBurst: hit('card_velocity', 'burst', 25), card1h: hit('card_velocity', 'high_1h', 15),
  card24h: hit('card_velocity', 'high_24h', 10), cardAmount: hit('card_amount_velocity', 'match', 15),
  ip: hit('ip_velocity', 'match', 15), account: hit('account_velocity', 'match', 10),
  email: hit('email_velocity', 'match', 10), device: hit('device_velocity', 'match', 10),
  sharedDevice: hit('shared_device', 'match', 15), sharedIdentity: hit('shared_identity', 'match', 10),
  fraudMany: hit('linked_to_fraud', 'many', 40, 'require_kyc:document'),
  fraudSome: hit('linked_to_fraud', 'some', 25, 'require_kyc:document'),
  newDay: hit('new_account', 'first_day', 15), newWeek: hit('new_account', 'first_week', 8),
  registered: hit('recently_registered', 'match', 10), unparseable: hit('phone_unparseable', 'match', 10),
  phoneInvalid: hit('phone_invalid', 'match', 8), phoneVirtual: hit('phone_virtual', 'match', 8, 'require_kyc:phone'),
  phoneCountry: hit('phone_country_mismatch', 'match', 5), disposable: hit('disposable_email', 'match', 15),
  blocked: hit('previously_blocked', 'match', 15),
  anon: hit('anonymous_session', 'match', 10), established: hit('established_account', 'match', -10),
  withdrawal: hit('large_withdrawal', 'match', 0), linked: hit('many_linked_accounts', 'match', 0),
  automation: hit('automation_user_agent', 'match', 0), reviews: hit('repeat_reviews', 'match', 0),
};
const M = Object.fromEntries(rules.map((r) => [r.rule_id, miss(r.rule_id)])) as Record<string, BreakdownEntry>;
const kShadowHit: ShadowOutcome = Object.freeze({
  rule_id: 'high_amount_new_device', rule_version: version.get('high_amount_new_device') ?? 1, kind: 'scoring',
  matched: true, band: 'match', score_delta: 15, degraded: false,
});
const kShadowMiss: ShadowOutcome = Object.freeze({ ...kShadowHit, matched: false, band: null, score_delta: 0 });

const kMaxPossible = 311;

export function handwrittenDefault(input: RulesetInput): RulesetOutcome {
  const ev = obj(input.event);
  const sg = obj(input.signals);
  const user = obj(ev.user);
  const payment = obj(ev.payment);
  const ctx = obj(ev.context);
  const vel = obj(sg.velocity);
  const links = obj(sg.links);
  const acct = obj(sg.account);
  const phone = obj(sg.phone);
  const email = obj(sg.email);
  const amount = num(payment.amount_cents);
  const fp24 = num(vel.fp_24h);
  const events = num(acct.events);

  const shadow = [amount !== undefined && amount >= 100000 && fp24 === 0 && events !== undefined && events >= 5 ? kShadowHit : kShadowMiss];
  const degraded: string[] = [];
  const verdict = (trust: boolean, entry: BreakdownEntry, actions: string[] = []): RulesetOutcome => ({
    trust_override: trust, hard_block_hit: !trust, score: trust ? 0 : kMaxPossible, max_possible: kMaxPossible,
    breakdown: [entry], flags: [], actions, degraded, shadow, over_budget: false,
  });
  if (user.trusted === true) return verdict(true, H.trusted);
  if (user.vip === true) return verdict(true, H.vip);
  if (user.is_known_fraud === true) return verdict(false, H.fraudster);
  if (user.chargeback_flag === true) return verdict(false, H.chargeback);
  if (user.name_blocked === true) return verdict(false, H.name);
  if (user.sanctions_match === true) return verdict(false, H.sanctions, ['require_kyc:sanctions']);
  if (acct.fraud_confirmed === true) return verdict(false, H.confirmed);

  const b: BreakdownEntry[] = [M.trusted_user!, M.vip_user!, M.known_fraudster!, M.chargeback_history!, M.blocked_name!, M.sanctions_hit!, M.confirmed_fraud_account!];
  const flags: string[] = [];
  const actions: string[] = [];
  let score = 0;
  const add = (e: BreakdownEntry): void => {
    score += e.score_delta;
    b.push(e);
    if (e.action !== undefined && !actions.includes(e.action)) actions.push(e.action);
  };
  const flag = (e: BreakdownEntry): void => {
    b.push(e);
    flags.push(e.rule_id);
  };

  if (amount !== undefined && amount >= 50000) add(amount >= 500000 ? H.amountVeryHigh : amount >= 200000 ? H.amountHigh : H.amountElevated);
  else b.push(M.high_amount!);
  const ipCountry = str(ctx.country);
  const billing = str(payment.billing_country);
  if (ipCountry !== undefined && billing !== undefined && billing.toUpperCase() !== ipCountry.toUpperCase()) add(H.billing);
  else b.push(M.billing_ip_country_mismatch!);
  const userCountry = str(user.country);
  if (ipCountry !== undefined && userCountry !== undefined && userCountry.toUpperCase() !== ipCountry.toUpperCase()) add(H.userCountry);
  else b.push(M.user_ip_country_mismatch!);
  const c1 = num(vel.card_1h);
  const c24 = num(vel.card_24h);
  if ((c1 !== undefined && c1 >= 3) || (c24 !== undefined && c24 >= 10)) {
    add(c1 !== undefined && c1 >= 5 ? H.cardBurst : c1 !== undefined && c1 >= 3 ? H.card1h : H.card24h);
  } else b.push(M.card_velocity!);
  const cardAmount = num(vel.card_amount_24h);
  if (cardAmount !== undefined && amount !== undefined && cardAmount + amount > 1000000) add(H.cardAmount);
  else b.push(M.card_amount_velocity!);
  const either = (x: unknown, a: number, y: unknown, c: number): boolean =>
    (typeof x === 'number' && x >= a) || (typeof y === 'number' && y >= c);
  if (either(vel.ip_1h, 10, vel.ip_24h, 50)) add(H.ip); else b.push(M.ip_velocity!);
  if (either(vel.account_1h, 5, vel.account_24h, 20)) add(H.account); else b.push(M.account_velocity!);
  if (either(vel.email_1h, 5, vel.email_24h, 20)) add(H.email); else b.push(M.email_velocity!);
  if (either(vel.fp_1h, 5, fp24, 20)) add(H.device); else b.push(M.device_velocity!);
  const linkFp = num(links.fp);
  if (linkFp !== undefined && linkFp >= 3) add(H.sharedDevice); else b.push(M.shared_device!);
  if (either(links.email, 1, links.phone, 1) || (typeof links.card === 'number' && links.card >= 2)) add(H.sharedIdentity);
  else b.push(M.shared_identity!);
  const fraud = num(links.fraud);
  if (fraud !== undefined && fraud >= 1) add(fraud >= 3 ? H.fraudMany : H.fraudSome); else b.push(M.linked_to_fraud!);
  const age = num(acct.age_days);
  if (acct.known === true && age !== undefined && age < 7) add(age < 1 ? H.newDay : H.newWeek); else b.push(M.new_account!);
  const registeredAt = str(user.registered_at);
  const registered = registeredAt !== undefined && kRfc3339.test(registeredAt) ? Date.parse(registeredAt) : NaN;
  if (registered === registered && input.now - registered < 72 * 3600 * 1000) add(H.registered); else b.push(M.recently_registered!);
  if (phone.present === true && phone.parseable === false) add(H.unparseable); else b.push(M.phone_unparseable!);
  if (phone.parseable === true && phone.valid === false) add(H.phoneInvalid); else b.push(M.phone_invalid!);
  const phoneType = str(phone.type);
  if (phoneType !== undefined && kVirtualPhone.has(phoneType)) add(H.phoneVirtual); else b.push(M.phone_virtual!);
  const phoneCountry = str(phone.country);
  if (phoneCountry !== undefined && ipCountry !== undefined && phoneCountry !== ipCountry) add(H.phoneCountry);
  else b.push(M.phone_country_mismatch!);
  if (email.disposable === true) add(H.disposable); else b.push(M.disposable_email!);
  const blocks = num(acct.blocks);
  if (blocks !== undefined && blocks >= 1) add(H.blocked); else b.push(M.previously_blocked!);
  if (ctx.session_anon === true) add(H.anon); else b.push(M.anonymous_session!);
  const reviews = num(acct.reviews);
  if (age !== undefined && age >= 180 && events !== undefined && events >= 20 && blocks === 0 && reviews === 0) add(H.established);
  else b.push(M.established_account!);

  const eventType = str(ev.event_type);
  if ((eventType === 'payout' || eventType === 'withdrawal') && amount !== undefined && amount >= 100000) flag(H.withdrawal);
  else b.push(M.large_withdrawal!);
  const total = num(links.total);
  if (total !== undefined && total >= 5) flag(H.linked); else b.push(M.many_linked_accounts!);
  const ua = str(ctx.user_agent);
  if (ua !== undefined && kAutomation.test(ua.toLowerCase())) flag(H.automation);
  else b.push(M.automation_user_agent!);
  if (reviews !== undefined && reviews >= 2) flag(H.reviews); else b.push(M.repeat_reviews!);

  return { trust_override: false, hard_block_hit: false, score, max_possible: kMaxPossible, breakdown: b, flags, actions, degraded, shadow, over_budget: false };
}
