// Scans of the raw request body for data we refuse to hold (interface, "Rules on the input" 5):
// NUL characters and payment card numbers. Pure functions over the body text.
//
// The card scan runs over the raw JSON text rather than over parsed values, so that it sees keys,
// strings and numbers at any depth in one pass, and numbers keep every digit (JSON.parse rounds
// integers above 2^53, which would hide a 19-digit card number).
//
// A card number is digits passing the Luhn check whose first digits and length are those of
// issued cards (card-schemes.ts), written in one run or in groups as cards are written (a whole
// sequence of fours, perhaps with the group after it; 4-6-4 and 4-6-5), separated by up to three
// spaces, no-break or thin spaces, hyphens, dashes, minus signs or '+'. Not by a line feed or a
// tab: numbers on separate lines or in separate columns stay apart. The scheme and layout checks
// matter as much as Luhn: one in ten of any digits passes it, and identifiers that carry a Luhn
// check digit of their own (IMEIs, SIM ICCIDs, national ids, GTINs, payment references) pass it
// always. Decoded text (escapes, URL escapes, digits of other scripts) is scanned as scanFormOf
// (decoded-text.ts) writes it. What is never taken for a card number:
//   - a run inside a UUID (8-4-4-4-12 hex), or starting glued to a letter, of any script, or to '_'
//     (hashes, tokens, identifiers, an IBAN's digits after its country code); other characters (€, —,
//     a no-break space, a control character) do not glue, nor does a magnetic track's %B (scanFormOf:
//     URL escapes read as what they write); only a group next to a decimal point, or a short last
//     group glued to a word after it ("… 1111 3DS"), is left out, not its whole run; letters of
//     scripts written without spaces between words (CJK, Thai) do not glue ("卡号4111…已绑定");
//   - a run right after '+' of at most 15 digits (an E.164 phone number) or starting with 0 (national phone numbers; no
//     card scheme issues numbers starting with 0), a run starting with 00 and at most 15 digits
//     after it as a whole (an international number: the groups after the prefix are its country
//     code and number), and a
//     value of at most 15 digits (the E.164 maximum) of a member named like a phone ("phone",
//     "mobile", "msisdn", "tel") whose name does not also say "card" or "pan";
//   - the integer or fraction part of a decimal number that is not whole (4111111111111111.0 is
//     that integer, as 4111111111111111e0 is), and dotted IP addresses (dots break runs);
//   - an unseparated 13, 16 or 19 digit run starting with 1 (epoch milliseconds, microseconds,
//     nanoseconds between 2001 and 2033), and an unseparated 14 or 17 digit run that reads as a
//     compact date-time (YYYYMMDDhhmmss[fff]).

import { isIssuedNumber, passesLuhn } from './card-schemes.js';
import { needsScanForm, scanFormOf } from './decoded-text.js';

/**
 * What may stand between two groups of a card number's digits, up to three of them: a space, any
 * of Unicode's other spaces (no-break, Ogham, en and em, figure, thin, hair, narrow, ideographic), the
 * invisible ones a copy from a web page or a word processor carries (soft hyphen, zero-width space
 * and joiners, the direction marks of right-to-left text, word joiner and the invisible operators,
 * byte order mark), a hyphen (ASCII, U+2010, non-breaking) or a figure,
 * en or em dash, a horizontal bar, a minus sign, the fullwidth and small hyphen-minus and the
 * katakana prolonged sound mark (Japanese input writes dashes so), a plus (a form-encoded space:
 * card=4111+1111+…).
 */
const kSeparatorClass =
  '[ +\\-\\u00a0\\u00ad\\u061c\\u1680\\u180e\\u2000-\\u2015\\u202f\\u205f\\u2060-\\u2064\\u2212\\u3000\\u30fc\\ufe63\\ufeff\\uff0d]';
