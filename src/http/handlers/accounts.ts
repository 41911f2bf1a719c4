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
    // Refused before anything is read or erased: a misspelt across_projects erases nothing.
    const refusal = refuseUnknownQuery(context.query, kEraseParameters);
    if (refusal !== null) return failure(refusal);
    const across = new URLSearchParams(context.query).get('across_projects');
    if (across !== null && across !== 'true' && across !== 'false') {
      return failure(apiError('VALIDATION_ERROR', 'across_projects is true or false.', 'across_projects'));
    }
    const erased = await accounts.erase(key, context.params.id!, across === 'true', key.keyId);
    return erased.ok ? data(erased.body) : failure(erased.error);
  };
}
