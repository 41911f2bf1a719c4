// The bounds of an external_account_id, apart from the event schema: the writer thread checks
// account ids too and should not load (and compile) ajv for it. Pure: no I/O.
import { characterLength } from '../shared/text.js';

/** The interface's limit on external_account_id, in characters. */
export const kMaxExternalIdLength = 64;

/** Whether `id` (as /v1/accounts/{id} gives it, percent-decoded) could be an external_account_id. */
export function couldBeExternalId(id: string): boolean {
  return id.length >= 1 && characterLength(id) <= kMaxExternalIdLength;
}
