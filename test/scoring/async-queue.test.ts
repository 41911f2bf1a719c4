// The background scorer's queue holds waiting events as their seqs and reads each body back from
// the event log when its turn comes (scoring/async-scorer.ts, scoring/pending-events.ts). Here
// with a source in memory; test/http/durability.test.ts and erasure.test.ts cover it with the
// real log.
import test from 'ava';
import { AsyncScorer, type PendingJob, type PendingSource } from '../../src/scoring/async-scorer.js';
import { createLogger } from '../../src/shared/log.js';
import type { EventInput } from '../../src/validation/event-input.js';
import { waitFor } from '../_helpers/server.js';

function job(seq: number, from: string): PendingJob {
  return {
    seq, projectId: 'prj_1', tenantId: 'ten_1', environment: 'live', eventId: `${from}-${seq}`,
    event: { event_id: `evt-${seq}`, event_type: 'login' } as unknown as EventInput, payload: '{}', receivedAt: seq,
  };
}

/** The log as a map of pending rows; records each read. */
class MemoryLog implements PendingSource {
  readonly pending = new Map<number, PendingJob>();
  readonly reads: number[][] = [];
  failNextReads = 0;

  /** Every pending seq, ascending: what the writer gives the scorer at start. */
  seqs(): number[] {
    return [...this.pending.keys()].sort((a, b) => a - b);
  }

  jobs(seqs: readonly number[]): PendingJob[] {
    this.reads.push([...seqs]);
    if (this.failNextReads > 0) {
      this.failNextReads--;
      throw new Error('disk I/O error');
    }
    return seqs.flatMap((seq) => {
      const found = this.pending.get(seq);
      return found === undefined ? [] : [found];
    });
  }
}

const quiet = createLogger('error', () => undefined);

/** A scorer with events 1..count pending in a log in memory, queued as a restart queues them. */
function queued(count: number): { log: MemoryLog; scorer: AsyncScorer; loaded: number } {
  const log = new MemoryLog();
  for (let seq = 1; seq <= count; seq++) log.pending.set(seq, job(seq, 'log'));
  const scorer = new AsyncScorer(1000, quiet, log);
  return { log, scorer, loaded: scorer.loadPending(log.seqs()) };
}

/** Starts `scorer`, every event scored at once; the jobs it was given, in order. */
function startScoring(scorer: AsyncScorer, log?: MemoryLog): PendingJob[] {
  const started: PendingJob[] = [];
  scorer.start(async (pending) => {
    started.push(pending);
    log?.pending.delete(pending.seq);
    return 'done';
  });
  return started;
}

test('waiting events are read back from the log in arrival order, at most 64 at a time', async (t) => {
  const { log, scorer, loaded } = queued(300);
  t.is(loaded, 300);
  t.is(scorer.depth, 300);
  const started = startScoring(scorer, log);
  await waitFor(() => scorer.scored === 300, 'every event scored');
  t.deepEqual(started.map((s) => s.seq), Array.from({ length: 300 }, (_, i) => i + 1));
  t.true(started.every((s) => s.eventId.startsWith('log-')), 'every body came from the log');
  t.true(log.reads.every((read) => read.length <= 64));
  t.deepEqual(log.reads.flat(), started.map((s) => s.seq), 'each waiting event read once');
  t.is(scorer.depth, 0);
  await scorer.pause();
});

test('an event accepted with nothing waiting is scored with the body in hand, without a read', async (t) => {
  const { log, scorer } = queued(0);
  const started = startScoring(scorer);
  scorer.enqueue(job(7, 'request'));
  await waitFor(() => scorer.scored === 1, 'the event scored');
  t.is(started[0]!.eventId, 'request-7');
  t.deepEqual(log.reads, []);
  await scorer.pause();
});

test('events no longer pending in the log are skipped, neither scored nor counted', async (t) => {
  const { log, scorer } = queued(10);
  // Scored by a sync request or erased between being queued and their turn.
  log.pending.delete(3);
  log.pending.delete(8);
  const started = startScoring(scorer);
  await waitFor(() => scorer.depth === 0, 'the queue empty');
  t.deepEqual(started.map((s) => s.seq), [1, 2, 4, 5, 6, 7, 9, 10]);
  t.is(scorer.scored, 8);
  await scorer.pause();
});

