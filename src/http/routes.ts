// The whole HTTP API in one table: method, path pattern, authentication, scope, body and its cap,
// rate-limit class, and handler. The server (server.ts) applies each column in the same order for
// every route; nothing about a route is decided anywhere else.
import type { Scope } from '../auth/api-keys.js';
import type { LabelsHandlers } from './handlers/labels.js';
import type { ListsHandlers } from './handlers/lists.js';
import type { AnalysisHandlers } from './handlers/analysis.js';
import type { RulesHandlers } from './handlers/rules.js';
import type { WebhookHandlers } from './handlers/webhooks.js';
import type { HttpMethod } from './router.js';
import type { Admission, Handler, RateLimitClass, RouteDefinition } from './types.js';

/** Default body cap (interface, Limits). */
export const kDefaultBodyLimit = 1024 * 1024;
/** Body cap of POST /v1/fp/collect (interface, Limits). */
export const kFingerprintBodyLimit = 64 * 1024;
/**
 * Body cap of POST /v1/lists/{list_id}/items: 10,000 items with notes of their own do not fit in
 * 1 MiB (docs/lists.md).
 */
export const kListItemsBodyLimit = 4 * 1024 * 1024;

export interface RouteHandlers extends RulesHandlers, AnalysisHandlers, WebhookHandlers, ListsHandlers, LabelsHandlers {
  readonly health: Handler;
  readonly metrics: Handler;
  readonly submitEvent: Handler;
  readonly admitEvent: Admission;
  readonly readScore: Handler;
  readonly accountLinks: Handler;
  readonly eraseAccount: Handler;
  readonly listCases: Handler;
  readonly readCase: Handler;
  readonly changeCase: Handler;
  readonly fpCollect: Handler;
  readonly fpAgent: Handler;
  readonly audit: Handler;
}

type Auth = RouteDefinition['auth'];
type Body = RouteDefinition['body'];

interface Extras {
  readonly liveOnly?: boolean;
  readonly cors?: boolean;
  readonly ignoresQuery?: boolean;
  readonly alsoScope?: Scope;
  readonly admit?: Admission;
}

function row(
  method: HttpMethod, pattern: string, auth: Auth, scope: Scope | null, body: Body, bodyLimit: number,
  rateLimit: RateLimitClass, handler: Handler, extras: Extras = {},
): RouteDefinition {
  return {
    method, pattern, auth, scope, body, bodyLimit, rateLimit, handler,
    liveOnly: extras.liveOnly ?? false, cors: extras.cors ?? false, alsoScope: extras.alsoScope ?? null, admit: extras.admit ?? null,
    // The keyless routes read no query (health probes, the agent's cache busters).
    ignoresQuery: extras.ignoresQuery ?? auth === 'none',
  };
}

const kMiB = kDefaultBodyLimit;

