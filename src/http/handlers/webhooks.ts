// GET /v1/webhooks/deliveries and POST /v1/webhooks/deliveries/{message_id}/redeliver.
import { DeliveriesService, parseDeliveryQuery } from '../../webhooks/deliveries.js';
import { apiError } from '../../shared/errors.js';
import { refuseUnknownQuery } from '../../shared/query.js';
import { data, failure, type Handler } from '../types.js';

export interface WebhookHandlers {
  readonly listDeliveries: Handler;
  readonly redeliver: Handler;
}

export function createWebhookHandlers(deliveries: DeliveriesService): WebhookHandlers {
  return {
    listDeliveries: (context) => {
      const query = parseDeliveryQuery(context.query, context.key!.projectId);
      if (!query.ok) return failure(query.error);
      return data(deliveries.list(context.key!.projectId, query.value));
    },
    redeliver: async (context) => {
      const refusal = refuseUnknownQuery(context.query);
      if (refusal !== null) return failure(refusal);
      const extra = Object.keys(context.body ?? {})[0];
      if (extra !== undefined) return failure(apiError('VALIDATION_ERROR', 'A redelivery takes no body (or an empty object).', extra));
      const outcome = await deliveries.redeliver(context.key!.projectId, context.params.message_id!, context.key!.keyId);
      return outcome.ok ? data({ delivery: outcome.value }, 202) : failure(outcome.error);
    },
  };
}
