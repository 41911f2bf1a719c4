// GET /v1/accounts/{id}/links and DELETE /v1/accounts/{id}.
import type { AccountsService } from '../../accounts/accounts-service.js';
import { apiError } from '../../shared/errors.js';
import { refuseUnknownQuery } from '../../shared/query.js';
import { data, failure, serialized, type Handler } from '../types.js';

export function createLinksHandler(accounts: AccountsService): Handler {
  return (context) => {
    const refusal = refuseUnknownQuery(context.query);
    if (refusal !== null) return failure(refusal);
    const key = context.key!;
    const found = accounts.links(key, context.params.id!);
    return found.ok ? serialized(found.json) : failure(found.error);
  };
}

const kEraseParameters: ReadonlySet<string> = new Set(['across_projects']);

export function createEraseHandler(accounts: AccountsService): Handler {
  return async (context) => {
    const key = context.key!;
    // Refused before anything is read or erased. `across_projects=false` asks for what every
    // DELETE does: clients of earlier builds that send it keep working.
    const refusal = refuseUnknownQuery(context.query, kEraseParameters);
    if (refusal !== null) return failure(refusal);
    const across = new URLSearchParams(context.query).get('across_projects');
    if (across !== null && across !== 'false') return failure(kAcrossProjectsGone());
    const erased = await accounts.erase(key, context.params.id!, false, key.keyId);
    return erased.ok ? data(erased.body) : failure(erased.error);
  };
}

// Earlier builds erased an account that several live projects used with ?across_projects=true, so
// that one project's key erased what the others held. The interface answers such an account 403;
// the operator erases it (docs/accounts.md, "The operator's erasure").
const kAcrossProjectsGone = () => apiError(
  'VALIDATION_ERROR',
  'across_projects takes only false (what every DELETE does): an account that several live projects used is erased by the operator (fraud-scorer accounts erase).',
  'across_projects',
);
