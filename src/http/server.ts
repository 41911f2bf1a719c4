// The uWebSockets.js front end: one catch-all uWS route feeds every request through the same
// pipeline, in this order:
//
//   framing (400, connection closed) → route match (404 / 405) → authentication (401, 429 failed
//   lookups) → scope (403) → live-only (403) → rate limit (429, 503) → Content-Type (400) →
//   body (413) → the route's admission, on the raw body (503 at capacity) → body (400) → handler
//   → envelope
//
// HEAD is served wherever GET is: the GET handler runs and only the head of its answer is sent.
// Every 5xx is logged with its request id, route and cause; with ACCESS_LOG on, every request is
// one line (never the key, only its id).
//
// What uWebSockets.js answers itself, before any of this runs (431 for headers over 16 KiB, 505 for
// HTTP/1.0 and absolute-form targets, 400 for malformed framing), is listed in
// docs/operations.md ("HTTP edge cases"). It also closes a connection on which a request arrives
// while the previous one is still being answered asynchronously (it serves pipelined requests only
// behind answers given at once), so a request pipelined behind POST /v1/events ends the connection.
//
// uWS rules this file keeps (uWS docs/index.d.ts): the HttpRequest is valid only inside the
// synchronous callback, so every header is read before anything asynchronous; onAborted is
// attached first; onData chunks are copied, because uWS reuses their memory; every write after an
// await happens inside res.cork().
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import './uws-limits.js'; // before uWebSockets.js: it reads the header limit as it loads
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
import { LogBudget, type AccessLog, type Logger } from '../shared/log.js';
import type { Metrics } from '../shared/metrics.js';
import { malformedQueryEscape } from '../shared/query.js';
import { carriesCardNumber } from '../validation/body-scan.js';
import { parseJsonObjectBody, type JsonObject } from '../validation/json-body.js';
import { failureBody, isWellFormedRequestId, serializedSuccessBody, statusLine, successBody } from './envelope.js';
import { framingProblem, isJsonMediaType } from './framing.js';
import { rateLimitSubject } from './rate-limit-subject.js';
import { listenFailureReason } from './listen-error.js';
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
  /** ACCESS_LOG on: called once per request when its answer is sent (or the client went away). */
  readonly accessLog?: AccessLog | null;
}

/**
 * The last X-Forwarded-For line: a proxy may add a line of its own rather than join the client's
 * (HAProxy's `option forwardfor`), and getHeader reads the first, the client's to invent.
 */
function lastForwardedFor(req: HttpRequest): string {
  // Every line looked at: getHeader's '' may be an empty first line the client sent.
  let last = '';
  req.forEach((name, value) => {
    if (name === 'x-forwarded-for') last = value;
  });
  return last;
}

/** Headers a request sent more than once would be read ambiguously (#countHeaders). */
interface HeaderCounts {
  readonly contentLengths: number;
  readonly transferEncodings: string[];
  readonly authorizations: number;
}

/** The front end could not listen; `message` says where and why. */
export class ListenError extends Error {}

