// PUT and DELETE /v1/events/{event_id}/label and GET /v1/events/{event_id} (docs/events.md).
import { parseLabel } from '../../labels/labels-request.js';
import type { LabelsService } from '../../labels/labels-service.js';
import { parseNoQuery } from '../../rulesets/rules-request.js';
import { data, failure, serialized, type Handler } from '../types.js';

export interface LabelsHandlers {
  readonly labelEvent: Handler;
  readonly unlabelEvent: Handler;
  readonly readEvent: Handler;
}

export function createLabelsHandlers(labels: LabelsService): LabelsHandlers {
  return {
    labelEvent: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const change = parseLabel(context.body!);
      if (!change.ok) return failure(change.error);
      const answer = await labels.label(context.key!.projectId, context.params.event_id!, change.value, context.key!.keyId);
      return answer.ok ? data(answer.body) : failure(answer.error);
    },
    unlabelEvent: async (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const answer = await labels.unlabel(context.key!.projectId, context.params.event_id!, context.key!.keyId);
      return answer.ok ? data(answer.body) : failure(answer.error);
    },
    readEvent: (context) => {
      const refusal = parseNoQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const answer = labels.read(context.key!.projectId, context.params.event_id!);
      return answer.ok ? serialized(answer.json) : failure(answer.error);
    },
  };
}
