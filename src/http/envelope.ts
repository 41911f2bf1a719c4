// The envelope of every JSON response (interface, "General format rules"):
//   success { "status": 1, "data": {...}, "errors": [] }
//   failure { "status": 0, "data": null, "errors": [{ "code", "message", "parameter" }] }
import type { ApiError } from '../shared/errors.js';
import { carriesCardNumber } from '../validation/body-scan.js';

export function successBody(data: unknown): string {
  return serializedSuccessBody(JSON.stringify(data));
}

/** The success envelope around data that is already JSON text. */
export function serializedSuccessBody(json: string): string {
  return `{"status":1,"data":${json},"errors":[]}`;
}

/** Bodies of frozen errors: errors made once and answered often (a refusal at capacity, under overload). */
const kFrozenErrorBodies = new WeakMap<ApiError, string>();

export function failureBody(errors: readonly ApiError[]): string {
  const only = errors.length === 1 ? errors[0]! : null;
  const kept = only !== null && Object.isFrozen(only) ? kFrozenErrorBodies.get(only) : undefined;
  if (kept !== undefined) return kept;
  const body = `{"status":0,"data":null,"errors":${JSON.stringify(
    errors.map((error) => ({ code: error.code, message: error.message, parameter: error.parameter })),
  )}}`;
  if (only !== null && Object.isFrozen(only)) kFrozenErrorBodies.set(only, body);
  return body;
}

const kReasonPhrases: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  409: 'Conflict', 413: 'Payload Too Large', 429: 'Too Many Requests',
  500: 'Internal Server Error', 503: 'Service Unavailable',
};

/** "404 Not Found": the status line uWS writes. */
export function statusLine(status: number): string {
  const phrase = kReasonPhrases[status];
  return phrase === undefined ? String(status) : `${status} ${phrase}`;
}

const kRequestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A caller's x-request-id is echoed (and logged) only when well formed: 1-128 of letters, digits
 * and -_.:, and no card number, which the server holds nowhere, its logs included.
 */
export function isWellFormedRequestId(value: string): boolean {
  // A UUID, the usual id, is never read as a card number (the scan leaves UUIDs out): not scanned.
  return kRequestIdPattern.test(value) && (kUuidPattern.test(value) || !carriesCardNumber(value));
}

const kUuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
