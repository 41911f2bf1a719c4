// docs/backtests.md states the bounds an analyst and an operator plan with: they must be the code's.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { kDefaultStatsDays, kMaxBacktestDays, kMaxBacktestEvents, kMaxStatsDays } from '../../src/analysis/analysis-request.js';
import { kTransitionSamples } from '../../src/analysis/backtest-report.js';
import { kBacktestChunk } from '../../src/analysis/backtest-run.js';
import { kMaxQueued, kMinPace } from '../../src/analysis/backtest-runner.js';
import { kBacktestRetentionCount, kBacktestRetentionDays } from '../../src/analysis/backtest-store.js';
import { kArrivalDisorderMs } from '../../src/analysis/event-range.js';

// Line breaks fall anywhere in prose: compared with whitespace collapsed.
const doc = readFileSync(new URL('../../../docs/backtests.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

test('the documented bounds are the code\'s', (t) => {
  const mentions = [
    `1 to ${kMaxBacktestEvents.toLocaleString('en-US')} (the default)`,
    `At most ${kMaxBacktestDays} days after \`from\``,
    `up to ${kTransitionSamples} \`sample_event_ids\``,
    `at most ${kMaxQueued} waiting`,
    `chunks of ${kBacktestChunk.toLocaleString('en-US')} events`,
    `at least ${kMinPace / 10} %`,
    `stay ${kBacktestRetentionDays} days after they finished, and a project keeps at most its ${kBacktestRetentionCount} most recent`,
    `widens the range by ${kArrivalDisorderMs / 60_000} minutes`,
    `at most ${kMaxStatsDays} days; without them, the last ${kDefaultStatsDays} days`,
  ];
  for (const mention of mentions) t.true(doc.includes(mention), mention);
});
