// Request framing that the HTTP library leaves to us (RFC 9112 §6.1-6.3). uWebSockets.js frames a
// body by the first Content-Length header and treats a request as chunked only when
// Transfer-Encoding is exactly "chunked"; it refuses on its own Content-Length together with
// Transfer-Encoding, a Content-Length that is not a plain number, and malformed chunks. What it lets
// through, a proxy in front may frame differently (by the last Content-Length, or by a coding list
// that ends in chunked): the bytes after our idea of the body would then run as a request the
// proxy never saw (request smuggling). Such requests are refused, and their connection closed.
// Pure.
import { apiError, type ApiError } from '../shared/errors.js';

/**
 * The refusal for a request whose framing headers are ambiguous, or null when they are not.
 * `contentLengths`: how many Content-Length headers came; `transferEncodings`: every
 * Transfer-Encoding value.
 */
export function framingProblem(contentLengths: number, transferEncodings: readonly string[]): ApiError | null {
  if (contentLengths > 1) {
    return apiError('VALIDATION_ERROR', 'The request has several Content-Length headers; send exactly one.', 'Content-Length');
  }
  if (transferEncodings.length === 0) return null;
  if (contentLengths > 0) {
    return apiError('VALIDATION_ERROR', 'The request has both Content-Length and Transfer-Encoding; send one of them.', 'Transfer-Encoding');
  }
  if (transferEncodings.length > 1 || transferEncodings[0]!.trim().toLowerCase() !== 'chunked') {
    return apiError('VALIDATION_ERROR', 'Transfer-Encoding must be exactly chunked (one header, no other coding).', 'Transfer-Encoding');
  }
  return null;
}

/**
 * Whether a Content-Type names JSON: `application/json`, in any case, with or without parameters
 * (`application/json; charset=utf-8`). The body is read as UTF-8 whatever a charset says (RFC 8259
 * §8.1), so a wrong charset shows up as invalid UTF-8.
 */
export function isJsonMediaType(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  const essence = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return essence === 'application/json';
}
