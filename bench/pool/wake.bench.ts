// What a thread pays to hand a message to another thread, by whether that thread is awake: the
// sender's time inside `postMessage` when the receiver sleeps between messages (a gap of
// WAKE_GAP_US, 500) against when it is kept busy by messages back to back. Waking a sleeping
// thread is a write to its event fd that the kernel turns into a wake-up on the other core; in a
// virtual machine that is an interrupt between cores, and the sender waits for it. Below capacity
// the HTTP thread pays it for every batch it hands to the rule worker and to the writer, and for
// every answer whose client sleeps (bench/README.md, step 57).
//   node dist/bench/pool/wake.bench.js     (after npm run build; WAKE_MESSAGES (4000), WAKE_GAP_US (500))
import { Worker } from 'node:worker_threads';

const kMessages = Number(process.env.WAKE_MESSAGES ?? 4000);
const kGapUs = Number(process.env.WAKE_GAP_US ?? 500);

/** The receiver counts what it gets and answers the count when asked, so that nothing is left in flight. */
const kReceiver = `
const { parentPort } = require('node:worker_threads');
let received = 0;
parentPort.on('message', (message) => {
  received++;
  if (message === 'count') parentPort.postMessage(received);
});`;

/** Mean µs the sender spends in `postMessage`, sending `kMessages` messages `gapUs` apart (spinning in between). */
async function sendingCost(worker: Worker, gapUs: number): Promise<number> {
  const message = new Float64Array(8);
  let spentNs = 0n;
  let due = performance.now();
  for (let i = 0; i < kMessages; i++) {
    due += gapUs / 1000;
    // Spin, not sleep: the sender stays awake, so that only the receiver's state differs.
    while (performance.now() < due);
    const start = process.hrtime.bigint();
    worker.postMessage(message);
    spentNs += process.hrtime.bigint() - start;
  }
  worker.postMessage('count');
  await new Promise((resolve) => worker.once('message', resolve));
  return Number(spentNs) / 1000 / kMessages;
}

async function main(): Promise<void> {
  const worker = new Worker(kReceiver, { eval: true });
  try {
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let round = 0; round < 2; round++) {
      const asleep = await sendingCost(worker, kGapUs);
      const awake = await sendingCost(worker, 0);
      console.log(`postMessage to a thread asleep (${kGapUs} µs apart): ${asleep.toFixed(1)} µs; to one kept awake (back to back): ${awake.toFixed(1)} µs`);
    }
  } finally {
    await worker.terminate();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