export function buildRouteTable(h: RouteHandlers): RouteDefinition[] {
  return [
    //  method     pattern                   auth    scope             body    cap                    rate     handler
    row('GET',    '/healthz',                'none', null,             'none', kMiB,                  'none',  h.health),
    row('GET',    '/metrics',                'none', null,             'none', kMiB,                  'none',  h.metrics),
    row('POST',   '/v1/events',              'key',  'events:write',   'json', kMiB,                  'route', h.submitEvent, { admit: h.admitEvent }),
    row('GET',    '/v1/scores/:event_id',    'key',  'scores:read',    'none', kMiB,                  'route', h.readScore),
    row('GET',    '/v1/accounts/:id/links',  'key',  'accounts:read',  'none', kMiB,                  'route', h.accountLinks),
    row('DELETE', '/v1/accounts/:id',        'key',  'accounts:erase', 'none', kMiB,                  'route', h.eraseAccount, { liveOnly: true }),
    row('GET',    '/v1/cases',               'key',  'cases:read',     'none', kMiB,                  'route', h.listCases),
    row('GET',    '/v1/cases/:case_id',      'key',  'cases:read',     'none', kMiB,                  'route', h.readCase),
    row('PATCH',  '/v1/cases/:case_id',      'key',  'cases:write',    'json', kMiB,                  'route', h.changeCase),
    // The event behind a case, and its label (docs/events.md): the analyst's routes.
    row('GET',    '/v1/events/:event_id',    'key',  'cases:read',     'none', kMiB,                  'route', h.readEvent),
    row('PUT',    '/v1/events/:event_id/label', 'key', 'cases:write',  'json', kMiB,                  'route', h.labelEvent),
    row('DELETE', '/v1/events/:event_id/label', 'key', 'cases:write',  'none', kMiB,                  'route', h.unlabelEvent),
    row('POST',   '/v1/fp/collect',          'key',  'fp:write',       'json', kFingerprintBodyLimit, 'fp',    h.fpCollect, { cors: true, ignoresQuery: true }),
    // cors so that pages may load it with integrity= and crossorigin="anonymous" (subresource integrity).
    row('GET',    '/v1/fp/agent.js',         'none', null,             'none', kMiB,                  'none',  h.fpAgent, { cors: true }),
    // Rules API (DESIGN §3, docs/rules-api.md). The static /v1/rules/publish and /v1/rules/backtests
    // win over /v1/rules/:rule_id, so "publish" and "backtests" are refused as rule_ids
    // (rules-request.ts); for the same reason the backtests pattern is listed before the stats one.
    row('GET',    '/v1/rules',               'key',  'rules:read',     'none', kMiB,                  'route', h.listRules),
    row('POST',   '/v1/rules',               'key',  'rules:write',    'json', kMiB,                  'route', h.createRule),
    row('POST',   '/v1/rules/publish',       'key',  'rules:publish',  'optional-json', kMiB,         'route', h.publishRules),
    // Backtests and rule statistics (DESIGN §8, docs/backtests.md).
    row('POST',   '/v1/rules/backtests',     'key',  'rules:read',     'json', kMiB,                  'route', h.startBacktest),
    row('GET',    '/v1/rules/backtests/:backtest_id', 'key', 'rules:read', 'none', kMiB,              'route', h.readBacktest),
    row('GET',    '/v1/rules/:rule_id/stats', 'key', 'rules:read',     'none', kMiB,                  'route', h.ruleStats),
    row('GET',    '/v1/rules/:rule_id',      'key',  'rules:read',     'none', kMiB,                  'route', h.readRule),
    row('PUT',    '/v1/rules/:rule_id',      'key',  'rules:write',    'json', kMiB,                  'route', h.replaceRule),
    row('GET',    '/v1/policy',              'key',  'rules:read',     'none', kMiB,                  'route', h.readPolicy),
    row('PUT',    '/v1/policy',              'key',  'rules:write',    'json', kMiB,                  'route', h.replacePolicy),
    row('GET',    '/v1/rulesets',            'key',  'rules:read',     'none', kMiB,                  'route', h.listRulesets),
    row('GET',    '/v1/rulesets/:version',   'key',  'rules:read',     'none', kMiB,                  'route', h.readRuleset),
    // Block and allow lists (DESIGN §8, docs/lists.md): read with the rules, changed with them.
    row('GET',    '/v1/lists',               'key',  'rules:read',     'none', kMiB,                  'route', h.listLists),
    row('POST',   '/v1/lists',               'key',  'rules:write',    'json', kMiB,                  'route', h.createList),
    row('GET',    '/v1/lists/:list_id',      'key',  'rules:read',     'none', kMiB,                  'route', h.readList),
    row('DELETE', '/v1/lists/:list_id',      'key',  'rules:write',    'none', kMiB,                  'route', h.deleteList),
    row('POST',   '/v1/lists/:list_id/items', 'key', 'rules:write',    'json', kListItemsBodyLimit,   'route', h.addListItems),
    row('POST',   '/v1/lists/:list_id/remove', 'key', 'rules:write',   'json', kListItemsBodyLimit,   'route', h.removeListItems),
    // The audit trail (docs/audit.md): it records rule and list changes and case and label work
    // alike, so reading it takes the read scopes of both (the interface's scope names are fixed).
    row('GET',    '/v1/audit',               'key',  'rules:read',     'none', kMiB,                  'route', h.audit, { alsoScope: 'cases:read' }),
    row('POST',   '/v1/rulesets/:version/restore', 'key', 'rules:publish', 'optional-json', kMiB,     'route', h.restoreRuleset),
    // Webhook deliveries (docs/webhooks.md): a message carries a decision, which scores:read reads;
    // sending one again is part of event intake, which events:write grants.
    row('GET',    '/v1/webhooks/deliveries', 'key',  'scores:read',    'none', kMiB,                  'route', h.listDeliveries),
    row('POST',   '/v1/webhooks/deliveries/:message_id/redeliver', 'key', 'events:write', 'optional-json', kMiB, 'route', h.redeliver),
  ];
}
