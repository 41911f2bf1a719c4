// Decisions and rule matches counted per batch in the workers and summed on the main thread.
import test from 'ava';
import { countOutcome, newTally, OutcomeCounts } from '../../src/pool/outcome-tally.js';

const entry = (rule_id: string, matched: boolean) => ({ rule_id, rule_version: 1, score_delta: 0, band: null, matched, reason: rule_id });
const shadow = (rule_id: string, matched: boolean) => ({ rule_id, rule_version: 1, kind: 'scoring' as const, matched, band: null, score_delta: 0, degraded: false });

test('batches add up by project and decision, and by project, rule and status', (t) => {
  const counts = new OutcomeCounts();
  const first = newTally();
  countOutcome(first, 'prj_a', 'allow', { breakdown: [entry('amount', false), entry('velocity', true)], shadow: [shadow('trial', true)] });
  countOutcome(first, 'prj_a', 'allow', { breakdown: [entry('velocity', true)], shadow: [shadow('trial', false)] });
  const second = newTally();
  countOutcome(second, 'prj_b', 'block', { breakdown: [entry('velocity', true)], shadow: [] });
  counts.add(first);
  counts.add(second);
  counts.add(undefined);
  t.deepEqual(counts.decisions(), [[{ project_id: 'prj_a', decision: 'allow' }, 2], [{ project_id: 'prj_b', decision: 'block' }, 1]]);
  t.deepEqual(counts.ruleHits(), [
    [{ project_id: 'prj_a', rule_id: 'velocity', status: 'active' }, 2],
    [{ project_id: 'prj_b', rule_id: 'velocity', status: 'active' }, 1],
    [{ project_id: 'prj_a', rule_id: 'trial', status: 'shadow' }, 1],
  ]);
});