const kJson = 'application/json';
const kCorsAllowHeaders = 'Authorization, Content-Type, x-request-id';
const kCorsExposeHeaders = 'x-request-id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';
const kCorsMaxAgeSeconds = '600';
// uWebSockets.js closes a connection idle for ~10 s (its HTTP_IDLE_TIMEOUT_S, swept every 4 s). A
// client that sends on a connection as the server closes it loses that request to a reset; clients
// that honour this hint (undici, Node's agent) drop idle connections before then.
const kKeepAlive = 'timeout=5';
const kNoHeaders: ExtraHeaders = [];
const kRetryInASecond: ExtraHeaders = [['Retry-After', '1']];
// uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT: the module exports it at run time, but its type
// declarations only name it inside an enum the module does not export.
const kListenExclusivePort = 1;
const kUnmatchedLabel = 'unmatched';
const kUnavailableLinesPerSecond = 20;
// RFC 6750 §3: the scheme a 401 asks for; error="invalid_token" when a key was sent but refused.
const kMissingKeyHeaders: ExtraHeaders = [['WWW-Authenticate', 'Bearer realm="fraud-scorer"']];
const kRefusedKeyHeaders: ExtraHeaders = [['WWW-Authenticate', 'Bearer realm="fraud-scorer", error="invalid_token"']];
/** An Origin to reflect in Access-Control-Allow-Origin: '' (none) for one holding a card number, which no answer carries back. */
function echoableOrigin(origin: string): string {
  return carriesCardNumber(origin) ? '' : origin;
}
/** Optional white space around a header's token: spaces and tabs only. */
const kSpacesAround = /^[ \t]+|[ \t]+$/g;

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
  /** The route pattern for the access log ('unmatched' when no route matched). */
  routePattern = kUnmatchedLabel;
  /** As sent (HEAD included); read only for the access log. */
  method = '';
  /** HEAD: the answer is sent without its body. */
  head = false;
  /** The authenticated key's id, for the access log ('' before authentication or without a key). */
  keyId = '';
  /**
   * The answer waits one turn of the event loop and closes the connection (see #send): set for
   * requests with a chunked body and for refused framing.
   */
  closeAfterAnswer = false;
  /** Origin to reflect in Access-Control-Allow-Origin ('' for none). */
  corsOrigin = '';
  /**
   * A CORS route (or its preflight): the answer depends on Origin, so it says so (Vary: Origin)
   * whether or not it allows one, lest a cache in front serve one page's answer to another.
   */
  cors = false;
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
  /** 503 lines per error code and second (every 503 is counted in /metrics all the same). */
  readonly #unavailableLog = new LogBudget(kUnavailableLinesPerSecond, 1000);
  #app: TemplatedApp | null = null;
  #listenSocket: us_listen_socket | null = null;
  /** drain() was called: every answer closes its connection. */
  #draining = false;
  #inFlight = 0;
  /**
   * Route handlers started and not finished. Not the same as #inFlight: a request whose client
   * hung up (or whose connection close() ended) is answered 499 at once, while its handler — an
   * erasure half done, a scoring — still runs.
   */
  #handlersRunning = 0;
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

  /** Route handlers still running, their client gone or not (a stop writes its snapshot only at 0). */
  get handlersRunning(): number {
    return this.#handlersRunning;
  }

  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(): Promise<number> {
    const app = App();
    app.any('/*', (res, req) => this.#onRequest(res, req));
    this.#app = app;
    const { host, port } = this.#options;
    return new Promise((resolve, reject) => {
      // Exclusive: without it uWS sets SO_REUSEPORT, and a second server on the same port would
      // listen too, with the kernel sharing connections between the two. The (host, port, options,
      // callback) form is in the native module but not in its type declarations.
      const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void;
      listen.call(app, host, port, kListenExclusivePort, (listenSocket) => {
        if (!listenSocket) {
          void listenFailureReason(host, port).then((reason) => reject(new ListenError(`cannot listen on ${host}:${port}: ${reason}`)));
          return;
        }
        this.#listenSocket = listenSocket;
        resolve(us_socket_local_port(listenSocket));
      });
    });
  }

  /**
   * Stops accepting connections and resolves once every request in flight has been answered and
   * every handler has finished (or `timeoutMs` passed). Keep-alive connections may still deliver
   * requests meanwhile; they are served and counted like the others, and each answer closes its
   * connection, so that a client or load balancer with connections kept alive opens new ones, to
   * a node that listens, rather than keep sending here (a health check that reused one saw 200
   * "draining" until the process ended).
   */
  drain(timeoutMs: number): Promise<void> {
    this.#draining = true;
    if (this.#listenSocket !== null) {
      us_listen_socket_close(this.#listenSocket);
      this.#listenSocket = null;
    }
    if (this.#idle()) return Promise.resolve();
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
    try {
      this.#route(exchange, req);
    } catch (error) {
      this.#internalError(exchange, error);
    }
  }

  #route(exchange: Exchange, req: HttpRequest): void {
    const incomingId = req.getHeader('x-request-id');
    exchange.requestId = incomingId !== '' && isWellFormedRequestId(incomingId) ? incomingId : randomUUID();
    const method = req.getCaseSensitiveMethod();
    exchange.method = method;
    exchange.head = method === 'HEAD';
    const path = req.getUrl();
    const contentLength = req.getHeader('content-length');
    const transferEncoding = req.getHeader('transfer-encoding');
    // Matched before the framing check: a refusal of a CORS route's framing says Vary: Origin too.
    const match = this.#router.match(exchange.head ? 'GET' : method, path);
    // getHeader sees only the first of repeated headers: count them only when framing headers are
    // present at all (never on a plain GET).
    let counted: HeaderCounts | null = null;
    if (contentLength !== '' || transferEncoding !== '') {
      exchange.closeAfterAnswer = transferEncoding !== '';
      counted = this.#countHeaders(req);
      const problem = framingProblem(counted.contentLengths, counted.transferEncodings);
      if (problem !== null) {
        exchange.closeAfterAnswer = true;
        // A browser's route says Vary: Origin on every answer, this one too (docs/fingerprint.md).
        exchange.cors = match.kind === 'found' ? match.route.cors : match.kind === 'method_not_allowed' && match.routes.some((route) => route.cors);
        this.#send(exchange, problem.status, kJson, failureBody([problem]), kNoHeaders);
        return;
      }
    }

    if (match.kind !== 'found') {
      if (match.kind === 'method_not_allowed') {
        if (method === 'OPTIONS' && match.routes.some((route) => route.cors)) {
          this.#answerPreflight(exchange, req.getHeader('origin'), match.allowed);
          return;
        }
        const allow = withHead(match.allowed).join(', ');
        // A browser's route says Vary: Origin on every answer, this one too (docs/fingerprint.md).
        if (match.routes.some((route) => route.cors)) exchange.cors = true;
        this.#send(exchange, 405, kJson, failureBody([apiError('NOT_FOUND', `Method ${method} is not allowed here; allowed: ${allow}.`)]), [['Allow', allow]]);
        return;
      }
      this.#send(exchange, 404, kJson, failureBody([apiError('NOT_FOUND', `No route for ${method} ${path}.`)]), kNoHeaders);
      return;
    }

    const route = match.route;
    exchange.routeLabel = route.label;
    exchange.routePattern = route.pattern;
    // Everything needed from the request, read now: `req` dies when this callback returns.
    const authorization = route.auth === 'key' ? req.getHeader('authorization') : '';
    // Several would be ambiguous (a proxy may read the last, another caller than the first names):
    // counted with the framing headers, or for a request without a body by a pass of its own.
    const authorizations = route.auth === 'key' ? (counted ?? this.#countHeaders(req)).authorizations : 0;
    const contentType = route.body === 'none' ? '' : req.getHeader('content-type');
    const origin = route.cors ? req.getHeader('origin') : '';
    const forwardedFor = this.#options.trustProxy ? lastForwardedFor(req) : '';
    const query = req.getQuery() ?? '';
    const addressOf = (): string => this.#callerAddress(exchange, forwardedFor);

    // Pages may read the answers of CORS routes, errors included (a page with a revoked key sees
    // 401, not a failed fetch); only a refused origin gets no Access-Control-Allow-Origin.
    if (route.cors) {
      exchange.cors = true;
      exchange.corsOrigin = echoableOrigin(origin);
    }
    let key: AuthenticatedKey | null = null;
    if (route.auth === 'key') {
      const outcome = this.#authenticate(authorization, authorizations, addressOf);
      if (!outcome.ok) {
        this.#sendError(exchange, outcome.error, outcome.headers);
        return;
      }
      key = outcome.key;
      exchange.keyId = key.keyId;
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
    const badEscape = route.ignoresQuery || query === '' ? null : malformedQueryEscape(query);
    if (badEscape !== null) {
      this.#sendError(exchange, badEscape, kNoHeaders);
      return;
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
    // JSON routes take JSON: a form or text body is refused before it is read (nothing stored).
    // Without any body the body check below says so (400 on body), which tells the client more.
    const hasBody = transferEncoding !== '' || (contentLength !== '' && contentLength !== '0');
    if (hasBody && !isJsonMediaType(contentType)) {
      const error = apiError('VALIDATION_ERROR', `Content-Type must be application/json${contentType === '' ? '; none was sent' : `, not ${JSON.stringify(contentType)}`}.`, 'Content-Type');
      this.#send(exchange, error.status, kJson, failureBody([error]), kNoHeaders);
      return;
    }
    this.#readBody(exchange, route, key, contentLength, start);
  }

  /** The headers getHeader reads only the first of, counted: the framing ones and Authorization. */
  #countHeaders(req: HttpRequest): HeaderCounts {
    const counts = { contentLengths: 0, transferEncodings: [] as string[], authorizations: 0 };
    req.forEach((name, value) => {
      if (name === 'content-length') counts.contentLengths++;
      else if (name === 'transfer-encoding') counts.transferEncodings.push(value);
      else if (name === 'authorization') counts.authorizations++;
    });
    return counts;
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
    authorizations: number,
    addressOf: () => string,
  ): { ok: true; key: AuthenticatedKey } | { ok: false; error: ApiError; headers: ExtraHeaders } {
    // Several first, an empty one among them included: uWS reads only the first.
    if (authorizations > 1) {
      return { ok: false, error: apiError('AUTH_ERROR', 'Several Authorization headers; send exactly one.', 'authorization'), headers: kRefusedKeyHeaders };
    }
    if (authorization === '') {
      return { ok: false, error: apiError('AUTH_ERROR', 'Missing Authorization header; send Authorization: Bearer <API key>.', 'authorization'), headers: kMissingKeyHeaders };
    }
    const space = authorization.indexOf(' ');
    const scheme = space === -1 ? authorization : authorization.slice(0, space);
    // Spaces and tabs only (RFC 6750 §2.1, RFC 9110 §5.6.3): String.trim() would take a no-break
    // space or a BOM after the key too.
    const token = space === -1 ? '' : authorization.slice(space + 1).replace(kSpacesAround, '');
    if (scheme.toLowerCase() !== 'bearer' || parseApiKey(token) === null) {
      return { ok: false, error: apiError('AUTH_ERROR', 'Malformed Authorization header; expected Bearer <kind>_<environment>_<22 characters>.', 'authorization'), headers: kRefusedKeyHeaders };
    }
    const key = this.#options.keys.lookup(token);
    if (key !== null) return { ok: true, key };
    const verdict = this.#failedLookups.hit(rateLimitSubject(addressOf()), this.#options.rateLimits.failedKeyLookups);
    if (!verdict.allowed) {
      // Interface, Limits rule 3: only Retry-After, so the limit itself is not advertised.
      return { ok: false, error: apiError('RATE_LIMIT_EXCEEDED', 'Too many failed key lookups from this address.'), headers: [['Retry-After', String(verdict.resetSeconds)]] };
    }
    return { ok: false, error: apiError('AUTH_ERROR', 'Unknown or revoked API key.', 'authorization'), headers: kRefusedKeyHeaders };
  }

  #authorize(route: CompiledRoute, key: AuthenticatedKey, origin: string): ApiError | null {
    // The origin first, whatever the key's scopes: an answer to a page that may not use the key
    // must go without Access-Control-Allow-Origin, and say why.
    if (route.cors && key.allowedOrigins !== null && !key.allowedOrigins.includes(origin)) {
      return apiError('SCOPE_ERROR', 'This key may not be used from this origin.', 'origin');
    }
    // A page (a request with Origin) holding a secret key has leaked it: refused, and without
    // Access-Control-Allow-Origin, so that the mistake shows at once instead of working.
    if (route.cors && key.kind === 'secret' && origin !== '') {
      return apiError('SCOPE_ERROR', 'A secret key belongs on the caller\'s backend only; a page uses a publishable key (pk_…).', 'origin');
    }
    if (route.scope !== null && !key.scopes.has(route.scope)) {
      return apiError('SCOPE_ERROR', `This key lacks the scope ${route.scope}, which ${route.label} needs${route.alsoScope === null ? '' : ` (with ${route.alsoScope})`}.`);
    }
    if (route.alsoScope !== null && !key.scopes.has(route.alsoScope)) {
      return apiError('SCOPE_ERROR', `This key lacks the scope ${route.alsoScope}, which ${route.label} needs (with ${route.scope}).`);
    }
    if (route.liveOnly && key.environment !== 'live') return apiError('SANDBOX_KEY_FORBIDDEN');
    return null;
  }

  #rateLimit(
    route: CompiledRoute,
    key: AuthenticatedKey,
    addressOf: () => string,
  ): { error: ApiError; headers: ExtraHeaders } | null {
    if (route.rateLimit === 'none') return null;
    // Every 503 says when to come back (docs/events.md, "Overload").
    if (!this.#rateLimiterReady()) return { error: apiError('RATE_LIMIT_UNAVAILABLE'), headers: kRetryInASecond };
    const limits = this.#options.rateLimits;
    if (route.rateLimit === 'route') {
      return limitExceeded(this.#limits.hit(`${key.keyId} ${route.label}`, limits.perRoute));
    }
    // The per-address limit first: what one address sends above its own limit must not use up the
    // budget of a publishable key that every shopper of the site shares.
    return (
      limitExceeded(this.#limits.hit(`fp ${key.keyId} ${rateLimitSubject(addressOf())}`, limits.fpPerKeyAndAddress)) ??
      limitExceeded(this.#limits.hit(`fp ${key.keyId}`, limits.fpPerKey))
    );
  }

  #readBody(exchange: Exchange, route: CompiledRoute, key: AuthenticatedKey | null, contentLength: string, start: (body: JsonObject | null, bodyText: string) => void): void {
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
      const refusal = route.admit === null ? null : route.admit(bytes, key);
      if (refusal !== null) {
        this.#reply(exchange, refusal);
        return;
      }
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
      this.#handlersRunning++;
      result.then(
        (reply) => this.#reply(exchange, reply),
        (error: unknown) => this.#internalError(exchange, error),
      ).finally(() => {
        this.#handlersRunning--;
        this.#wakeIfIdle();
      });
    } else {
      this.#reply(exchange, result);
    }
  }

  #reply(exchange: Exchange, reply: Reply): void {
    if (reply.kind === 'gone') {
      // Only a request whose client hung up is given up on; any other would never be answered.
      if (!exchange.aborted) this.#internalError(exchange, new Error(`${exchange.routeLabel} gave up on a request whose client is still there`));
      return;
    }
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
    this.#options.log.error('request failed', { request_id: exchange.requestId, route: exchange.routeLabel, status: 500, code: 'INTERNAL_ERROR', error });
    this.#send(exchange, 500, kJson, failureBody([apiError('INTERNAL_ERROR')]), kNoHeaders);
  }

  #sendError(exchange: Exchange, error: ApiError, headers: ExtraHeaders): void {
    if (error.status >= 500) this.#logServerError(exchange, error);
    this.#send(exchange, error.status, kJson, failureBody([error]), headers);
  }

  /**
   * Every 5xx, with what caused it: a 500 as an error, always; a 503 (a refusal that protects the
   * service) as a warning, up to kUnavailableLinesPerSecond per code and second. Past that, under
   * overload, the next line that is written says how many were left out (`left_out`).
   */
  #logServerError(exchange: Exchange, error: ApiError): void {
    const fields = { request_id: exchange.requestId, route: exchange.routeLabel, status: error.status, code: error.code, cause: error.cause ?? error.message };
    if (error.status !== 503) {
      this.#options.log.error('request failed', fields);
      return;
    }
    this.#options.metrics.recordUnavailable(error.code);
    const leftOut = this.#unavailableLog.take(error.code, this.#now());
    if (leftOut === null) return;
    this.#options.log.warn('request refused: service unavailable', leftOut === 0 ? fields : { ...fields, left_out: leftOut });
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
    exchange.cors = true;
    exchange.corsOrigin = echoableOrigin(origin);
    this.#send(exchange, 200, kJson, successBody({ methods: allowed }), headers);
  }

  #send(exchange: Exchange, status: number, contentType: string, body: string, headers: ExtraHeaders, closeConnection = false): void {
    if (exchange.finished) return;
    if (exchange.closeAfterAnswer) {
      // Nothing may follow on this connection: refused framing is ambiguous by definition, and at
      // the end of a chunked body uWS reads a trailer section as the next request. uWS goes on
      // parsing the bytes it already holds after this callback, so the answer waits one turn: a
      // request that arrives while it is pending makes uWS drop the connection instead of serving
      // the request. Without one the client reads the answer, and the connection closes.
      exchange.closeAfterAnswer = false;
      exchange.head = false; // a body on a connection that closes right after does no harm
      setImmediate(() => this.#send(exchange, status, contentType, body, headers, true));
      return;
    }
    if (!exchange.aborted) {
      const res = exchange.res;
      // While draining every answer closes its connection, but one to HEAD: this uWS build's
      // endWithoutBody cannot close it.
      const close = closeConnection || (this.#draining && !exchange.head);
      res.cork(() => {
        res.writeStatus(statusLine(status));
        res.writeHeader('Content-Type', contentType);
        res.writeHeader('x-request-id', exchange.requestId);
        if (!close) res.writeHeader('Keep-Alive', kKeepAlive);
        if (exchange.cors) res.writeHeader('Vary', 'Origin');
        if (exchange.corsOrigin !== '') {
          res.writeHeader('Access-Control-Allow-Origin', exchange.corsOrigin);
          res.writeHeader('Access-Control-Expose-Headers', kCorsExposeHeaders);
        }
        for (let i = 0; i < headers.length; i++) res.writeHeader(headers[i]![0], headers[i]![1]);
        if (exchange.head) {
          // The length GET would send, as a header of our own: this uWS build's
          // endWithoutBody(length) leaves the response pending, and the next request on the
          // connection would then close it.
          res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
          res.endWithoutBody();
        } else {
          res.end(body, close);
        }
      });
    }
    this.#finish(exchange, status);
  }

  #finish(exchange: Exchange, status: number): void {
    if (exchange.finished) return;
    exchange.finished = true;
    const seconds = (performance.now() - exchange.started) / 1000;
    this.#options.metrics.recordRequest(exchange.routeLabel, status, seconds);
    const accessLog = this.#options.accessLog;
    if (accessLog) {
      accessLog({ request_id: exchange.requestId, method: exchange.method, route: exchange.routePattern, status, duration_ms: Math.round(seconds * 1e6) / 1000, key_id: exchange.keyId === '' ? null : exchange.keyId });
    }
    this.#inFlight--;
    this.#wakeIfIdle();
  }

  #idle(): boolean {
    return this.#inFlight === 0 && this.#handlersRunning === 0;
  }

  #wakeIfIdle(): void {
    if (!this.#idle() || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

/** An Allow list with HEAD right after GET (HEAD is served wherever GET is). */
function withHead(allowed: readonly HttpMethod[]): string[] {
  return allowed.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
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