/** At least 13 digits, with at most three separators between two digits. Linear: separators and digits are disjoint. */
const kCandidateRun = new RegExp(`[0-9](?:${kSeparatorClass}{0,3}[0-9]){12,}`, 'g');
const kSeparator = new RegExp(`${kSeparatorClass}+`);
const kSeparators = new RegExp(`${kSeparatorClass}+`, 'g');
const kUnicodeLetter = /[\p{L}\p{M}]/u;
/**
 * Letters of scripts written without spaces between words (Chinese, Japanese, Korean particles,
 * Thai, Lao, Khmer, Burmese): a number there touches the words around it ("卡号4111…已绑定"), and
 * no identifier glues such letters to its digits, so they do not glue. With them the marks kana
 * take that Unicode counts in no script of theirs: the prolonged sound mark (full and halfwidth,
 * ｶｰﾄﾞ) and the voiced sound marks, combining (as NFD writes them) or not.
 */
const kUnspacedScriptLetter =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u3099-\u309c\u30fc\uff70\uff9e\uff9f]/u;
/** 16 digits in a row: the only text that writes an integer beyond 2^53 without an exponent. */
const kLongDigitRun = /[0-9]{16}/;
const kUuid = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
const kMinCardDigits = 13;
const kMaxCardDigits = 19;

const kBackslash = 0x5c;

/** True when the body holds a NUL character, raw or as the JSON escape \u0000. */
export function containsNul(text: string): boolean {
  if (text.indexOf('\u0000') !== -1) return true;
  let from = 0;
  for (;;) {
    const at = text.indexOf('\\u0000', from);
    if (at === -1) return false;
    // "\\u0000" is an escaped backslash followed by text: the escape counts only when the
    // backslash itself is not escaped, i.e. it ends an odd run of backslashes.
    if (countBackslashesBefore(text, at + 1) % 2 === 1) return true;
    from = at + 1;
  }
}

/** True when the text holds something that reads as a payment card number (ASCII digits: see scanFormOf). */
export function containsCardNumber(text: string): boolean {
  return findCardNumberRun(text) !== null;
}

/**
 * The first run of the text (digits and separators, as written) that holds a card number, or the
 * digits of a number in exponent form that does (4111111111111111e0), or null.
 */
export function findCardNumberRun(text: string): string | null {
  return scanDigitRuns(text).cardRun;
}

/** What one pass over a body's runs of 13 digits or more found. */
export interface DigitRuns {
  /** As findCardNumberRun. */
  readonly cardRun: string | null;
  /** A run of 16 digits or more without separators was seen before it (locateInexactInteger then looks). */
  readonly longDigits: boolean;
  /** A run of 13 digits or more was seen at all (locateWholeCardNumber then looks). */
  readonly anyRun: boolean;
}

/** findCardNumberRun, and whether the body may write an integer beyond 2^53: one pass for both. */
export function scanDigitRuns(text: string, options: ScanOptions = kDecodedText): DigitRuns {
  let longDigits = false;
  let anyRun = false;
  if (text.length < kMinCardDigits) return { cardRun: null, longDigits, anyRun };
  const uuids: UuidRanges = { text, ranges: null, next: 0, leaveEscapes: options.leaveEscapes };
  kCandidateRun.lastIndex = 0;
  for (let match = kCandidateRun.exec(text); match !== null; match = kCandidateRun.exec(text)) {
    const run = match[0];
    anyRun = true;
    if (!longDigits && run.length >= 16 && kLongDigitRun.test(run)) longDigits = true;
    const cardRun = cardNumberOfRun(text, run, match.index, uuids);
    if (cardRun !== null) return { cardRun, longDigits, anyRun };
  }
  return { cardRun: null, longDigits, anyRun };
}

export interface ScanOptions {
  /**
   * The raw text of a body whose decoded text is scanned too (parseJsonObjectBody): a run next to
   * an escape (\u002e, \u0031, \n) is left to that scan, which reads what the escape writes.
   */
  readonly leaveEscapes: boolean;
}

const kDecodedText: ScanOptions = { leaveEscapes: false };

/** The UUIDs of a text, found when a run first needs them. */
interface UuidRanges {
  readonly text: string;
  /** ScanOptions.leaveEscapes (carried here: one object per scan). */
  readonly leaveEscapes: boolean;
  ranges: number[] | null;
  /** The first range that may still overlap a run: runs come in order, so no range is looked at twice. */
  next: number;
}

