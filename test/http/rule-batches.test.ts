// Batches to the rule workers (src/pool/rules-pool.ts): while every worker holds a batch, events
// asked for meanwhile wait in the pool and go out together, as one batch, when a worker answers.
// Driven with a hold point inside the rule worker (FAULT_INJECTION=hold_points), never timed.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { api, startServer, waitFor, type ApiResponse } from '../_helpers/server.js';
import { minimalEvent } from '../_helpers/events.js';
import { heldAt, metric, release } from '../_helpers/faults.js';

test('events that arrive while the only rule worker is busy go to it as one batch, each scored', async (t) => {
  const server = await startServer({ env: { FAULT_INJECTION: 'hold_points', WORKERS: '1', WORKER_TASK_TIMEOUT_MS: '600000' } });
  try {
    await heldAt(server, 'async-scorer');
    release(server, 'async-scorer');
    const key = server.bootstrap.keys.live_secret.key;
    const hold = `worker-${randomUUID().slice(0, 8)}`;
    const batchesBefore = await metric(server, 'fraud_scorer_rule_pool_batches_total');

    const first = api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { rule_worker_hold: hold } }) });
    await heldAt(server, hold);
    // One at a time, each after the one before is waiting in the pool: sent as they came, each
    // would be a batch of its own.
    const later: Array<Promise<ApiResponse>> = [];
    for (let i = 1; i <= 5; i++) {
      later.push(api(server, 'POST', '/v1/events', { key, body: minimalEvent({ extras: { n: i } }) }));
      await waitFor(async () => (await metric(server, 'fraud_scorer_rule_pool_queue')) === i, `${i} events waiting for the rule worker`);
    }
    t.is(await metric(server, 'fraud_scorer_rule_pool_batches_total'), batchesBefore + 1, 'only the held batch was sent');

    release(server, hold);
    const answers = await Promise.all([first, ...later]);
    for (const answer of answers) t.is(answer.status, 200, answer.text);
    t.is(await metric(server, 'fraud_scorer_rule_pool_batches_total'), batchesBefore + 2, 'the five waiting events went out as one batch');
    t.is(await metric(server, 'fraud_scorer_rule_pool_queue'), 0);
  } finally {
    await server.stop();
  }
});
