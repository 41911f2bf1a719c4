// The text the card scan reads for a body's decoded content (body-scan.ts): escapes of control
// characters as commas, URL escapes as what they write, digits of other scripts as ASCII digits.
// Pure.

import { isUtf8 } from 'node:buffer';

const kDecimalDigit = /\p{Nd}/u;
/** Every decimal digit of another script is at U+0660 or above (the ASCII scan reads none of them). */
const kBeyondAsciiDigits = /[\u0660-\uffff]/g;
/** Past this many characters beyond U+0660 (text in Japanese), the rest are read one by one. */
const kBeyondAsciiFinds = 8;
/** Which UTF-16 code units are digits of other scripts (1), or start a pair that may be one (2): made on first use (~10 ms). */
let digitUnits: Uint8Array | null = null;

function makeDigitUnits(): Uint8Array {
  const units = new Uint8Array(0x10000);
  for (let code = 0x660; code < 0x10000; code++) {
    if (code >= 0xd800 && code <= 0xdbff) units[code] = 2;
    else if (kDecimalDigit.test(String.fromCharCode(code))) units[code] = 1;
  }
  return units;
}

function isOtherDigitAt(units: Uint8Array, text: string, at: number): boolean {
  const unit = units[text.charCodeAt(at)];
  return unit === 1 || (unit === 2 && kDecimalDigit.test(String.fromCodePoint(text.codePointAt(at)!)));
}

/**
 * Whether the text holds a decimal digit of another script (４, ٤, 𝟒). Every body pays one
 * character-class search; a body with characters beyond U+0660 (€, curly quotes, CJK) has them
 * looked up in a table, found by the search while few, then one by one. (A Unicode property test
 * over the whole text cost a body with a name in Japanese 2 µs: bench/README.md, step 63.)
 */
export function mayHoldOtherDigits(text: string): boolean {
  kBeyondAsciiDigits.lastIndex = 0;
  let found = kBeyondAsciiDigits.exec(text);
  if (found === null) return false;
  const units = (digitUnits ??= makeDigitUnits());
  for (let finds = 0; found !== null && finds < kBeyondAsciiFinds; finds++, found = kBeyondAsciiDigits.exec(text)) {
    if (isOtherDigitAt(units, text, found.index)) return true;
  }
  if (found === null) return false;
  for (let at = found.index; at < text.length; at++) if (isOtherDigitAt(units, text, at)) return true;
  return false;
}

/**
 * The text with every decimal digit of another script as its ASCII digit (４ and ٤ as 4).
 * Unicode encodes each script's digits 0 to 9 in a row: a digit's value is its distance from the
 * first digit of its row.
 */
export function asciiDigits(text: string): string {
  const units = (digitUnits ??= makeDigitUnits());
  let folded = '';
  let from = 0;
  for (let at = 0; at < text.length; at++) {
    const unit = units[text.charCodeAt(at)];
    if (unit === 0) continue;
    const code = text.codePointAt(at)!;
    const width = code > 0xffff ? 2 : 1;
    if (unit === 2 && !kDecimalDigit.test(String.fromCodePoint(code))) {
      at += width - 1;
      continue;
    }
    folded += text.slice(from, at) + digitValue(units, code);
    at += width - 1;
    from = at + 1;
  }
  return from === 0 ? text : folded + text.slice(from);
}

/** The value of a digit of another script: its distance from the first of its row, found in the table (rows of the Basic Multilingual Plane are apart). */
function digitValue(units: Uint8Array, code: number): string {
  // The rows of mathematical digits (U+1D7CE …) follow each other: compatibility maps them to ASCII.
  if (code > 0xffff) {
    const ascii = String.fromCodePoint(code).normalize('NFKC');
    if (ascii.length === 1 && ascii >= '0' && ascii <= '9') return ascii;
  }
  let zero = code;
  while (code - zero < 9 && (zero - 1 <= 0xffff ? units[zero - 1] === 1 : kDecimalDigit.test(String.fromCodePoint(zero - 1)))) zero--;
  return String(code - zero);
}

