// By hand (about 30 s): small steps every sync event takes on the HTTP thread or the writer, each
// timed alone with tinybench on the realistic mix's bodies (bench/README.md, step 56): checking and
// parsing the body, normalising its IP, the EventSignals an event's values go into (sized as the
// server sizes it), the scored
// event's round trip to the writer thread as postMessage clones it (as an object and as the tuple
// the server sends), and a new sortable id (an account's or a case's). Whole-server runs on this box
// move by more than these steps together; this is where a change to one of them shows.
//   node dist/bench/scoring/event-steps.bench.js     (after npm run build)
import { deserialize, serialize } from 'node:v8';
import { Bench } from 'tinybench';
import type { PersistOutcome, ScoredEventRecord } from '../../src/scoring/event-store.js';
import { persistOutcomeMessage, scoredEventMessage } from '../../src/scoring/scored-event-message.js';
import { newSortableId } from '../../src/shared/ids.js';
import { normalizeIp } from '../../src/signals/ip.js';
import { EventSignals, SignalType } from '../../src/state/hot-state.js';
import { KeyHasher } from '../../src/state/keys.js';
import { parseJsonObjectBody } from '../../src/validation/json-body.js';
import { eventMix } from '../_helpers/event-mix.js';

const kBodies = 1024;
const mix = eventMix(7);
const bodies = Array.from({ length: kBodies }, () => new TextEncoder().encode(mix()));
const ips = bodies.map((bytes) => (JSON.parse(new TextDecoder().decode(bytes)) as { context: { ip: string } }).context.ip);
const hasher = new KeyHasher(Buffer.alloc(32, 7));
const kValues: Array<[SignalType, string]> = [
  [SignalType.Email, 'user4821@example5.com'], [SignalType.Phone, '+4915010178377'], [SignalType.Fp, 'fp_a4821'], [SignalType.Ip, '10.0.45.17'], [SignalType.Card, '411111:4821'],
];

// A batch of 24 records, as the writer receives one at capacity.
const kBatch = 24;
const records: ScoredEventRecord[] = bodies.slice(0, kBatch).map((bytes, i) => ({
  projectId: 'prj_0123456789abcdefghij', tenantId: 'ten_0123456789abcdefghij', environment: 'live', eventId: `3f2a9c1e-7b4d-4e2a-9f1c-${String(i).padStart(12, '0')}`,
  eventType: 'payment', receivedAt: 1_764_340_000_000 + i, payload: new TextDecoder().decode(bytes),
  account: i % 5 < 2 ? { accountId: 'acc_0123456789abcdefghij', externalId: `user-${i}`, isNew: false, newProject: false } : null,
  rulesetVersion: 3, decision: 'allow', riskScore: 12, result: '[1,[0,3],{}]', shadow: '[]', signals: '[1,[0,1,0,2,1,4,1,4,1,3,123456,23456],[0,0,1,2,0,2,0],null]',
  scoredAt: 1_764_340_000_000 + i, webhookPayload: null,
}));
const outcomes: PersistOutcome[] = records.map((record, i) => ({
  kind: 'stored', seq: 100_000 + i, order: 90_000 + i, accountId: record.account?.accountId ?? null, webhookQueued: false, openedCase: null, extendedCase: null, labelNamesAccount: false,
}));

let next = 0;
const bench = new Bench({ time: 2000 });
bench
  .add('parseJsonObjectBody (the checks of an event body, JSON.parse included)', () => {
    parseJsonObjectBody(bodies[next++ % kBodies]!);
  })
  .add('normalizeIp (IPv4)', () => {
    normalizeIp(ips[next++ % kBodies]!);
  })
  .add('new EventSignals with 3 values', () => {
    const signals = new EventSignals(3);
    for (let i = 2; i < 5; i++) signals.addValue(hasher, 0, kValues[i]![0], kValues[i]![1], '');
  })
  .add('new EventSignals with 5 values', () => {
    const signals = new EventSignals(5);
    for (const [type, value] of kValues) signals.addValue(hasher, 0, type, value, '');
  })
  .add(`${kBatch} scored events to the writer and back, as objects (per batch)`, () => {
    deserialize(serialize(records.map((record) => [record, null])));
    deserialize(serialize(outcomes));
  })
  .add(`${kBatch} scored events to the writer and back, as tuples (per batch)`, () => {
    deserialize(serialize(records.map((record) => [scoredEventMessage(record), null])));
    deserialize(serialize(outcomes.map(persistOutcomeMessage)));
  })
  .add('newSortableId', () => {
    newSortableId('case');
  });
await bench.run();
for (const task of bench.tasks) {
  const result = task.result;
  if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
  const perBatch = task.name.includes('(per batch)');
  const us = (result.latency.mean * 1e3) / (perBatch ? kBatch : 1);
  console.log(`${task.name}: ${us.toFixed(2)} µs${perBatch ? ' per event' : ''}`);
}
