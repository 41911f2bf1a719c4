// Operator routes: health and metrics. No key: they are for the operator's own network
// (see README, "Production checklist").
import type { Metrics } from '../../shared/metrics.js';
import { data, raw, type Handler } from '../types.js';

export interface HealthState {
  readonly startedAt: number;
  readonly version: string;
  isDraining(): boolean;
}

export function createHealthHandler(state: HealthState, now: () => number): Handler {
  return () =>
    data({
      status: state.isDraining() ? 'draining' : 'ok',
      version: state.version,
      uptime_seconds: Math.floor((now() - state.startedAt) / 1000),
    });
}

export function createMetricsHandler(metrics: Metrics): Handler {
  return async () => raw(200, metrics.contentType, await metrics.render());
}
