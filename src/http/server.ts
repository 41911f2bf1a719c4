// The uWebSockets.js front end: one catch-all uWS route feeds every request through the same
// pipeline, in this order:
//
//   route match (404 / 405) → authentication (401, 429 failed lookups) → scope (403) →
//   live-only (403) → rate limit (429, 503) → body (413, 400) → handler → envelope
//
// uWS rules this file keeps (uWS docs/index.d.ts): the HttpRequest is valid only inside the
// synchronous callback, so every header is read before anything asynchronous; onAborted is
// attached first; onData chunks are copied, because uWS reuses their memory; every write after an
// await happens inside res.cork().
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import {
  App,
  us_listen_socket_close,
  us_socket_local_port,
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_listen_socket,
} from 'uWebSockets.js';
import { parseApiKey } from '../auth/api-keys.js';
import type { AuthenticatedKey, KeyRegistry } from '../auth/key-registry.js';
import { apiError, isApiError, type ApiError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { Metrics } from '../shared/metrics.js';
import { parseJsonObjectBody, type JsonObject } from '../validation/json-body.js';
import { failureBody, isWellFormedRequestId, serializedSuccessBody, statusLine, successBody } from './envelope.js';
import { FixedWindowCounter, type LimitVerdict } from './rate-limiter.js';
import { Router, type HttpMethod } from './router.js';
import type { ExtraHeaders, Reply, RequestContext, RouteDefinition } from './types.js';

export interface RateLimitSettings {
  readonly windowSeconds: number;
  readonly perRoute: number;
  readonly fpPerKey: number;
  readonly fpPerKeyAndAddress: number;
  readonly failedKeyLookups: number;
}

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  readonly trustProxy: boolean;
  readonly rateLimits: RateLimitSettings;
  readonly routes: readonly RouteDefinition[];
  readonly keys: KeyRegistry;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly now?: () => number;
  /** False while the limiter cannot count (answers 503 RATE_LIMIT_UNAVAILABLE). */
  readonly rateLimiterReady?: () => boolean;
}

const kJson = 'application/json';
const kCorsAllowHeaders = 'Authorization, Content-Type, x-request-id';
const kCorsExposeHeaders = 'x-request-id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';
const kCorsMaxAgeSeconds = '600';
const kNoHeaders: ExtraHeaders = [];
const kUnmatchedLabel = 'unmatched';

interface CompiledRoute extends RouteDefinition {
  /** "POST /v1/events": the metrics label and the rate-limit counter name. */
  readonly label: string;
}

/** One request and its response: tracks abort and completion so nothing is written twice. */
class Exchange {
  readonly res: HttpResponse;
  readonly started: number;
  requestId = '';
  routeLabel = kUnmatchedLabel;
  /** Origin to reflect in Access-Control-Allow-Origin ('' for none). */
  corsOrigin = '';
  aborted = false;
  finished = false;
  #address: string | null = null;

  constructor(res: HttpResponse, started: number) {
    this.res = res;
    this.started = started;
  }

  socketAddress(): string {
    this.#address ??= Buffer.from(this.res.getRemoteAddressAsText()).toString();
    return this.#address;
  }
}

