// Turns a request body into a JSON object, or into the error the interface names for it.
// Order matters: a raw NUL makes the text invalid JSON, and must still answer NUL_CHARACTER_DETECTED.
import { apiError, type ApiError } from '../shared/errors.js';
import { containsCardNumber, containsNul, locateCardNumber, locateInexactInteger, locateNonFiniteNumber, locateNul, locateString, locateWholeCardNumber, scanDigitRuns } from './body-scan.js';
import { needsScanForm, scanFormOf } from './decoded-text.js';

/** An exponent after a digit or a point: a number in exponent form (or such text in a string). */
const kExponent = /[0-9.][eE][+-]?[0-9]/;

export type JsonObject = Record<string, unknown>;

/** The raw body is scanned with its decoded text after it (needsScanForm): runs next to escapes are left to that. */
const kRawBody = { leaveEscapes: true } as const;
export type ParsedBody = { ok: true; value: JsonObject; text: string } | { ok: false; error: ApiError };

const kDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Deepest nesting of objects and arrays accepted in any body. Events are at most a few levels
 * deep; the bound keeps every later step (hashing, serialising) free of deep recursion.
 */
export const kMaxBodyDepth = 32;

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
  const members = countMembers(value, kMaxBodyDepth);
  if (members === kTooDeep) {
    return invalid(`The body is nested deeper than ${kMaxBodyDepth} levels.`);
  }
  // A number beyond the double range (1e400) parses as ±Infinity: it could not be stored or
  // compared as sent (it would canonicalise to null, as JSON.stringify writes it).
  if (members === kNonFiniteNumber) {
    const at = locateNonFiniteNumber(value);
    return { ok: false, error: apiError('VALIDATION_ERROR', `${at} is a number outside the range of a double (about ±1.8e308).`, at) };
  }
  if (containsNul(text)) {
    return { ok: false, error: apiError('NUL_CHARACTER_DETECTED', undefined, locateNul(value)) };
  }
  // Escapes can hide a card number from the scan of the text (\u0034 for 4, \u0001 glued before
  // it), and so can URL escapes (pan%3D4111…) and digits of other scripts (４１１１): a body that may
  // have any is scanned again as it decoded (scanFormOf).
  const { cardRun: run, longDigits, anyRun } = scanDigitRuns(text, kRawBody);
  if (run !== null || (needsScanForm(text) && containsCardNumber(scanFormOf(JSON.stringify(value, numbersLeftOut))))) {
    return { ok: false, error: apiError('CARD_NUMBER_DETECTED', undefined, locateCardNumber(value, run)) };
  }
  // The digits of such a number sit in one run of 13 or more, or are split by a point and put
  // together by an exponent (41111111.11111111e8).
  const wholeCard = anyRun || kExponent.test(text) ? locateWholeCardNumber(value) : '';
  if (wholeCard !== '') return { ok: false, error: apiError('CARD_NUMBER_DETECTED', undefined, wholeCard) };
  const inexact = longDigits ? locateInexactInteger(text, value) : '';
  if (inexact !== '') {
    return { ok: false, error: apiError('VALIDATION_ERROR', `${inexact} is an integer beyond ±9007199254740991 (2^53 − 1), which cannot be held exactly; send it as a string.`, inexact) };
  }
  // JSON.parse keeps the last of two members of one name ({"trusted":false,"trusted":true} reads
  // as trusted), other parsers the first: a gateway that checks the body before us could see
  // another event than we score. RFC 8259 §4 leaves duplicates to the parser; I-JSON (RFC 7493
  // §2.3) forbids them, and so do we. The parse dropped a member exactly when the text names more
  // members than the parsed value holds, so the slower search runs only on refusal.
  if (countMemberNames(text) !== members) {
    const at = locateDuplicateMember(text);
    return { ok: false, error: apiError('VALIDATION_ERROR', `${at} appears twice in one object; a member name may appear once.`, at) };
  }
  // A \uD800-\uDFFF escape without its pair makes a string no UTF-8 can hold (I-JSON, RFC 7493
  // §2.1): stored, it turns into U+FFFD, so that "a\ud800" and "a\ud801" would become one
  // external_account_id, one account. Only a body with such an escape can hold one.
  if (kSurrogateEscape.test(text)) {
    const at = locateLoneSurrogate(value);
    if (at !== '') return { ok: false, error: apiError('VALIDATION_ERROR', `${at} holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair).`, at) };
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

const kTooDeep = -1;
const kNonFiniteNumber = -2;

/**
 * The number of object members in the parsed `root`; kTooDeep when it is nested deeper than
 * `limit`, else kNonFiniteNumber when it holds ±Infinity (a number beyond the double range). The
 * walk that counts looks at every value anyway: a scan of the text for such numbers took a third
 * of parseJsonObjectBody's time (bench/README.md, step 56). Iterative, so that the check itself
 * cannot overflow the stack.
 */
function countMembers(root: object, limit: number): number {
  let members = 0;
  let nonFinite = false;
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (depth > limit) return kTooDeep;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
        else if (typeof item === 'number' && !Number.isFinite(item)) nonFinite = true;
      }
    } else {
      for (const key in value as object) {
        members++;
        const item = (value as Record<string, unknown>)[key];
        if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
        else if (typeof item === 'number' && !Number.isFinite(item)) nonFinite = true;
      }
    }
  }
  return nonFinite ? kNonFiniteNumber : members;
}