/** The card number that the candidate run at `start` holds (the run, or the integer a number in exponent form writes), or null. */
function cardNumberOfRun(text: string, run: string, start: number, uuids: UuidRanges): string | null {
  const end = start + run.length;
  const exponentDigits = exponentNumberDigits(text, start, end);
  if (exponentDigits !== null) {
    return !isPhoneMemberValue(text, start, exponentDigits) && !isExemptDigits(exponentDigits, true) && isIssuedNumber(exponentDigits) && passesLuhn(exponentDigits) ? exponentDigits : null;
  }
  if (isWholeDecimalNumber(text, start, end)) return !isPhoneMemberValue(text, start, run) && runHoldsCardNumber(run, kWholeRun) ? run : null;
  if (uuids.leaveEscapes && nextToEscape(text, start, end)) return null;
  const ends = runEnds(text, start, end, run);
  if (ends === null) return null;
  if (overlapsUuid(uuids, start, end)) return null;
  if (isPhoneMemberValue(text, start, run)) return null;
  return runHoldsCardNumber(run, ends) ? run : null;
}

/**
 * The digits of the integer that a JSON number in exponent form writes, when the run [start, end)
 * is its integer part (4111111111111111e0) or its fraction (4.111111111111111e15); null when the
 * run is not part of such a number, or the number is not an integer of at most 19 digits. The
 * text's scan would otherwise take the 'e' for a letter glued to the run, or the '.' for a
 * decimal's.
 */
function exponentNumberDigits(text: string, start: number, end: number): string | null {
  // The number around the run: digits, perhaps a '.' and digits, then the exponent.
  let valueStart = start;
  let integerEnd = end;
  let fractionStart = end;
  let tokenEnd = end;
  if (text.charCodeAt(start - 1) === 0x2e /* . */ && isDigit(text.charCodeAt(start - 2))) {
    integerEnd = start - 1;
    valueStart = start - 2;
    while (valueStart > 0 && isDigit(text.charCodeAt(valueStart - 1))) valueStart--;
    fractionStart = start;
  } else if (text.charCodeAt(end) === 0x2e && isDigit(text.charCodeAt(end + 1))) {
    fractionStart = end + 1;
    tokenEnd = end + 1;
    while (isDigit(text.charCodeAt(tokenEnd))) tokenEnd++;
  }
  const marker = text.charCodeAt(tokenEnd);
  if (marker !== 0x65 /* e */ && marker !== 0x45 /* E */) return null;
  let at = tokenEnd + 1;
  const sign = text.charCodeAt(at);
  if (sign === 0x2b || sign === 0x2d) at++;
  const exponentStart = at;
  while (isDigit(text.charCodeAt(at))) at++;
  if (at === exponentStart || at - exponentStart > 4) return null;
  const exponent = Number(text.slice(tokenEnd + 1, at));
  const integer = text.slice(valueStart, integerEnd);
  const fraction = text.slice(fractionStart, tokenEnd);
  // A JSON number: where a value starts (after ':', '[', ',' or white space, perhaps a minus), not
  // inside a word or a string's text such as a UUID's hex.
  let before = valueStart - 1;
  if (text.charCodeAt(before) === 0x2d /* - */) before--;
  const context = before >= 0 ? text.charCodeAt(before) : -1;
  if (context !== 0x3a && context !== 0x5b && context !== 0x2c && context !== 0x20 && context !== 0x0a && context !== 0x0d && context !== 0x09) return null;
  const digits = integer + fraction;
  const point = integer.length + exponent;
  if (point < 0 || point > kMaxCardDigits + 1) return null;
  if (point < digits.length && !/^0*$/.test(digits.slice(point))) return null;
  const whole = (point >= digits.length ? digits + '0'.repeat(point - digits.length) : digits.slice(0, point)).replace(/^0+/, '');
  return whole.length >= kMinCardDigits && whole.length <= kMaxCardDigits ? whole : null;
}

/**
 * Whether the run [start, end) is the integer part of a JSON number whose fraction is all zeros
 * (4111111111111111.0): that number is the integer, and reads back as it.
 */
