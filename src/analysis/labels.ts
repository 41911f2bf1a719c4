// Labels of events (fraud or legitimate), for precision and recall (PUT /v1/events/{event_id}/label,
// table event_labels of migration 009); this is the one place analysis reads them. A store without
// that table (a copy made before migration 9, read by a test) has no labels: callers then report
// precision and recall as unavailable, never as numbers.
import type { Db } from '../store/database.js';
import type { SeqRange } from './event-range.js';

export type Label = 'fraud' | 'legitimate';

const kHasLabels = new WeakMap<Db, boolean>();

export function labelsStored(db: Db): boolean {
  let has = kHasLabels.get(db);
  if (has === undefined) {
    has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event_labels'").get() !== undefined;
    kHasLabels.set(db, has);
  }
  return has;
}

/**
 * The labels of the project's events that arrived in [from, to) (within `range`, their seq
 * range): event id → label. null when the store keeps no labels.
 */
export function labelsOf(db: Db, projectId: string, range: SeqRange, from: number, to: number): Map<string, Label> | null {
  if (!labelsStored(db)) return null;
  const rows = db.prepare(
    `SELECT l.event_id, l.label FROM event_labels l JOIN events e ON e.project_id = l.project_id AND e.event_id = l.event_id
     WHERE l.project_id = ? AND e.seq BETWEEN ? AND ? AND e.received_at >= ? AND e.received_at < ?`,
  ).all(projectId, range.low, range.high, from, to) as Array<{ event_id: string; label: Label }>;
  return new Map(rows.map((row) => [row.event_id, row.label]));
}

export interface PrecisionRecall {
  readonly precision: number | null;
  readonly recall: number | null;
}

/**
 * Precision: of the labelled events flagged, the share labelled fraud. Recall: of the events
 * labelled fraud, the share flagged. null where nothing was there to divide by. Four decimals.
 */
export function precisionRecall(flaggedFraud: number, flaggedLegitimate: number, fraud: number): PrecisionRecall {
  const round = (value: number): number => Math.round(value * 10_000) / 10_000;
  const flagged = flaggedFraud + flaggedLegitimate;
  return { precision: flagged === 0 ? null : round(flaggedFraud / flagged), recall: fraud === 0 ? null : round(flaggedFraud / fraud) };
}
