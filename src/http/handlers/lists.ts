// The lists routes (DESIGN §8, docs/lists.md): GET/POST /v1/lists, GET/DELETE /v1/lists/{list_id},
// POST /v1/lists/{list_id}/items and /remove, for the key's project.
import { parseAddItems, parseCreateList, parseItemsQuery, parseRemoveItems } from '../../lists/lists-request.js';
import type { ListsAnswer, ListsService } from '../../lists/lists-service.js';
import { parseNoQuery } from '../../rulesets/rules-request.js';
import { data, failure, type Handler, type Reply } from '../types.js';

export interface ListsHandlers {
  readonly listLists: Handler;
  readonly createList: Handler;
  readonly readList: Handler;
  readonly deleteList: Handler;
  readonly addListItems: Handler;
  readonly removeListItems: Handler;
}

function reply(answer: ListsAnswer): Reply {
  return answer.ok ? data(answer.body, answer.status) : failure(answer.error);
}

export function createListsHandlers(lists: ListsService): ListsHandlers {
  return {
    listLists: (context) => {
      const refusal = parseNoQuery(context.query);
      return refusal !== null ? failure(refusal) : reply(lists.list(context.key!.projectId));
    },
    createList: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const spec = parseCreateList(context.body!);
      if (!spec.ok) return failure(spec.error);
      return reply(await lists.create(context.key!.projectId, context.key!.keyId, spec.value));
    },
    readList: (context) => {
      const query = parseItemsQuery(context.query, context.key!.projectId, context.params.list_id!);
      return query.ok ? reply(lists.get(context.key!.projectId, context.params.list_id!, query.value)) : failure(query.error);
    },
    deleteList: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      return reply(await lists.delete(context.key!.projectId, context.params.list_id!, context.key!.keyId));
    },
    addListItems: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const items = parseAddItems(context.body!, context.receivedAt);
      if (!items.ok) return failure(items.error);
      return reply(await lists.addItems(context.key!.projectId, context.params.list_id!, context.key!.keyId, items.value));
    },
    removeListItems: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const values = parseRemoveItems(context.body!);
      if (!values.ok) return failure(values.error);
      return reply(await lists.removeItems(context.key!.projectId, context.params.list_id!, context.key!.keyId, values.value));
    },
  };
}