test('dropped events are not read; a failed read puts its events aside and reads them again', async (t) => {
  const { log, scorer } = queued(5);
  scorer.drop([2]);
  t.is(scorer.depth, 4);
  log.failNextReads = 1;
  const started = startScoring(scorer);
  t.is(scorer.depth, 4, 'set aside, still counted against the bound');
  t.deepEqual(started, []);
  await waitFor(() => scorer.scored === 4, 'the four events scored');
  t.deepEqual(started.map((s) => s.seq), [1, 3, 4, 5]);
  t.deepEqual(log.reads, [[1, 3, 4, 5], [1, 3, 4, 5]]);
  await scorer.pause();
});

test('a drop takes a waiting event out at once without scanning for it; one being scored is left to the writer', async (t) => {
  const { log, scorer } = queued(300);
  const held: Array<() => void> = [];
  const started: number[] = [];
  scorer.start((pending) => {
    started.push(pending.seq);
    log.pending.delete(pending.seq);
    return new Promise((resolve) => held.push(() => resolve('done')));
  });
  await waitFor(() => started.length === 256, 'the scorer full'); // its limit: the other 44 wait
  scorer.drop([1, 290]);
  t.is(scorer.depth, 299, 'the waiting one no longer counts; the one being scored does');
  for (let turn = 0; turn < 10_000 && scorer.depth > 0; turn++) {
    for (const release of held.splice(0)) release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.is(scorer.depth, 0);
  t.is(scorer.scored, 299);
  t.false(started.includes(290));
  t.false(log.reads.flat().includes(290), 'never read from the log');
  await scorer.pause();
});

test('events that cannot be scored yet are set aside a read at a time per turn, not a whole backlog within one turn', async (t) => {
  const { scorer } = queued(10_000);
  let runs = 0;
  scorer.start(async () => {
    runs++;
    return 'retry'; // as for a project with no published ruleset: at once
  });
  const inFirstTurns = await new Promise<number>((resolve) => setImmediate(() => resolve(runs)));
  t.true(inFirstTurns <= 2 * 64, `${inFirstTurns} events started before the thread could serve anything else`);
  await waitFor(() => runs === 10_000, 'every event tried once');
  t.is(scorer.depth, 10_000, 'all set aside, none lost');
  await scorer.pause();
});

test('events set aside are tried again at once when the rules change, however long their pause', async (t) => {
  const log = new MemoryLog();
  for (let seq = 1; seq <= 3; seq++) log.pending.set(seq, job(seq, 'log'));
  const scorer = new AsyncScorer(1000, quiet, log, 600_000); // a first pause of 10 minutes
  scorer.loadPending(log.seqs());
  let published = false;
  let runs = 0;
  scorer.start(async (pending) => {
    runs++;
    if (!published) return 'retry';
    log.pending.delete(pending.seq);
    return 'done';
  });
  await waitFor(() => scorer.setAside === 3, 'every event tried once and set aside');
  t.is(runs, 3);
  published = true;
  scorer.retrySetAsideNow();
  t.is(scorer.setAside, 0);
  t.is(scorer.depth, 3, 'due again, still counted');
  await waitFor(() => scorer.scored === 3, 'the three scored');
  t.is(runs, 6);
  t.is(scorer.depth, 0);
  await scorer.pause();
});

test("events set aside count against their project's bound, not the queue's, also while they are tried again after a publish", async (t) => {
  const log = new MemoryLog();
  for (let seq = 1; seq <= 3; seq++) log.pending.set(seq, { ...job(seq, 'log'), projectId: 'prj_bare' });
  const scorer = new AsyncScorer(3, quiet, log, 600_000);
  scorer.loadPending(log.seqs());
  let held: Array<() => void> = [];
  let tries = 0;
  scorer.start(async () => {
    tries++;
    if (tries <= 3) return 'retry'; // no ruleset yet
    // Tried again after the publish: held, as a slow scoring would be.
    await new Promise<void>((resolve) => held.push(resolve));
    return 'retry';
  });
  await waitFor(() => scorer.setAside === 3, 'the three tried and set aside');
  t.true(scorer.canAccept('prj_other'), "another project's events are accepted");
  t.false(scorer.canAccept('prj_bare'), "the project's own are at its bound");
  scorer.retrySetAsideNow();
  await waitFor(() => held.length === 3, 'the three tried again');
  t.true(scorer.canAccept('prj_other'), 'and still while the set-aside events are tried again');
  t.false(scorer.canAccept('prj_bare'));
  for (const release of held) release();
  held = [];
  await waitFor(() => scorer.setAside === 3, 'set aside again');
  t.true(scorer.canAccept('prj_other'));
  await scorer.pause();
});

test('a reservation counts against the bound until released', (t) => {
  const scorer = new AsyncScorer(2, quiet, new MemoryLog());
  scorer.reserve();
  t.true(scorer.canAccept('p'));
  scorer.reserve();
  t.false(scorer.canAccept('p'), 'two places taken by events being written');
  t.is(scorer.depth, 2);
  scorer.unreserve();
  t.true(scorer.canAccept('p'));
});

test('the sandbox scorer keeps only eight going while live events wait, and all it can once they are scored', async (t) => {
  const liveLog = new MemoryLog();
  for (let seq = 1; seq <= 300; seq++) liveLog.pending.set(seq, job(seq, 'live'));
  const sandboxLog = new MemoryLog();
  for (let seq = 1001; seq <= 1100; seq++) sandboxLog.pending.set(seq, job(seq, 'sandbox'));
  const live = new AsyncScorer(1000, quiet, liveLog);
  const sandbox = new AsyncScorer(1000, quiet, sandboxLog, undefined, live);
  live.loadPending(liveLog.seqs());
  sandbox.loadPending(sandboxLog.seqs());
  const hold = (log: MemoryLog, started: number[], held: Array<() => void>) => (pending: PendingJob): Promise<'done'> => {
    started.push(pending.seq);
    log.pending.delete(pending.seq);
    return new Promise((resolve) => held.push(() => resolve('done')));
  };
  const liveStarted: number[] = [];
  const liveHeld: Array<() => void> = [];
  const sandboxStarted: number[] = [];
  const sandboxHeld: Array<() => void> = [];
  live.start(hold(liveLog, liveStarted, liveHeld));
  await waitFor(() => liveStarted.length === 256, 'the live scorer full, 44 live events waiting');
  t.true(live.backlogged);
  sandbox.start(hold(sandboxLog, sandboxStarted, sandboxHeld));
  await waitFor(() => sandboxStarted.length === 8, 'eight sandbox events started');
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  t.is(sandboxStarted.length, 8, 'no more while live events wait');
  t.is(sandbox.depth, 100, 'the other 92 wait in the sandbox queue, under its own bound');
  t.is(live.depth, 300);
  // A sandbox event scored starts the next one: sandbox keeps going beside the live backlog.
  sandboxHeld.shift()!();
  await waitFor(() => sandboxStarted.length === 9, 'the next sandbox event started');
  t.is(sandboxHeld.length, 8);
  // Live events scored until none waits; then a sandbox event scored lets the rest start together.
  for (let turn = 0; turn < 10_000 && live.backlogged; turn++) {
    for (const release of liveHeld.splice(0)) release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.is(sandboxStarted.length, 9, 'sandbox was not let go further meanwhile');
  sandboxHeld.shift()!();
  await waitFor(() => sandboxStarted.length === 100, 'every sandbox event started, 92 at once');
  for (const release of [...liveHeld.splice(0), ...sandboxHeld.splice(0)]) release();
  await waitFor(() => live.scored === 300 && sandbox.scored === 100, 'every event scored');
  t.deepEqual(sandboxStarted, Array.from({ length: 100 }, (_, i) => 1001 + i), 'in arrival order');
  await live.pause();
  await sandbox.pause();
});

test('an event no longer pending at its turn (scored by a sync request, erased) is done with, not counted as scored in the background', async (t) => {
  const { log, scorer } = queued(3);
  const started: number[] = [];
  scorer.start(async (pending) => {
    started.push(pending.seq);
    log.pending.delete(pending.seq);
    return pending.seq === 2 ? 'gone' : 'done';
  });
  await waitFor(() => scorer.depth === 0, 'the queue empty');
  t.deepEqual(started, [1, 2, 3]);
  t.is(scorer.scored, 2, 'the one a sync request scored meanwhile is not counted');
  t.is(scorer.setAside, 0, 'nor set aside to be tried again');
  await scorer.pause();
});