const kQuote = 0x22;
const kColon = 0x3a;

/** The end of the string whose opening quote is at `start` in valid JSON text: its closing quote. */
function stringEnd(text: string, start: number): number {
  let at = text.indexOf('"', start + 1);
  // A quote ending an odd run of backslashes is escaped (valid JSON: it always has a closer).
  while (countBackslashesBefore(text, at) % 2 === 1) at = text.indexOf('"', at + 1);
  return at;
}

function countBackslashesBefore(text: string, at: number): number {
  let count = 0;
  while (at - 1 - count >= 0 && text.charCodeAt(at - 1 - count) === 0x5c) count++;
  return count;
}

/** Index of the first character after `at` that is not JSON whitespace. */
function skipWhitespace(text: string, at: number): number {
  for (;;) {
    const c = text.charCodeAt(at);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return at;
    at++;
  }
}

/** How many member names valid JSON text holds: strings followed by a colon. Linear. */
function countMemberNames(text: string): number {
  let names = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) {
    at = stringEnd(text, at);
    if (text.charCodeAt(skipWhitespace(text, at + 1)) === kColon) names++;
  }
  return names;
}

type Frame = { readonly path: string; readonly names: Set<string> | null; index: number; name: string };

/**
 * The path (`user.trusted`, `extras.list[0].a`) of the first member of valid JSON text whose name
 * (decoded: "a" and "\u0061" are one name) its object already had; '' when there is none.
 */
function locateDuplicateMember(text: string): string {
  const frames: Frame[] = [];
  const childPath = (): string => {
    const top = frames[frames.length - 1];
    if (top === undefined) return '';
    return top.names === null ? `${top.path}[${top.index}]` : top.path === '' ? top.name : `${top.path}.${top.name}`;
  };
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      frames.push({ path: childPath(), names: c === 0x7b ? new Set() : null, index: 0, name: '' });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
    } else if (c === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top !== undefined && top.names === null) top.index++;
    } else if (c === kQuote) {
      const end = stringEnd(text, at);
      const next = skipWhitespace(text, end + 1);
      const top = frames[frames.length - 1];
      if (text.charCodeAt(next) === kColon && top !== undefined && top.names !== null) {
        const name = JSON.parse(text.slice(at, end + 1)) as string;
        top.name = name;
        if (top.names.has(name)) return childPath();
        top.names.add(name);
        at = next;
      } else {
        at = end;
      }
    }
  }
  return '';
}

/** A \u escape of a UTF-16 surrogate, in any case. */
const kSurrogateEscape = /\\u[dD][89a-fA-F]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const kLoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function locateLoneSurrogate(value: unknown): string {
  return locateString(value, (text) => kLoneSurrogate.test(text));
}
