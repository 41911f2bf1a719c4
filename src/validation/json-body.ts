// Turns a request body into a JSON object, or into the error the interface names for it.
// Order matters: a raw NUL makes the text invalid JSON, and must still answer NUL_CHARACTER_DETECTED.
import { apiError, type ApiError } from '../shared/errors.js';
import { containsCardNumber, containsNul, locateCardNumber, locateNonFiniteNumber, locateNul } from './body-scan.js';

export type JsonObject = Record<string, unknown>;
export type ParsedBody = { ok: true; value: JsonObject; text: string } | { ok: false; error: ApiError };

const kDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Deepest nesting of objects and arrays accepted in any body. Events are at most a few levels
 * deep; the bound keeps every later step (hashing, serialising) free of deep recursion.
 */
export const kMaxBodyDepth = 32;

/** An exponent of three digits (each `e` is looked at once: linear). */
const kThreeDigitExponent = /[eE][+]?\d{3}/;

/** Could the text hold a number beyond ±1.8e308? Linear: one pass, no backtracking. */
function maybeHugeNumber(text: string): boolean {
  if (kThreeDigitExponent.test(text)) return true;
  if (text.length < 309) return false;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    run = c >= 48 && c <= 57 ? run + 1 : 0;
    if (run >= 309) return true;
  }
  return false;
}

export function parseJsonObjectBody(bytes: Uint8Array): ParsedBody {
  if (bytes.byteLength === 0) return invalid('The body is empty; a JSON object is required.');
  let text: string;
  try {
    text = kDecoder.decode(bytes);
  } catch {
    return invalid('The body is not valid UTF-8.');
  }
  if (text.indexOf('\u0000') !== -1) {
    return { ok: false, error: apiError('NUL_CHARACTER_DETECTED', undefined, 'body') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return invalid(`The body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid('The body must be a JSON object.');
  }
  if (exceedsDepth(value, kMaxBodyDepth)) {
    return invalid(`The body is nested deeper than ${kMaxBodyDepth} levels.`);
  }
  // A number beyond the double range (1e400) parses as ±Infinity: it could not be stored or
  // compared as sent (it would canonicalise to null, as JSON.stringify writes it). Only a number
  // with an exponent or of more than 308 digits can be one, so most bodies skip the walk.
  if (maybeHugeNumber(text)) {
    const at = locateNonFiniteNumber(value);
    if (at !== '') return { ok: false, error: apiError('VALIDATION_ERROR', `${at} is a number outside the range of a double (about ±1.8e308).`, at) };
  }
  if (containsNul(text)) {
    return { ok: false, error: apiError('NUL_CHARACTER_DETECTED', undefined, locateNul(value)) };
  }
  if (containsCardNumber(text) || (text.includes('\\u') && containsCardNumber(JSON.stringify(value, numbersLeftOut)))) {
    return { ok: false, error: apiError('CARD_NUMBER_DETECTED', undefined, locateCardNumber(value)) };
  }
  return { ok: true, value: value as JsonObject, text };
}

/**
 * The scan of the text sees `\u0034111…` as letters and digits, not a card number: a body with an
 * escape is scanned again as it parses, its strings and keys decoded. Numbers are left out of that
 * scan: the text's showed them whole, and a parsed one may have lost digits (beyond 2^53).
 */
function numbersLeftOut(_key: string, value: unknown): unknown {
  return typeof value === 'number' ? null : value;
}

function invalid(message: string): ParsedBody {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, 'body') };
}

/** Iterative, so that the check itself cannot overflow the stack. */
function exceedsDepth(root: object, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
    } else {
      for (const key in value as object) {
        const item = (value as Record<string, unknown>)[key];
        if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
      }
    }
  }
  return false;
}
