// The one registry of error codes the API answers with (interface, section "Errors").
// Every failure the service sends is built here: handlers never write ad-hoc codes or statuses.

import { maskCardNumbers } from '../validation/body-scan.js';

export interface ErrorDefinition {
  readonly status: number;
  readonly message: string;
}

export const kErrorCodes = {
  VALIDATION_ERROR: { status: 400, message: 'The request is invalid.' },
  CARD_NUMBER_DETECTED: {
    status: 400,
    message: 'A card number was found in the body. Send payment.bin, payment.last4 or payment.card_token instead.',
  },
  NUL_CHARACTER_DETECTED: { status: 400, message: 'A NUL character was found in the body.' },
  AUTH_ERROR: { status: 401, message: 'The API key is missing or invalid.' },
  SCOPE_ERROR: { status: 403, message: 'The API key lacks the scope this route needs.' },
  SANDBOX_KEY_FORBIDDEN: { status: 403, message: 'This operation needs a live key; a sandbox key was used.' },
  ACCOUNT_SHARED_ACROSS_PROJECTS: {
    status: 403,
    message: 'The account is used by several projects and cannot be erased through one of them.',
  },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  EVENT_ID_CONFLICT: { status: 409, message: 'This event_id was already used with a different body.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is larger than this route accepts.' },
  RATE_LIMIT_EXCEEDED: { status: 429, message: 'Rate limit exceeded; retry after the number of seconds in Retry-After.' },
  INTERNAL_ERROR: { status: 500, message: 'Internal error. The same request may be retried.' },
  ASYNC_UNAVAILABLE: { status: 503, message: 'Async ingestion is unavailable. Nothing was stored; retry with backoff.' },
  COMPILED_RULES_UNAVAILABLE: {
    status: 503,
    message: 'The compiled ruleset is unavailable. Nothing was scored or stored; retry with backoff.',
  },
  PROJECT_POLICY_UNAVAILABLE: {
    status: 503,
    message: 'The project policy is unavailable. Nothing was scored or stored; retry with backoff.',
  },
  RATE_LIMIT_UNAVAILABLE: {
    status: 503,
    message: 'The rate limiter is not ready. Nothing was scored or stored; retry with backoff.',
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof kErrorCodes;

/** An API error as a value: what the failure envelope carries, plus the HTTP status. */
export interface ApiError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly message: string;
  /** Names the offending field or header when the error is about one; '' otherwise. */
  readonly parameter: string;
  /**
   * For the operator's log only, never sent: what went wrong underneath (a SQLite error, a worker
   * that died). The front end logs it with every 5xx.
   */
  readonly cause?: string;
}

/**
 * Messages and parameters name what the request sent (a member name, a query parameter): one that
 * holds a card number is answered with its digits as '*', whatever the error.
 */
export function apiError(code: ErrorCode, message?: string, parameter?: string): ApiError {
  const definition: ErrorDefinition = kErrorCodes[code];
  return {
    code,
    status: definition.status,
    message: message === undefined ? definition.message : answerable(message),
    parameter: parameter === undefined ? '' : answerable(parameter),
  };
}

/**
 * Text an answer may carry: card numbers masked (maskCardNumbers), and a lone surrogate (from a
 * member name the error names: `{"x\ud800":1}`) written as its escape's text, as no UTF-8 holds
 * one and the answer must be JSON every parser reads (I-JSON). The text around each surrogate is
 * masked on its own, the surrogate a boundary that glues to nothing (a card after it is masked),
 * and the escape's own hex is not taken for digits of a card.
 */
function answerable(text: string): string {
  if (!kLoneSurrogate.test(text)) return maskCardNumbers(text);
  return text.split(kLoneSurrogateSplit).map((part, i) => (i % 2 === 0 ? maskCardNumbers(part) : `\\u${part.charCodeAt(0).toString(16)}`)).join('');
}
const kLoneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Splits around lone surrogates, each kept (a capturing group) at the odd indices. */
const kLoneSurrogateSplit = new RegExp(`(${kLoneSurrogate.source})`);

/** `error` with the underlying cause attached for the log (an Error, or a description). */
export function causedBy(error: ApiError, cause: unknown): ApiError {
  return { ...error, cause: describeCause(cause) };
}

/** What went wrong, in one line: `code: message` of an error (or of the plain object an error thrown on another thread arrives as). */
export function describeCause(cause: unknown): string {
  const { message, code } = (typeof cause === 'object' && cause !== null ? cause : {}) as { message?: unknown; code?: unknown };
  if (typeof message !== 'string') return typeof code === 'string' ? code : String(cause);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

export function isApiError(value: unknown): value is ApiError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ApiError).code === 'string' &&
    Object.hasOwn(kErrorCodes, (value as ApiError).code) &&
    typeof (value as ApiError).status === 'number'
  );
}
