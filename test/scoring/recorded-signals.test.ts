// The signals an event's rules read, kept compactly with the event: what is decoded is what the
// rules were given — the same fields present, the same values, absent fields still absent.
import test from 'ava';
import { decodeRecordedSignals, encodeRecordedSignals, type RecordedSignals } from '../../src/scoring/recorded-signals.js';

const cases: Array<[string, RecordedSignals]> = [
  ['nothing read', {}],
  ['velocity with some windows', { velocity: { card_1h: 3, ip_24h: 0, account_amount_24h: 123_456_789 } }],
  ['every velocity window', {
    velocity: {
      card_1h: 1, card_24h: 2, ip_1h: 3, ip_24h: 4, account_1h: 5, account_24h: 6, email_1h: 7, email_24h: 8, fp_1h: 9, fp_24h: 10,
      account_amount_24h: 11, card_amount_24h: 12,
    },
  }],
  ['links', { links: { email: 1, phone: 0, fp: 2, ip_24h: 0, card: 1, total: 3, fraud: 1 } }],
  ['an unknown account', { account: { known: false } }],
  ['a known account', { account: { known: true, age_days: 12.345678901234, events: 40, blocks: 1, reviews: 0, fraud_confirmed: false } }],
  ['a fraudulent account', { account: { known: true, age_days: 0, events: 1, blocks: 0, reviews: 0, fraud_confirmed: true, labelled_fraud: 2 } }],
  ['all three', {
    velocity: { email_1h: 1 },
    links: { email: 0, phone: 0, fp: 0, ip_24h: 0, card: 0, total: 0, fraud: 0 },
    account: { known: true, age_days: 1 / 3, events: 2, blocks: 0, reviews: 1, fraud_confirmed: false },
  }],
];

for (const [title, signals] of cases) {
  test(`round trip: ${title}`, (t) => {
    const stored = encodeRecordedSignals(signals);
    t.deepEqual(decodeRecordedSignals(stored), signals);
  });
}

test('the stored form is compact', (t) => {
  const all = { ...cases[2]![1], links: cases[3]![1].links, account: cases[5]![1].account };
  const stored = encodeRecordedSignals(all);
  t.true(stored.length < JSON.stringify(all).length / 2, stored);
  t.is(encodeRecordedSignals({}), '[1,null,null,null]');
});

test('the text is what JSON.stringify wrote of the groups as arrays (rows stored before step 56 read the same)', (t) => {
  const stringified = (signals: RecordedSignals): string => {
    const v = signals.velocity;
    const l = signals.links;
    const a = signals.account;
    const velocityFields = ['card_1h', 'card_24h', 'ip_1h', 'ip_24h', 'account_1h', 'account_24h', 'email_1h', 'email_24h', 'fp_1h', 'fp_24h', 'account_amount_24h', 'card_amount_24h'] as const;
    const linkFields = ['email', 'phone', 'fp', 'ip_24h', 'card', 'total', 'fraud'] as const;
    return JSON.stringify([
      1,
      v === undefined ? null : velocityFields.map((field) => v[field] ?? null),
      l === undefined ? null : linkFields.map((field) => l[field]),
      a === undefined ? null : [a.known ? 1 : 0, a.age_days ?? null, a.events ?? null, a.blocks ?? null, a.reviews ?? null, a.fraud_confirmed === undefined ? null : a.fraud_confirmed ? 1 : 0, a.labelled_fraud ?? null],
    ]);
  };
  for (const [title, signals] of cases) t.is(encodeRecordedSignals(signals), stringified(signals), title);
});

test('an account recorded before labelled_fraud existed decodes without it', (t) => {
  t.deepEqual(decodeRecordedSignals('[1,null,null,[1,2,3,0,0,0]]'), { account: { known: true, age_days: 2, events: 3, blocks: 0, reviews: 0, fraud_confirmed: false } });
});

test('a form of another version is refused', (t) => {
  t.throws(() => decodeRecordedSignals('[2,null,null,null]'), { message: /unknown format 2/ });
});
