// The request checks of backtests and rule statistics (src/analysis/analysis-request.ts): times,
// dates and their bounds. Pure; the HTTP tests cover each refusal end to end.
import test from 'ava';
import { kMaxStatsDays, parseBacktestRequest, parseInstant, parseStatsQuery } from '../../src/analysis/analysis-request.js';
import { kMinPace, pace } from '../../src/analysis/backtest-runner.js';

test('times: RFC 3339 with Z or an offset, or a UTC date; nothing else, no impossible dates or times', (t) => {
  t.is(parseInstant('2026-11-20T00:00:00Z'), Date.UTC(2026, 10, 20));
  t.is(parseInstant('2026-11-20t01:30:00.250+01:30'), Date.UTC(2026, 10, 20, 0, 0, 0, 250));
  t.is(parseInstant('2026-11-20T23:00:00-02:00'), Date.UTC(2026, 10, 21, 1));
  t.is(parseInstant('2026-11-20'), Date.UTC(2026, 10, 20));
  // Finer than a millisecond: up to the next one (times are stored in whole milliseconds).
  t.is(parseInstant('2026-11-20T00:00:00.2501Z'), Date.UTC(2026, 10, 20, 0, 0, 0, 251));
  t.is(parseInstant('2026-11-20T00:00:00.250000000Z'), Date.UTC(2026, 10, 20, 0, 0, 0, 250));
  t.is(parseInstant('2026-11-20T00:00:00.999999Z'), Date.UTC(2026, 10, 20, 0, 0, 1));
  for (const bad of ['2026-11-20T23:00:00+24:00', '2026-11-20T23:00:00+01:60']) t.is(parseInstant(bad), null, bad);
  // Years below 100 are years, as their date-times are (Date.UTC would read 0001 as 1901).
  t.is(parseInstant('0001-01-01'), parseInstant('0001-01-01T00:00:00Z'));
  t.is(parseInstant('0099-12-31'), parseInstant('0099-12-31T00:00:00Z'));
  t.is(parseInstant('0004-02-29T00:00:00Z'), new Date(0).setUTCFullYear(4, 1, 29));
  for (const yearZero of ['0000-01-01', '0000-02-29T00:00:00Z']) t.is(parseInstant(yearZero), null, yearZero);
  // Out of years 1 to 9999 once the offset is applied.
  for (const outside of ['0001-01-01T00:30:00+01:00', '9999-12-31T23:59:59-01:00']) t.is(parseInstant(outside), null, outside);
  t.not(parseInstant('9999-12-31T23:59:59Z'), null);
  t.is(parseInstant('9999-12-31T23:59:59.9999Z'), parseInstant('9999-12-31T23:59:59.999Z'), 'rounded up, not into year 10000');
  for (const bad of ['2026-11-20T00:00:00', '2026-11-20 00:00:00Z', '2026-02-30', '2026-02-30T00:00:00Z', '2026-11-20T24:00:00Z', '20261120', 'yesterday', '2026-11-20T00:00:60Z', '2026-13-01']) {
    t.is(parseInstant(bad), null, bad);
  }
});

test('a backtest request: version optional, limit defaults to the maximum', (t) => {
  const checked = parseBacktestRequest({ from: '2026-11-01', to: '2026-11-08' });
  t.deepEqual(checked, { ok: true, value: { version: null, from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 8), limit: 1_000_000 } });
  t.like(parseBacktestRequest({ from: '2026-11-01', to: '2026-11-08', version: null, limit: 5 }), { ok: true, value: { version: null, limit: 5 } });
  t.like(parseBacktestRequest({ from: '2026-08-01', to: '2026-11-01' }), { ok: true }, '92 days');
  t.like(parseBacktestRequest({ from: '2026-08-01', to: '2026-11-01T00:00:00.001Z' }), { ok: false, error: { parameter: 'to' } });
});

test('stats ranges: a default from never before year 1', (t) => {
  const checked = parseStatsQuery('to=0001-01-02', Date.now());
  t.true(checked.ok);
  if (checked.ok) t.is(new Date(checked.value.from).toISOString().slice(0, 10), '0001-01-01');
});

test('stats ranges: UTC days, both ends included; the last 7 days by default; at most 31', (t) => {
  const now = Date.UTC(2026, 10, 23, 15);
  const day = (d: number): number => Date.UTC(2026, 10, d);
  t.deepEqual(parseStatsQuery('', now), { ok: true, value: { from: day(17), to: day(23) } });
  t.deepEqual(parseStatsQuery('to=2026-11-10', now), { ok: true, value: { from: day(4), to: day(10) } });
  t.deepEqual(parseStatsQuery('from=2026-11-20', now), { ok: true, value: { from: day(20), to: day(23) } });
  t.deepEqual(parseStatsQuery('from=2026-11-01', now), { ok: true, value: { from: day(1), to: day(7) } });
  t.like(parseStatsQuery(`from=2026-10-01&to=2026-10-${kMaxStatsDays}`, now), { ok: true });
  t.like(parseStatsQuery('from=2026-10-01&to=2026-11-01', now), { ok: false, error: { parameter: 'from' } });
  t.like(parseStatsQuery('from=2026-11-24', now), { ok: false, error: { parameter: 'from' } }, 'from after today, no to');
});

test('the pace of a backtest follows the HTTP thread\'s load: all of the time when idle, what scoring leaves, at least kMinPace', (t) => {
  t.is(pace(0), 1000);
  t.is(pace(0.25), 750);
  t.is(pace(0.5), 500);
  t.is(pace(0.9), kMinPace);
  t.is(pace(1), kMinPace);
  t.is(pace(1.2), kMinPace, 'a measurement a little over 1');
});
