// What a route handler sees and returns. Handlers are plain functions of a RequestContext: they
// never touch the uWS request or response, so they can be read (and tested) without a socket.
import type { AuthenticatedKey } from '../auth/key-registry.js';
import type { Scope } from '../auth/api-keys.js';
import type { ApiError } from '../shared/errors.js';
import type { JsonObject } from '../validation/json-body.js';
import type { HttpMethod } from './router.js';

export interface RequestContext {
  readonly requestId: string;
  readonly method: HttpMethod;
  readonly path: string;
  /** The raw query string, without '?'. */
  readonly query: string;
  readonly params: Readonly<Record<string, string>>;
  /** The authenticated key; null only on routes with `auth: 'none'`. */
  readonly key: AuthenticatedKey | null;
  /**
   * The caller address (the socket peer, or the last X-Forwarded-For hop with TRUST_PROXY on), on
   * routes limited per address (fp); '' elsewhere, where nothing needs it and reading it costs.
   */
  readonly address: string;
  /** The Origin header ('' when absent); read only on CORS routes. */
  readonly origin: string;
  /** The parsed JSON object body on routes with a body; null otherwise. */
  readonly body: JsonObject | null;
  /** The body text as received ('' without a body). */
  readonly bodyText: string;
  /** Wall-clock time the request arrived (epoch ms). */
  readonly receivedAt: number;
  /** True once the client has gone (the connection closed before the answer). */
  readonly clientGone: () => boolean;
}

export type ExtraHeaders = ReadonlyArray<readonly [string, string]>;

export type Reply =
  | { readonly kind: 'data'; readonly status: number; readonly data: unknown; readonly headers?: ExtraHeaders }
  /** Success with `data` already serialised (a stored result answered again byte for byte). */
  | { readonly kind: 'json'; readonly status: number; readonly json: string; readonly headers?: ExtraHeaders }
  | { readonly kind: 'error'; readonly error: ApiError; readonly headers?: ExtraHeaders }
  /** A non-envelope answer: Prometheus text, the browser agent script. */
  | { readonly kind: 'raw'; readonly status: number; readonly contentType: string; readonly body: string; readonly headers?: ExtraHeaders }
  /** No answer: the client hung up, and the front end counted the request (499) when it did. */
  | { readonly kind: 'gone' };

export type Handler = (context: RequestContext) => Reply | Promise<Reply>;

/**
 * Runs on a route's raw body once it has arrived, before it is decoded and parsed: a Reply is the
 * answer (a refusal at the door, cheaper than parsing what would be refused anyway); null goes on.
 */
export type Admission = (body: Buffer, key: AuthenticatedKey | null) => Reply | null;

export type RateLimitClass =
  /** Per key and per method and route pattern. */
  | 'route'
  /** POST /v1/fp/collect: per key, and per key and caller address. */
  | 'fp'
  | 'none';

export interface RouteDefinition {
  readonly method: HttpMethod;
  readonly pattern: string;
  /** 'key': Authorization: Bearer <key> required. 'none': open (health, metrics, agent script). */
  readonly auth: 'key' | 'none';
  readonly scope: Scope | null;
  /** A second scope the key must hold as well (GET /v1/audit: rules:read and cases:read). */
  readonly alsoScope: Scope | null;
  /** Refuses sandbox keys with 403 SANDBOX_KEY_FORBIDDEN. */
  readonly liveOnly: boolean;
  /** 'json': a JSON object body is required. 'optional-json': an empty body reads as {}. */
  readonly body: 'json' | 'optional-json' | 'none';
  readonly bodyLimit: number;
  readonly rateLimit: RateLimitClass;
  /** Cross-origin callable from web pages: answers preflight, adds Access-Control-* headers. */
  readonly cors: boolean;
  /** The route reads no query (a browser's cache busters): its escapes are not checked either. */
  readonly ignoresQuery: boolean;
  readonly admit: Admission | null;
  readonly handler: Handler;
}

export function data(payload: unknown, status = 200, headers?: ExtraHeaders): Reply {
  return headers === undefined ? { kind: 'data', status, data: payload } : { kind: 'data', status, data: payload, headers };
}

export function serialized(json: string, status = 200, headers?: ExtraHeaders): Reply {
  return headers === undefined ? { kind: 'json', status, json } : { kind: 'json', status, json, headers };
}

export function failure(error: ApiError, headers?: ExtraHeaders): Reply {
  return headers === undefined ? { kind: 'error', error } : { kind: 'error', error, headers };
}

export function raw(status: number, contentType: string, body: string, headers?: ExtraHeaders): Reply {
  return headers === undefined ? { kind: 'raw', status, contentType, body } : { kind: 'raw', status, contentType, body, headers };
}