const kControlEscape = /(?<!\\)((?:\\\\)*)\\(?:u00[01][0-9a-fA-F]|[bfnrt])/g;
const kUrlEscapes = /(?:%[0-9A-Fa-f]{2})+/g;
/** One escape of a run that is no UTF-8: a track's start sentinel (%B then a digit), or a byte. */
const kOneUrlEscape = /%B(?=[0-9])|%[0-9A-Fa-f]{2}/g;
const kControlCharacters = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A run of URL escapes as the UTF-8 it writes (%E2%80%8B a zero-width space, %C2%A0 a no-break
 * space, %D0%B4 the letter д), a control character as a comma. A run that is no UTF-8 escape by
 * escape: a track's start sentinel %B (%B4111…: 0xB4 begins no character) as a space, an ASCII
 * byte as itself, any other as a comma.
 */
function urlDecoded(escapes: string): string {
  // One escape, or ASCII only (%20, %3D: most of them), byte by byte; a run with bytes beyond ASCII
  // checked for UTF-8, not tried (a body of many runs that are not would throw, a stack each).
  if (escapes.length === 3) return isSentinel(escapes) ? ` ${escapes[2]}` : byteDecoded(escapes);
  if (!isAsciiEscapes(escapes)) {
    const bytes = Buffer.from(escapes.replaceAll('%', ''), 'hex');
    if (isUtf8(bytes)) return bytes.toString('utf8').replace(kControlCharacters, ',');
  }
  return escapes.replace(kOneUrlEscape, byteDecoded);
}

/**
 * %B then a digit: a magnetic track's start (%B4111…), the digit the card's first. kOneUrlEscape's
 * first alternative, for a lone escape read without a second regex pass (most runs are one escape).
 */
function isSentinel(escape: string): boolean {
  const digit = escape.charCodeAt(2);
  return escape.charCodeAt(1) === 0x42 && digit >= 0x30 && digit <= 0x39;
}

function isAsciiEscapes(escapes: string): boolean {
  // Each escape's first hex digit: 0-7 for a byte below 0x80.
  for (let at = 1; at < escapes.length; at += 3) if (escapes.charCodeAt(at) > 0x37) return false;
  return true;
}

function byteDecoded(escape: string): string {
  if (escape === '%B') return ' ';
  const code = Number.parseInt(escape.slice(1), 16);
  return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : ',';
}

/**
 * Whether the body's decoded text may read otherwise than its raw text for the card scan: it has
 * escapes, URL escapes or digits of another script (scanFormOf changes nothing else).
 */
export function needsScanForm(text: string): boolean {
  return text.includes('\\') || text.includes('%') || mayHoldOtherDigits(text);
}

/**
 * What the scan reads for decoded text (JSON.stringify of a parsed body, or of one member): the
 * escapes of control characters as commas (in the decoded text a control character glues nothing
 * to a number and joins no two, where the escape's letter or hex digits would glue); URL escapes
 * as the characters they write (pan%3D4111…, card%204111%201111…: a query string kept in a
 * field; a control character as a comma), a magnetic track's start sentinel (%B4111…^) as a
 * space; digits of other scripts as ASCII digits. Every other
 * escape (\", \\, a lone surrogate's) stays; read escape by escape, so that \\ never starts one.
 */
export function scanFormOf(json: string): string {
  // An escape starts after an even run of backslashes (\\\\n is a backslash, then n); no callback
  // per escape: a body of a million backslashes costs one pass.
  let text = json.includes('\\') ? json.replace(kControlEscape, '$1,') : json;
  if (text.includes('%')) text = text.replace(kUrlEscapes, urlDecoded);
  return mayHoldOtherDigits(text) ? asciiDigits(text) : text;
}
