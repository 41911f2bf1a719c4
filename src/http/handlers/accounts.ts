// GET /v1/accounts/{id}/links and DELETE /v1/accounts/{id}.
import type { AccountsService } from '../../accounts/accounts-service.js';
import { apiError } from '../../shared/errors.js';
import { data, failure, serialized, type Handler } from '../types.js';

export function createLinksHandler(accounts: AccountsService): Handler {
  return (context) => {
    const key = context.key!;
    const found = accounts.links(key, context.params.id!);
    return found.ok ? serialized(found.json) : failure(found.error);
  };
}

export function createEraseHandler(accounts: AccountsService): Handler {
  return async (context) => {
    const key = context.key!;
    const across = new URLSearchParams(context.query).getAll('across_projects');
    if (across.length > 1 || (across.length === 1 && across[0] !== 'true' && across[0] !== 'false')) {
      return failure(apiError('VALIDATION_ERROR', 'across_projects is true or false, given at most once.', 'across_projects'));
    }
    const erased = await accounts.erase(key, context.params.id!, across[0] === 'true', key.keyId);
    return erased.ok ? data(erased.body) : failure(erased.error);
  };
}
