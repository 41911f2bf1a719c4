// The body of PUT /v1/events/{event_id}/label, checked into a value or a VALIDATION_ERROR naming the
// field. Pure.
import { apiError, type ApiError } from '../shared/errors.js';
import { characterLength, isOnlyWhiteSpace } from '../shared/text.js';
import { kLabelReasons, kLabels, type LabelChange } from './labels-store.js';

export const kMaxLabelNoteLength = 4000;

const kFields = new Set(['label', 'reason', 'note']);

function invalid(parameter: string, message: string): { ok: false; error: ApiError } {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, parameter) };
}

/** "is required:" for a member not sent, "must be" for one sent with another value. */
function missingOrWrong(value: unknown): string {
  return value === undefined ? 'is required:' : 'must be';
}

export function parseLabel(body: Readonly<Record<string, unknown>>): { ok: true; value: LabelChange } | { ok: false; error: ApiError } {
  for (const name of Object.keys(body)) {
    if (!kFields.has(name)) return invalid(name, `${name} is not a field of a label; the fields are label, reason and note.`);
  }
  if (!(kLabels as readonly unknown[]).includes(body.label)) return invalid('label', `label ${missingOrWrong(body.label)} ${kLabels.join(' or ')}.`);
  if (!(kLabelReasons as readonly unknown[]).includes(body.reason)) return invalid('reason', `reason ${missingOrWrong(body.reason)} one of ${kLabelReasons.join(', ')}.`);
  let note: string | null = null;
  if (body.note !== undefined && body.note !== null) {
    if (typeof body.note !== 'string' || isOnlyWhiteSpace(body.note) || characterLength(body.note) > kMaxLabelNoteLength) {
      return invalid('note', `note must be a string of 1 to ${kMaxLabelNoteLength} characters, not only white space, or null for none.`);
    }
    note = body.note;
  }
  return { ok: true, value: { label: body.label as LabelChange['label'], reason: body.reason as LabelChange['reason'], note } };
}