export class HttpServer {
  readonly #options: HttpServerOptions;
  readonly #router: Router<CompiledRoute>;
  readonly #limits: FixedWindowCounter;
  readonly #failedLookups: FixedWindowCounter;
  readonly #now: () => number;
  readonly #rateLimiterReady: () => boolean;
  #app: TemplatedApp | null = null;
  #listenSocket: us_listen_socket | null = null;
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#rateLimiterReady = options.rateLimiterReady ?? (() => true);
    this.#router = new Router(options.routes.map((route) => ({ ...route, label: `${route.method} ${route.pattern}` })));
    this.#limits = new FixedWindowCounter(options.rateLimits.windowSeconds, this.#now);
    this.#failedLookups = new FixedWindowCounter(options.rateLimits.windowSeconds, this.#now);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(): Promise<number> {
    const app = App();
    app.any('/*', (res, req) => this.#onRequest(res, req));
    this.#app = app;
    return new Promise((resolve, reject) => {
      app.listen(this.#options.host, this.#options.port, (listenSocket) => {
        if (!listenSocket) {
          reject(new Error(`cannot listen on ${this.#options.host}:${this.#options.port}`));
          return;
        }
        this.#listenSocket = listenSocket;
        resolve(us_socket_local_port(listenSocket));
      });
    });
  }

  /**
   * Stops accepting connections and resolves once every request in flight has been answered
   * (or `timeoutMs` passed). Keep-alive connections may still deliver requests meanwhile; they
   * are served and counted like the others.
   */
  drain(timeoutMs: number): Promise<void> {
    if (this.#listenSocket !== null) {
      us_listen_socket_close(this.#listenSocket);
      this.#listenSocket = null;
    }
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Closes every remaining connection. */
  close(): void {
    if (this.#listenSocket !== null) us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = null;
    this.#app?.close();
    this.#app = null;
  }

  #onRequest(res: HttpResponse, req: HttpRequest): void {
    const exchange = new Exchange(res, performance.now());
    this.#inFlight++;
    res.onAborted(() => {
      exchange.aborted = true;
      this.#finish(exchange, 499);
    });

    const incomingId = req.getHeader('x-request-id');
    exchange.requestId = incomingId !== '' && isWellFormedRequestId(incomingId) ? incomingId : randomUUID();
    const method = req.getCaseSensitiveMethod();
    const path = req.getUrl();
    const match = this.#router.match(method, path);

    if (match.kind !== 'found') {
      if (match.kind === 'method_not_allowed') {
        if (method === 'OPTIONS' && match.routes.some((route) => route.cors)) {
          this.#answerPreflight(exchange, req.getHeader('origin'), match.allowed);
          return;
        }
        const allow = match.allowed.join(', ');
        this.#send(exchange, 405, kJson, failureBody([apiError('NOT_FOUND', `Method ${method} is not allowed here; allowed: ${allow}.`)]), [['Allow', allow]]);
        return;
      }
      this.#send(exchange, 404, kJson, failureBody([apiError('NOT_FOUND', `No route for ${method} ${path}.`)]), kNoHeaders);
      return;
    }

    const route = match.route;
    exchange.routeLabel = route.label;
    // Everything needed from the request, read now: `req` dies when this callback returns.
    const authorization = route.auth === 'key' ? req.getHeader('authorization') : '';
    const contentLength = route.body === 'none' ? '' : req.getHeader('content-length');
    const origin = route.cors ? req.getHeader('origin') : '';
    const forwardedFor = this.#options.trustProxy ? req.getHeader('x-forwarded-for') : '';
    const query = req.getQuery() ?? '';
    const addressOf = (): string => this.#callerAddress(exchange, forwardedFor);

    // Pages may read the answers of CORS routes, errors included (a page with a revoked key sees
    // 401, not a failed fetch); only a refused origin gets no Access-Control-Allow-Origin.
    if (route.cors) exchange.corsOrigin = origin;
    let key: AuthenticatedKey | null = null;
    if (route.auth === 'key') {
      const outcome = this.#authenticate(authorization, addressOf);
      if (!outcome.ok) {
        this.#sendError(exchange, outcome.error, outcome.headers);
        return;
      }
      key = outcome.key;
      const refusal = this.#authorize(route, key, origin);
      if (refusal !== null) {
        if (refusal.parameter === 'origin') exchange.corsOrigin = '';
        this.#sendError(exchange, refusal, kNoHeaders);
        return;
      }
      const limited = this.#rateLimit(route, key, addressOf);
      if (limited !== null) {
        this.#sendError(exchange, limited.error, limited.headers);
        return;
      }
    }

    const start = (body: JsonObject | null, bodyText: string): void => {
      const context: RequestContext = {
        requestId: exchange.requestId,
        method: route.method,
        path,
        query,
        params: match.params,
        key,
        address: route.rateLimit === 'fp' ? addressOf() : '',
        origin,
        body,
        bodyText,
        receivedAt: this.#now(),
        clientGone: () => exchange.aborted,
      };
      this.#invoke(exchange, route, context);
    };

    if (route.body === 'none') {
      start(null, '');
      return;
    }
    this.#readBody(exchange, route, contentLength, start);
  }

  #callerAddress(exchange: Exchange, forwardedFor: string): string {
    if (forwardedFor !== '') {
      // The last hop is the one our own proxy appended; earlier hops are the client's to invent.
      const lastHop = forwardedFor.slice(forwardedFor.lastIndexOf(',') + 1).trim();
      if (isIP(lastHop) !== 0) return lastHop;
    }
    return exchange.socketAddress();
  }

  #authenticate(
    authorization: string,
    addressOf: () => string,
  ): { ok: true; key: AuthenticatedKey } | { ok: false; error: ApiError; headers: ExtraHeaders } {
    if (authorization === '') {
      return { ok: false, error: apiError('AUTH_ERROR', 'Missing Authorization header; send Authorization: Bearer <API key>.', 'authorization'), headers: kNoHeaders };
    }
    const space = authorization.indexOf(' ');
    const scheme = space === -1 ? authorization : authorization.slice(0, space);
    const token = space === -1 ? '' : authorization.slice(space + 1).trim();
    if (scheme.toLowerCase() !== 'bearer' || parseApiKey(token) === null) {
      return { ok: false, error: apiError('AUTH_ERROR', 'Malformed Authorization header; expected Bearer <kind>_<environment>_<22 characters>.', 'authorization'), headers: kNoHeaders };
    }
    const key = this.#options.keys.lookup(token);
    if (key !== null) return { ok: true, key };
    const verdict = this.#failedLookups.hit(addressOf(), this.#options.rateLimits.failedKeyLookups);
    if (!verdict.allowed) {
      // Interface, Limits rule 3: only Retry-After, so the limit itself is not advertised.
      return { ok: false, error: apiError('RATE_LIMIT_EXCEEDED', 'Too many failed key lookups from this address.'), headers: [['Retry-After', String(verdict.resetSeconds)]] };
    }
    return { ok: false, error: apiError('AUTH_ERROR', 'Unknown or revoked API key.', 'authorization'), headers: kNoHeaders };
  }

  #authorize(route: CompiledRoute, key: AuthenticatedKey, origin: string): ApiError | null {
    if (route.scope !== null && !key.scopes.has(route.scope)) {
      return apiError('SCOPE_ERROR', `This key lacks the scope ${route.scope}, which ${route.label} needs.`);
    }
    if (route.liveOnly && key.environment !== 'live') return apiError('SANDBOX_KEY_FORBIDDEN');
    if (route.cors && key.allowedOrigins !== null && !key.allowedOrigins.includes(origin)) {
      return apiError('SCOPE_ERROR', 'This key may not be used from this origin.', 'origin');
    }
    return null;
  }

  #rateLimit(
    route: CompiledRoute,
    key: AuthenticatedKey,
    addressOf: () => string,
  ): { error: ApiError; headers: ExtraHeaders } | null {
    if (route.rateLimit === 'none') return null;
    if (!this.#rateLimiterReady()) return { error: apiError('RATE_LIMIT_UNAVAILABLE'), headers: kNoHeaders };
    const limits = this.#options.rateLimits;
    if (route.rateLimit === 'route') {
      return limitExceeded(this.#limits.hit(`${key.keyId} ${route.label}`, limits.perRoute));
    }
    // The per-address limit first: what one address sends above its own limit must not use up the
    // budget of a publishable key that every shopper of the site shares.
    return (
      limitExceeded(this.#limits.hit(`fp ${key.keyId} ${addressOf()}`, limits.fpPerKeyAndAddress)) ??
      limitExceeded(this.#limits.hit(`fp ${key.keyId}`, limits.fpPerKey))
    );
  }

  #readBody(exchange: Exchange, route: CompiledRoute, contentLength: string, start: (body: JsonObject | null, bodyText: string) => void): void {
    const limit = route.bodyLimit;
    const declared = contentLength === '' ? -1 : Number(contentLength);
    if (declared > limit) {
      this.#refuseTooLarge(exchange, limit, false);
      return;
    }
    // With a declared length the body is copied once into a buffer of exactly that size;
    // chunked bodies are collected, each chunk copied, and joined at the end.
    const exact = declared >= 0 ? Buffer.allocUnsafe(declared) : null;
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    exchange.res.onData((chunk, isLast) => {
      if (done || exchange.aborted) return;
      received += chunk.byteLength;
      if (received > limit || (exact !== null && received > exact.length)) {
        done = true;
        this.#refuseTooLarge(exchange, limit, declared < 0);
        return;
      }
      if (exact !== null) exact.set(new Uint8Array(chunk), received - chunk.byteLength);
      else if (chunk.byteLength > 0) chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      done = true;
      const bytes = exact !== null ? exact.subarray(0, received) : Buffer.concat(chunks, received);
      if (bytes.length === 0 && route.body === 'optional-json') {
        start({}, '');
        return;
      }
      const parsed = parseJsonObjectBody(bytes);
      if (!parsed.ok) {
        this.#sendError(exchange, parsed.error, kNoHeaders);
        return;
      }
      start(parsed.value, parsed.text);
    });
  }

  /**
   * Answers 413 without reading further. With a declared Content-Length, uWS skips the rest of the
   * body as it arrives (nothing is kept) and the connection stays usable, so a client still
   * uploading reads the answer instead of a reset. A chunked body has no known end: the
   * connection is closed after the answer.
   */
  #refuseTooLarge(exchange: Exchange, limit: number, closeConnection: boolean): void {
    const error = apiError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes, the limit of this route.`, 'body');
    this.#send(exchange, error.status, kJson, failureBody([error]), kNoHeaders, closeConnection);
  }

  #invoke(exchange: Exchange, route: CompiledRoute, context: RequestContext): void {
    let result: Reply | Promise<Reply>;
    try {
      result = route.handler(context);
    } catch (error) {
      this.#internalError(exchange, error);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (reply) => this.#reply(exchange, reply),
        (error: unknown) => this.#internalError(exchange, error),
      );
    } else {
      this.#reply(exchange, result);
    }
  }

  #reply(exchange: Exchange, reply: Reply): void {
    const headers = reply.headers ?? kNoHeaders;
    if (reply.kind === 'data') this.#send(exchange, reply.status, kJson, successBody(reply.data), headers);
    else if (reply.kind === 'json') this.#send(exchange, reply.status, kJson, serializedSuccessBody(reply.json), headers);
    else if (reply.kind === 'error') this.#sendError(exchange, reply.error, headers);
    else this.#send(exchange, reply.status, reply.contentType, reply.body, headers);
  }

  #internalError(exchange: Exchange, error: unknown): void {
    if (isApiError(error)) {
      this.#sendError(exchange, error, kNoHeaders);
      return;
    }
    this.#options.log.error('request failed', { request_id: exchange.requestId, route: exchange.routeLabel, error });
    this.#sendError(exchange, apiError('INTERNAL_ERROR'), kNoHeaders);
  }

  #sendError(exchange: Exchange, error: ApiError, headers: ExtraHeaders): void {
    this.#send(exchange, error.status, kJson, failureBody([error]), headers);
  }

  #answerPreflight(exchange: Exchange, origin: string, allowed: readonly HttpMethod[]): void {
    exchange.routeLabel = 'OPTIONS preflight';
    const headers: Array<[string, string]> = [
      ['Access-Control-Allow-Methods', allowed.join(', ')],
      ['Access-Control-Allow-Headers', kCorsAllowHeaders],
      ['Access-Control-Max-Age', kCorsMaxAgeSeconds],
    ];
    // Preflights carry no key, so they cannot be checked against a key's origins: the real
    // request is, and is refused without Access-Control-Allow-Origin when the origin is not listed.
    exchange.corsOrigin = origin;
    this.#send(exchange, 200, kJson, successBody({ methods: allowed }), headers);
  }

  #send(exchange: Exchange, status: number, contentType: string, body: string, headers: ExtraHeaders, closeConnection = false): void {
    if (exchange.finished) return;
    if (!exchange.aborted) {
      const res = exchange.res;
      res.cork(() => {
        res.writeStatus(statusLine(status));
        res.writeHeader('Content-Type', contentType);
        res.writeHeader('x-request-id', exchange.requestId);
        if (exchange.corsOrigin !== '') {
          res.writeHeader('Access-Control-Allow-Origin', exchange.corsOrigin);
          res.writeHeader('Access-Control-Expose-Headers', kCorsExposeHeaders);
          res.writeHeader('Vary', 'Origin');
        }
        for (let i = 0; i < headers.length; i++) res.writeHeader(headers[i]![0], headers[i]![1]);
        res.end(body, closeConnection);
      });
    }
    this.#finish(exchange, status);
  }

  #finish(exchange: Exchange, status: number): void {
    if (exchange.finished) return;
    exchange.finished = true;
    this.#options.metrics.recordRequest(exchange.routeLabel, status, (performance.now() - exchange.started) / 1000);
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }
}

function limitExceeded(verdict: LimitVerdict): { error: ApiError; headers: ExtraHeaders } | null {
  if (verdict.allowed) return null;
  const reset = String(verdict.resetSeconds);
  return {
    error: apiError('RATE_LIMIT_EXCEEDED'),
    headers: [
      ['Retry-After', reset],
      ['RateLimit-Limit', String(verdict.limit)],
      ['RateLimit-Remaining', String(verdict.remaining)],
      ['RateLimit-Reset', reset],
    ],
  };
}
