// GET /v1/accounts/{id}/links and DELETE /v1/accounts/{id}.
import type { AccountsService } from '../../accounts/accounts-service.js';
import { data, failure, serialized, type Handler } from '../types.js';

export function createLinksHandler(accounts: AccountsService): Handler {
  return (context) => {
    const key = context.key!;
    const found = accounts.links(key.tenantId, key.projectId, context.params.id!);
    return found.ok ? serialized(found.json) : failure(found.error);
  };
}

export function createEraseHandler(accounts: AccountsService): Handler {
  return async (context) => {
    const key = context.key!;
    const erased = await accounts.erase(key.tenantId, key.projectId, context.params.id!);
    return erased.ok ? data(erased.body) : failure(erased.error);
  };
}
