// A batch for the rule workers travels as columns (pool/protocol.ts); each event must come out as it
// went in, through a real structured clone, whatever groups and fields it lacks.
import test from 'ava';
import { deserialize, serialize } from 'node:v8';
import { encodeResults, encodeTask, itemOf, recordedSignalsOf, resultOf, taskSize, type EvaluateItem, type ItemResult } from '../../src/pool/protocol.js';
import { encodeRecordedSignals } from '../../src/scoring/recorded-signals.js';
import type { PhoneAnalysis } from '../../src/signals/phone.js';

const phone: PhoneAnalysis = { signals: { present: true, parseable: true, valid: false, country: 'DE', type: null }, e164: '+4915010004551', masked: '+49*********51', status: 'ok' };

const full: EvaluateItem = {
  projectId: 'prj_a', eventId: 'e-1', version: 7, policy: { review_threshold: 40, block_threshold: 80 }, payload: '{"event_id":"e-1"}', phone,
  velocity: { card_1h: 1, card_24h: 3, ip_1h: 0, account_amount_24h: 123_456.5 },
  links: { email: 0, phone: 1, fp: 2, ip_24h: 3, card: 4, total: 5, fraud: 1 },
  account: { known: true, age_days: 300, events: 40, blocks: 0, reviews: 1, fraud_confirmed: false, labelled_fraud: 2 },
  now: 1_790_000_000_123, requestId: 'req-1',
};
const bare: EvaluateItem = {
  projectId: 'prj_b', eventId: 'e-2', version: 1, policy: { review_threshold: 0, block_threshold: 1 }, payload: '{}', phone: null,
  velocity: null, links: null, account: null, now: 1, requestId: null,
};
const unknownAccount: EvaluateItem = {
  ...bare, eventId: 'e-3', velocity: {}, account: { known: false },
  phone: { signals: { present: true, parseable: false, valid: false, country: null, type: null }, e164: null, masked: null, status: 'unparseable' },
};

const cloned = <T>(value: T): T => deserialize(serialize(value)) as T;

test('every event of a task comes out as it went in, the phone without the fields the worker does not use', (t) => {
  const task = cloned(encodeTask([full, bare, unknownAccount]));
  t.is(taskSize(task), 3);
  t.deepEqual(itemOf(task, 0), { ...full, phone: { ...phone, e164: null, masked: null } });
  t.deepEqual(itemOf(task, 1), bare);
  t.deepEqual(itemOf(task, 2), { ...unknownAccount, phone: { ...unknownAccount.phone!, e164: null, masked: null } });
});

test('the signals each event stores, read from the numbers of its task, are those it brought', (t) => {
  const task = cloned(encodeTask([full, bare, unknownAccount]));
  t.is(recordedSignalsOf(task, 0), '[1,[1,3,0,null,null,null,null,null,null,null,123456.5,null],[0,1,2,3,4,5,1],[1,300,40,0,1,0,2]]');
  t.is(recordedSignalsOf(task, 1), '[1,null,null,null]');
  t.is(recordedSignalsOf(task, 2), '[1,[null,null,null,null,null,null,null,null,null,null,null,null],null,[0,null,null,null,null,null,null]]');
  for (const [i, item] of [full, bare, unknownAccount].entries()) {
    const signals = { ...(item.velocity === null ? {} : { velocity: item.velocity }), ...(item.links === null ? {} : { links: item.links }), ...(item.account === null ? {} : { account: item.account }) };
    t.is(recordedSignalsOf(task, i), encodeRecordedSignals(signals), item.eventId);
  }
});

test('results come back in order, failures at their place, degraded rules as a list', (t) => {
  const scored: ItemResult = {
    ok: true, decision: 'review', riskScore: 45, storedJson: '{"decision":"review"}', degraded: ['amount_check', 'new_device'],
    compactResult: '[1]', compactShadow: '', recordedSignals: '[1,null,null,null]', evalMs: 0.25,
  };
  const plain: ItemResult = { ...scored, decision: 'allow', riskScore: 0, degraded: [] };
  const failed: ItemResult = { ok: false, code: 'COMPILED_RULES_UNAVAILABLE', message: 'over budget', overBudget: true };
  const results = cloned(encodeResults([scored, failed, plain], undefined));
  t.deepEqual(resultOf(results, 0), scored);
  t.deepEqual(resultOf(results, 1), failed);
  t.deepEqual(resultOf(results, 2), plain);
  t.is(results.tally, undefined);
});

test('a result missing from a batch is an error for that event, not a crash', (t) => {
  const results = cloned(encodeResults([], undefined));
  const missing = resultOf(results, 0);
  t.false(missing.ok);
  t.is(!missing.ok && missing.code, 'INTERNAL_ERROR');
});