function isWholeDecimalNumber(text: string, start: number, end: number): boolean {
  if (text.charCodeAt(end) !== 0x2e /* . */ || text.charCodeAt(end + 1) !== 0x30 /* 0 */) return false;
  let at = end + 1;
  while (text.charCodeAt(at) === 0x30) at++;
  if (isDigit(text.charCodeAt(at)) || text.charCodeAt(at) === 0x65 || text.charCodeAt(at) === 0x45) return false;
  // A JSON number: where a value starts (after ':', '[', ',' or white space, perhaps a minus).
  let before = start - 1;
  if (text.charCodeAt(before) === 0x2d /* - */) before--;
  const context = before >= 0 ? text.charCodeAt(before) : -1;
  return context === 0x3a || context === 0x5b || context === 0x2c || context === 0x20 || context === 0x0a || context === 0x0d || context === 0x09;
}

/** Which end groups of a run belong to something else (a word, a decimal number), and are left out. */
interface RunEnds {
  readonly dropFirst: boolean;
  readonly dropLast: boolean;
}

const kWholeRun: RunEnds = { dropFirst: false, dropLast: false };

/** A backslash right after the run, or within the six characters before it (an escape's). */
function nextToEscape(text: string, start: number, end: number): boolean {
  if (text.charCodeAt(end) === kBackslash) return true;
  for (let at = Math.max(0, start - 6); at < start; at++) if (text.charCodeAt(at) === kBackslash) return true;
  return false;
}

/**
 * The groups of the run at [start, end) that may hold a card. null: none — the run starts glued to a
 * letter (an identifier's, an IBAN's digits after its country code too), is one group glued to a
 * letter at either end (a hash, a token), ends glued to a letter or digit written as an escape, or
 * is a phone number after '+' (E.164: at most 15 digits). A last group glued to a word after it
 * ("… 1111 3DS", "… 1111 2nd": isWordAfterLastGroup) is that word's, as a group next to a decimal
 * point is a decimal number's or an IP address's: it alone is left out, the others stay ("paid
 * 19.99 4111 1111 1111 1111"). A first group glued to a word stays a reason to drop the whole run:
 * IBANs are written so.
 */
function runEnds(text: string, start: number, end: number, run: string): RunEnds | null {
  const before = start > 0 ? text.charCodeAt(start - 1) : -1;
  const after = end < text.length ? text.charCodeAt(end) : -1;
  if (before === 0x2b /* + */ && run.replace(kSeparators, '').length <= kMaxPhoneDigits) return null;
  if (isLetter(before) && !isJsonEscapeLetter(text, start - 1)) return null;
  if (isEscapedWordCharacter(text, end)) return null;
  const wordAfter = isLetter(after);
  if (wordAfter && !isWordAfterLastGroup(text, end, run)) return null;
  const decimalBefore = before === 0x2e /* . */ && start > 1 && isDigit(text.charCodeAt(start - 2));
  const decimalAfter = after === 0x2e && end + 1 < text.length && isDigit(text.charCodeAt(end + 1));
  if (!decimalBefore && !decimalAfter && !wordAfter) return kWholeRun;
  return { dropFirst: decimalBefore, dropLast: decimalAfter || wordAfter };
}

/**
 * Whether the letters glued to the run's end make, with its last group, a word of its own ("3DS",
 * "3DS2", "2nd", "14h30", "10am") rather than the rest of an identifier: the run has groups, the
 * last one has fewer than four digits (four would continue a sequence of fours: "… 1111 1111abc"
 * is a longer number's), and the run is not a number in fours going on in hex ("… 6467 9A2B 3C4D",
 * a key's fingerprint: digits in fours, then a group of four hex characters and another).
 */
function isWordAfterLastGroup(text: string, end: number, run: string): boolean {
  const lastGroup = kLastGroup.exec(run)?.[1];
  if (lastGroup === undefined || lastGroup.length >= 4) return false;
  const wordEnd = wordCharactersFrom(text, end);
  if (lastGroup.length + wordEnd - end !== 4 || !kHexGroup.test(text.slice(end, wordEnd)) || !kInFours.test(run)) return true;
  let next = wordEnd;
  while (next < text.length && next - wordEnd < 3 && kSeparatorCharacter.test(text[next]!)) next++;
  if (next === wordEnd) return true;
  const nextEnd = wordCharactersFrom(text, next);
  return !(nextEnd - next === 4 && kHexGroup.test(text.slice(next, nextEnd)));
}
const kHexGroup = /^[0-9A-Fa-f]+$/;
/** Groups of four digits, then the last group. */
const kInFours = new RegExp(`^(?:[0-9]{4}${kSeparatorClass}+)+[0-9]+$`);

