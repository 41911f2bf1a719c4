// Operator routes: health and metrics. No key: they are for the operator's own network
// (see README, "Production checklist").
import { apiError } from '../../shared/errors.js';
import type { Metrics } from '../../shared/metrics.js';
import { data, failure, raw, type Handler } from '../types.js';

export interface HealthState {
  readonly startedAt: number;
  readonly version: string;
  isDraining(): boolean;
  /** Why the database cannot be written (writer.storageFailure), or null. */
  storageFailure(): string | null;
  /** Asks for a write that shows whether it can be again (store/write-probe.ts). */
  probeStorage(): void;
}

export function createHealthHandler(state: HealthState, now: () => number): Handler {
  return () => {
    const storage = state.storageFailure();
    if (storage !== null) {
      // Every event fails meanwhile: a load balancer should send them elsewhere. The probe lets a
      // later check see the recovery without events to show it.
      state.probeStorage();
      return failure(apiError('INTERNAL_ERROR', `The database cannot be written (${storage}); events fail until it can. Check the disk and the data dir (docs/operations.md, "Health").`));
    }
    return data({
      status: state.isDraining() ? 'draining' : 'ok',
      version: state.version,
      uptime_seconds: Math.floor((now() - state.startedAt) / 1000),
    });
  };
}

export function createMetricsHandler(metrics: Metrics): Handler {
  return async () => raw(200, metrics.contentType, await metrics.render());
}
