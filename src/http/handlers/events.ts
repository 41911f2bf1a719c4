// POST /v1/events and GET /v1/scores/{event_id}: input checks here, everything else in
// scoring/event-service.ts.
import type { EventReply, EventService } from '../../scoring/event-service.js';
import { apiError } from '../../shared/errors.js';
import { refuseUnknownQuery } from '../../shared/query.js';
import { asksForAsync, validateEventInput } from '../../validation/event-input.js';
import { data, failure, serialized, type Admission, type Handler, type Reply } from '../types.js';

export function createSubmitEventHandler(events: EventService): Handler {
  return async (context) => {
    // The route takes no query parameter: `async` and everything else are body fields.
    const refusal = refuseUnknownQuery(context.query);
    if (refusal !== null) return failure(refusal);
    const checked = validateEventInput(context.body!, context.bodyText);
    if (!checked.ok) return failure(checked.error);
    const key = context.key!;
    const reply = await events.submit({
      projectId: key.projectId,
      tenantId: key.tenantId,
      environment: key.environment,
      event: checked.event,
      payload: checked.nullsDropped ? JSON.stringify(checked.event) : context.bodyText,
      receivedAt: context.receivedAt,
      clientGone: context.clientGone,
      requestId: context.requestId,
    });
    return replyOf(reply);
  };
}

/**
 * At capacity, an event is refused before its body is checked (docs/events.md, "Overload"): under
 * overload most requests are refused, and validating each first would cost more than the
 * refusal, and a body that would get 400 gets the same 503 as a valid one. Only a body that may
 * ask for async scoring is parsed, for its refusal to say ASYNC_UNAVAILABLE when it does.
 */
export function createSubmitEventAdmission(events: EventService): Admission {
  return (body, key) => (key !== null && events.atCapacity(key.environment) ? replyOf(events.refuseAtCapacity(asksForAsync(body))) : null);
}

function replyOf(reply: EventReply): Reply {
  switch (reply.kind) {
    case 'result':
      return serialized(reply.json);
    case 'receipt':
      return data(reply.receipt, 202);
    case 'error':
      return reply.retryAfterSeconds === undefined ? failure(reply.error) : failure(reply.error, [['Retry-After', String(reply.retryAfterSeconds)]]);
    case 'dropped':
      return { kind: 'gone' };
  }
}

export function createReadScoreHandler(events: EventService): Handler {
  return (context) => {
    const refusal = refuseUnknownQuery(context.query);
    if (refusal !== null) return failure(refusal);
    const found = events.read(context.key!.projectId, context.params.event_id!);
    if (found === null) return failure(apiError('NOT_FOUND', 'No event with this event_id in this project.', 'event_id'));
    return found.kind === 'stored' ? serialized(found.json) : data(found.body);
  };
}