/** Where the letters and digits from `at` end. */
function wordCharactersFrom(text: string, at: number): number {
  while (at < text.length && (isLetter(text.charCodeAt(at)) || isDigit(text.charCodeAt(at)))) at++;
  return at;
}
/** A run's last group, after a separator (none: the run is one group). */
const kLastGroup = new RegExp(`${kSeparatorClass}+([0-9]+)$`);
const kSeparatorCharacter = new RegExp(`^${kSeparatorClass}$`);

const kMaxPhoneDigits = 15;
const kPhoneKey = /phone|mobile|msisdn|^tel$|_tel$|^tel_/i;
/** A member name as written in raw JSON, decoded ("ph\u006fne" is "phone", as the parse reads it). */
function decodedKey(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** The words of a member name (mobile_wallet_pan, mobileWalletPan): runs of letters, split before a capital. */
const kNameWords = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g;
const kCardWords: ReadonlySet<string> = new Set(['card', 'pan']);

/** A member named like a phone and a card ("mobile_wallet_pan", "mobileCardNumber") holds a card. */
function namesCard(key: string): boolean {
  return (key.match(kNameWords) ?? []).some((word) => kCardWords.has(word.toLowerCase()));
}

/**
 * Whether the run is the whole start of the value of a member named like a phone ("phone":
 * 4915112345678 or "mobile_phone": "4915112345678"), with no more digits than E.164 allows.
 */
function isPhoneMemberValue(text: string, start: number, run: string): boolean {
  if (run.replace(kSeparators, '').length > kMaxPhoneDigits) return false;
  let at = start - 1;
  if (text[at] === '"') at--;
  while (at >= 0 && (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r')) at--;
  if (text[at] !== ':') return false;
  at--;
  while (at >= 0 && (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r')) at--;
  if (text[at] !== '"') return false;
  const keyEnd = at;
  const keyStart = text.lastIndexOf('"', keyEnd - 1);
  if (keyStart === -1 || keyEnd - keyStart > 64) return false;
  const key = decodedKey(text.slice(keyStart + 1, keyEnd));
  return kPhoneKey.test(key) && !namesCard(key);
}

/**
 * "4111…\u00e9" or "4111…\u0031" in raw JSON: the escape writes a letter, which glues as the
 * letter itself would, or a digit, which makes the number longer (the decoded text's scan reads it).
 */
function isEscapedWordCharacter(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== kBackslash || text.charCodeAt(at + 1) !== 0x75 /* u */) return false;
  const hex = text.slice(at + 2, at + 6);
  if (!/^[0-9a-fA-F]{4}$/.test(hex)) return false;
  const code = Number.parseInt(hex, 16);
  return isLetter(code) || isDigit(code);
}

/** "\n4111..." in raw JSON: the n belongs to an escape, so it separates like whitespace. */
function isJsonEscapeLetter(text: string, at: number): boolean {
  const letter = text[at];
  if (letter !== 'n' && letter !== 't' && letter !== 'r' && letter !== 'b' && letter !== 'f') return false;
  return countBackslashesBefore(text, at) % 2 === 1;
}

function countBackslashesBefore(text: string, at: number): number {
  let count = 0;
  for (let i = at - 1; i >= 0 && text.charCodeAt(i) === kBackslash; i--) count++;
  return count;
}

function findUuidRanges(text: string): number[] {
  const ranges: number[] = [];
  kUuid.lastIndex = 0;
  for (let match = kUuid.exec(text); match !== null; match = kUuid.exec(text)) {
    ranges.push(match.index, match.index + match[0].length);
  }
  return ranges;
}

/** Whether [start, end) overlaps a UUID; runs are asked in the order of the text (linear in all). */
function overlapsUuid(uuids: UuidRanges, start: number, end: number): boolean {
  const ranges = (uuids.ranges ??= findUuidRanges(uuids.text));
  while (uuids.next < ranges.length && ranges[uuids.next + 1]! <= start) uuids.next += 2;
  return uuids.next < ranges.length && ranges[uuids.next]! < end;
}

/**
 * A run is digit groups joined by separators. A card number in it is one group alone, or groups
 * laid out as cards are written: a whole sequence of four-digit groups, perhaps with the one group
 * after it (4111 1111 1111 1111, 6759 6498 2643 8453 672), at least 16 digits; or four, six, then
 * four or five digits (Diners 3622 720627 1667, Amex 3782 822463 10005). Part of a longer
 * sequence of fours is another number's (an IBAN or account number in print, a tracking number),
 * as are dates, phone numbers and postcodes, grouped otherwise.
 */
function runHoldsCardNumber(run: string, ends: RunEnds): boolean {
  // 00 49 151 …: an international prefix, and a number E.164 allows after it, is no card's.
  if (run.charCodeAt(0) === 0x30 && run.charCodeAt(1) === 0x30 && run.replace(kSeparators, '').length - 2 <= kMaxPhoneDigits) return false;
  const all = run.split(kSeparator);
  const groups = ends === kWholeRun ? all : all.slice(ends.dropFirst ? 1 : 0, ends.dropLast ? -1 : all.length);
  for (const group of groups) if (group.length >= kMinCardDigits && isCardDigits(group, true)) return true;
  if (groups.length === 1) return false;
  for (let first = 0; first < groups.length; ) {
    if (groups[first]!.length !== 4) {
      first++;
      continue;
    }
    let end = first + 1;
    while (end < groups.length && groups[end]!.length === 4) end++;
    const fours = groups.slice(first, end).join('');
    if (isCardInFours(fours)) return true;
    if (end < groups.length && isCardInFours(fours + groups[end]!)) return true;
    if (end - first === 1 && end + 1 < groups.length && groups[end]!.length === 6 && (groups[end + 1]!.length === 4 || groups[end + 1]!.length === 5)) {
      if (isCardDigits(fours + groups[end]! + groups[end + 1]!, false)) return true;
    }
    first = end;
  }
  return false;
}

/** Digits written in fours that make a card: 16 or more, or an Amex's 15 (3782 8224 6310 005). */
function isCardInFours(digits: string): boolean {
  return (digits.length >= 16 || (digits.length === 15 && digits.charCodeAt(0) === 0x33 && (digits[1] === '4' || digits[1] === '7'))) && isCardDigits(digits, false);
}

/** Digits a card scheme issues, passing Luhn, and not one of the numbers that look so (isExemptDigits). */
function isCardDigits(digits: string, unseparated: boolean): boolean {
  return digits.length <= kMaxCardDigits && !isExemptDigits(digits, unseparated) && isIssuedNumber(digits) && passesLuhn(digits);
}

function isExemptDigits(digits: string, unseparated: boolean): boolean {
  if (digits.charCodeAt(0) === 0x30 /* 0 */) return true;
  if (!unseparated) return false;
  const length = digits.length;
  if ((length === 13 || length === 16 || length === 19) && digits.charCodeAt(0) === 0x31 /* 1 */) return true;
  if (length === 14 || length === 17) return isCompactDateTime(digits);
  return false;
}

function isCompactDateTime(digits: string): boolean {
  const year = Number(digits.slice(0, 4));
  const month = Number(digits.slice(4, 6));
  const day = Number(digits.slice(6, 8));
  const hour = Number(digits.slice(8, 10));
  const minute = Number(digits.slice(10, 12));
  const second = Number(digits.slice(12, 14));
  return (
    year >= 1900 && year <= 2199 && month >= 1 && month <= 12 && day >= 1 && day <= 31 &&
    hour <= 23 && minute <= 59 && second <= 60
  );
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** A character that glues to a run of digits (makes it an identifier's): a letter, '_', not one of kUnspacedScriptLetter. */
function isLetter(code: number): boolean {
  if (code <= 0x7f) return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f /* _ */;
  const character = String.fromCharCode(code);
  return kUnicodeLetter.test(character) && !kUnspacedScriptLetter.test(character);
}

/**
 * Where a card number sits in a parsed body, as a dotted path ('payment.note', 'extras.list[2]'),
 * for the error's `parameter`: a string or key that holds one, or a number that parsed to the
 * value of `run`, what findCardNumberRun found (a number above 2^53 lost digits in parsing, and
 * so did the run read as a number; one in exponent form is found by its digits). '' when none does.
 */
export function locateCardNumber(value: unknown, run: string | null = null): string {
  const runValue = run !== null && /^[0-9]+$/.test(run) ? Number(run) : null;
  // A string is scanned as its member, so that a phone member's exemption applies as in the body's
  // scan; strings first, as a number beyond 2^53 may round to the value of a card in a string.
  const inString = locate(value, (text, isNumber, _number, member) => {
    if (isNumber) return false;
    const json = member === null ? JSON.stringify(text) : JSON.stringify({ [member]: text });
    return containsCardNumber(json) || (needsScanForm(json) && containsCardNumber(scanFormOf(json)));
  });
  if (inString !== '' || runValue === null) return inString;
  return locate(value, (_text, isNumber, number) => isNumber && (number === runValue || number === -runValue));
}

/**
 * `text` with the digits (and URL escapes) of each piece that holds a card number written as '*',
 * else `text` itself: an error names what the request sent (a member name, a query parameter, a
 * path), and an answer must not carry back the card number it refuses to hold. Pieces are cut at
 * dots and slashes, across which no card number is written: a path's `2024.4111…` would read as a
 * decimal number, and the digits of `v2.…` or `/v1/…` stay. Array indices of a path are kept.
 */
export function maskCardNumbers(text: string): string {
  if (!mayHoldCardNumber(text)) return text;
  return text.replace(/[^./]+/g, (piece) => (mayHoldCardNumber(piece) && holdsCardNumber(piece) ? piece.replace(kDigitOrIndex, maskedMatch) : piece));
}

/** Whether an answer that echoed `text` (a header, a name) would carry a card number back. */
export function carriesCardNumber(text: string): boolean {
  return maskCardNumbers(text) !== text;
}

function maskedMatch(match: string): string {
  if (match.startsWith('[')) return match;
  return match.startsWith('%') ? '%**' : '*';
}

/**
 * A digit of any script (astral ones are two UTF-16 units); a URL escape, whose hex letters would
 * tell other scripts' digits apart (`%E0%A5%AB` is a Devanagari 5); or an array index of a path,
 * `[3]`, which is kept.
 */
const kDigitOrIndex = /\[[0-9]{1,6}\]|%[0-9A-Fa-f]{2}|\p{Nd}/gu;

function holdsCardNumber(text: string): boolean {
  const json = JSON.stringify(text);
  return containsCardNumber(json) || (needsScanForm(json) && containsCardNumber(scanFormOf(json)));
}

/** False for a text too short of digits to hold a card (the usual message); true when it may. */
function mayHoldCardNumber(text: string): boolean {
  let digits = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    // Escapes and other scripts' digits are read by the full scan.
    if (code >= 0x80 || code === 0x25 /* % */ || code === kBackslash) return true;
    if (isDigit(code) && ++digits >= 12) return true;
  }
  return false;
}

/**
 * Path of the first number whose value, as parsed, is a card number though its text is not one
 * (`4111111111111111.1`, `4.1111111111111111E15`: a double holds no such fraction, and the event
 * would hold the card's digits), or '' when there is none.
 */
export function locateWholeCardNumber(value: unknown): string {
  // A first pass without paths (an event holds a few numbers, all small): the path only on a hit.
  if (!holdsLargeWholeNumber(value)) return '';
  return locate(value, (_text, isNumber, number, member) => {
    if (!isNumber || !isLargeWholeNumber(number)) return false;
    return containsCardNumber(member === null ? String(number) : JSON.stringify({ [member]: number }));
  });
}

/**
 * An integer of 12 to 16 digits: what a card number's value would be. Beyond 2^53 a number is
 * refused anyway, as one no double holds (locateInexactInteger), with the advice that mends it:
 * its rounded value says nothing of what was sent.
 */
function isLargeWholeNumber(number: number): boolean {
  const size = Math.abs(number);
  return size >= 1e11 && size <= Number.MAX_SAFE_INTEGER && Number.isInteger(number);
}

/** Whether `root` holds a number isLargeWholeNumber anywhere. */
function holdsLargeWholeNumber(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'number') {
      if (isLargeWholeNumber(value)) return true;
    } else if (typeof value === 'object' && value !== null) {
      if (Array.isArray(value)) for (const item of value) stack.push(item);
      else for (const key in value) stack.push((value as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/** Where a NUL character sits in a parsed body, as a dotted path; '' for the body itself. */
export function locateNul(value: unknown): string {
  return locate(value, (text) => text.includes('\u0000'));
}

/**
 * Path of the first number JSON can write but a double cannot hold (1e400 parses as Infinity),
 * or '' when there is none. Such a number would be stored as written but read back as null.
 */
export function locateNonFiniteNumber(value: unknown): string {
  return locate(value, (_text, isNumber, number) => isNumber && !Number.isFinite(number));
}

/**
 * The path of a number written as a plain integer beyond ±(2^53 − 1), which no double holds
 * exactly (12345678901234567 parses to …568: two such bodies would be one event, and the stored
 * event would read back as a number never sent); '' when none. I-JSON (RFC 7493 §2.2) asks not
 * to send such numbers; a string holds them. Numbers with a fraction or an exponent are doubles
 * as written. The text's number tokens are read outside its strings, one pass; call it for a body
 * whose scan saw 16 digits in a row (scanDigitRuns).
 */
export function locateInexactInteger(text: string, value: unknown): string {
  const inexact = new Set<number>();
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (inString) {
      if (code === kBackslash) at++;
      else if (code === 0x22 /* " */) inString = false;
      continue;
    }
    if (code === 0x22) {
      inString = true;
      continue;
    }
    if (code !== 0x2d /* - */ && !isDigit(code)) continue;
    // Outside strings, digits only ever belong to a number token.
    const digitsFrom = code === 0x2d ? at + 1 : at;
    let end = digitsFrom;
    while (isDigit(text.charCodeAt(end))) end++;
    const next = text.charCodeAt(end);
    const plain = next !== 0x2e /* . */ && next !== 0x65 /* e */ && next !== 0x45 /* E */;
    if (plain && end - digitsFrom >= 16) {
      const number = Number(text.slice(at, end));
      if (!Number.isSafeInteger(number)) inexact.add(number);
    }
    while (end < text.length && kNumberTail.test(text[end]!)) end++;
    at = end - 1;
  }
  if (inexact.size === 0) return '';
  return locate(value, (_text, isNumber, number) => isNumber && inexact.has(number));
}

/** What may follow a number's integer part in its token: a fraction, an exponent. */
const kNumberTail = /[0-9.eE+-]/;

/** The path of the first string or member name of `value` that `matches`; '' when none does. */
export function locateString(value: unknown, matches: (text: string) => boolean): string {
  return locate(value, (text, isNumber) => !isNumber && matches(text));
}

/**
 * `matches(text, isNumber, number)`: for a string or member name its text; for a number its text
 * and the number.
 */
type Matcher = (text: string, isNumber: boolean, number: number, member: string | null) => boolean;

function locate(root: unknown, matches: Matcher): string {
  // Iterative walk: bodies are untrusted, so recursion depth must not depend on them.
  const stack: Array<{ value: unknown; path: string; member: string | null }> = [{ value: root, path: '', member: null }];
  while (stack.length > 0) {
    const { value, path, member } = stack.pop()!;
    if (typeof value === 'string') {
      if (matches(value, false, Number.NaN, member)) return path;
    } else if (typeof value === 'number') {
      if (matches(String(value), true, value, member)) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]`, member: null });
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const child = path === '' ? key : `${path}.${key}`;
        if (matches(key, false, Number.NaN, null)) return child;
        stack.push({ value: (value as Record<string, unknown>)[key], path: child, member: key });
      }
    }
  }
  return '';
}
