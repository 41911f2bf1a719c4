// Static check of matches() patterns against catastrophic backtracking.
//
// V8's irregexp is a backtracking engine, so a pattern decides how much work a
// hostile input can cause. We parse the pattern (JavaScript syntax, no flags)
// and accept it only when its backtracking is at most polynomial of low degree;
// kMaxRegexInputLength then bounds the input. Rejected, with the reason:
//   - backreferences and lookarounds (no linear bound, rarely needed);
//   - a quantifier that repeats (max > 1) something that itself has a variable
//     count, e.g. (a+)+ or (\d*\.?)*: exponential. Allowed when every
//     repetition ends with a mandatory character no inner quantifier can eat,
//     e.g. ([a-z0-9-]+\.)+ — the delimiter makes the split unique;
//   - a repeated alternation whose branches can start with the same character
//     or match empty, e.g. (a|ab)* or (a|a)*: exponential;
//   - two wide quantifiers in sequence that can match the same characters with
//     only such characters between them, where the first can end with what
//     starts the rest, e.g. \d+\d+ or .*a.*: cubic and worse;
//   - inline flags and syntax we do not parse, so what is checked is what runs.
// This follows the star-height / ambiguity criteria of safe-regex and of
// Weideman et al. ("Analyzing matching time behavior of backtracking regular
// expression matchers by using ambiguity of NFA", 2016), conservatively.

import { kMaxRegexPatternLength } from './limits.js';

type Range = readonly [number, number];
type CharSet = readonly Range[];

const kMaxChar = 0xffff;
const kNone: CharSet = [];

function normalize(ranges: Range[]): CharSet {
  const sorted = ranges.slice().sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function union(a: CharSet, b: CharSet): CharSet {
  return normalize([...a, ...b]);
}

function complement(a: CharSet): CharSet {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of a) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= kMaxChar) out.push([next, kMaxChar]);
  return out;
}

function overlaps(a: CharSet, b: CharSet): boolean {
  for (const [alo, ahi] of a) for (const [blo, bhi] of b) if (alo <= bhi && blo <= ahi) return true;
  return false;
}

function ch(c: string): CharSet {
  const code = c.charCodeAt(0);
  return [[code, code]];
}

const kDigit: CharSet = [[0x30, 0x39]];
const kWord: CharSet = normalize([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]);
const kSpace: CharSet = normalize([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
const kDot: CharSet = complement(normalize([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]));

type RNode =
  | { readonly t: 'char'; readonly set: CharSet }
  | { readonly t: 'assert' }
  | { readonly t: 'group'; readonly alts: readonly (readonly RNode[])[] }
  | { readonly t: 'quant'; readonly min: number; readonly max: number; readonly body: RNode; readonly at: number };

/** Why a pattern was refused, with the offset in the pattern. */
export class RegexRejection extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

class Parser {
  pos = 0;
  constructor(readonly src: string) {}

  fail(message: string, at = this.pos): never {
    throw new RegexRejection(message, at);
  }

  peek(): string | undefined {
    return this.src[this.pos];
  }

  parse(): RNode {
    const node = this.disjunction();
    if (this.pos < this.src.length) this.fail(`unexpected '${this.src[this.pos]}'`);
    return node;
  }

  disjunction(): RNode {
    const alts: RNode[][] = [this.alternative()];
    while (this.peek() === '|') {
      this.pos++;
      alts.push(this.alternative());
    }
    return { t: 'group', alts };
  }

  alternative(): RNode[] {
    const terms: RNode[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') return terms;
      terms.push(this.term());
    }
  }

  term(): RNode {
    const start = this.pos;
    const c = this.peek() as string;
    if (c === '^' || c === '$') {
      this.pos++;
      return this.noQuantifier({ t: 'assert' });
    }
    if (c === '\\' && (this.src[this.pos + 1] === 'b' || this.src[this.pos + 1] === 'B')) {
      this.pos += 2;
      return this.noQuantifier({ t: 'assert' });
    }
    const atom = this.atom();
    return this.quantifier(atom, start);
  }

  noQuantifier(node: RNode): RNode {
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?' || c === '{') this.fail('a quantifier cannot follow an assertion');
    return node;
  }

  quantifier(atom: RNode, start: number): RNode {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(this.src.slice(this.pos));
      if (m === null) this.fail("'{' must start a quantifier like {2,5}; write \\{ for the character");
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (max < min) this.fail('quantifier range is out of order');
      this.pos += m[0].length - 1;
    } else return atom;
    this.pos++;
    if (this.peek() === '?') this.pos++; // lazy: same backtracking bound
    const next = this.peek();
    if (next === '*' || next === '+' || next === '{') {
      this.fail('a quantifier cannot follow a quantifier');
    }
    return { t: 'quant', min, max, body: atom, at: start };
  }

  atom(): RNode {
    const c = this.peek() as string;
    const at = this.pos;
    switch (c) {
      case '.':
        this.pos++;
        return { t: 'char', set: kDot };
      case '[':
        return { t: 'char', set: this.charClass() };
      case '(':
        return this.group();
      case '\\':
        return { t: 'char', set: this.escape(false) };
      case '*':
      case '+':
      case '?':
        return this.fail('nothing to repeat');
      case '{':
        return this.fail("'{' must start a quantifier like {2,5}; write \\{ for the character");
      case '}':
      case ']':
        return this.fail(`write \\${c} for the character '${c}'`, at);
      default:
        this.pos++;
        return { t: 'char', set: ch(c) };
    }
  }

  group(): RNode {
    const at = this.pos;
    this.pos++; // (
    if (this.peek() === '?') {
      const rest = this.src.slice(this.pos, this.pos + 3);
      if (rest.startsWith('?:')) this.pos += 2;
      else if (rest.startsWith('?=') || rest.startsWith('?!') || rest.startsWith('?<=') || rest.startsWith('?<!')) {
        this.fail('lookahead and lookbehind are not supported', at);
      } else if (rest.startsWith('?<')) {
        const m = /^\?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(this.src.slice(this.pos));
        if (m === null) this.fail('malformed group name', at);
        this.pos += m[0].length;
      } else {
        this.fail('inline flags and other (?...) groups are not supported; use lowerAscii() or a character class for case', at);
      }
    }
    const inner = this.disjunction();
    if (this.peek() !== ')') this.fail("missing ')'", at);
    this.pos++;
    return inner;
  }

  charClass(): CharSet {
    const at = this.pos;
    this.pos++; // [
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.pos++;
    }
    const ranges: Range[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail("missing ']'", at);
      if (c === ']') {
        this.pos++;
        break;
      }
      const lo = this.classAtom();
      if (this.peek() === '-' && this.src[this.pos + 1] !== ']' && this.src[this.pos + 1] !== undefined) {
        this.pos++;
        const hi = this.classAtom();
        if (lo.length !== 1 || hi.length !== 1 || lo[0]?.[0] !== lo[0]?.[1] || hi[0]?.[0] !== hi[0]?.[1]) {
          this.fail('a class range needs single characters on both sides');
        }
        const a = (lo[0] as Range)[0];
        const b = (hi[0] as Range)[0];
        if (b < a) this.fail('class range out of order');
        ranges.push([a, b]);
      } else ranges.push(...lo);
    }
    const set = normalize(ranges);
    return negate ? complement(set) : set;
  }

  classAtom(): CharSet {
    const c = this.peek() as string;
    if (c === '\\') return this.escape(true);
    this.pos++;
    return ch(c);
  }

  escape(inClass: boolean): CharSet {
    const at = this.pos;
    this.pos++; // backslash
    const c = this.peek();
    if (c === undefined) this.fail('pattern ends with a backslash', at);
    this.pos++;
    switch (c) {
      case 'd': return kDigit;
      case 'D': return complement(kDigit);
      case 'w': return kWord;
      case 'W': return complement(kWord);
      case 's': return kSpace;
      case 'S': return complement(kSpace);
      case 't': return ch('\t');
      case 'n': return ch('\n');
      case 'r': return ch('\r');
      case 'v': return ch('\v');
      case 'f': return ch('\f');
      case 'b':
        if (inClass) return ch('\b');
        return this.fail('\\b is an assertion here', at);
      case '0':
        if (/[0-9]/.test(this.peek() ?? '')) this.fail('octal escapes are not supported', at);
        return ch('\0');
      case 'x': {
        const m = /^[0-9A-Fa-f]{2}/.exec(this.src.slice(this.pos));
        if (m === null) this.fail('\\x needs two hex digits', at);
        this.pos += 2;
        const code = parseInt(m[0], 16);
        return [[code, code]];
      }
      case 'u': {
        const m = /^[0-9A-Fa-f]{4}/.exec(this.src.slice(this.pos));
        if (m === null) this.fail('\\u needs four hex digits', at);
        this.pos += 4;
        const code = parseInt(m[0], 16);
        return [[code, code]];
      }
      case 'c': {
        const l = this.peek();
        if (l === undefined || !/[A-Za-z]/.test(l)) this.fail('\\c needs a letter', at);
        this.pos++;
        const code = l.charCodeAt(0) % 32;
        return [[code, code]];
      }
      case 'k':
        return this.fail('named backreferences are not supported', at);
      default:
        if (/[1-9]/.test(c)) return this.fail('backreferences are not supported', at);
        if (/[A-Za-z0-9]/.test(c)) return this.fail(`unknown escape \\${c}`, at);
        return ch(c);
    }
  }
}

// ---------------------------------------------------------------------------
// Analysis

function nullable(n: RNode): boolean {
  switch (n.t) {
    case 'char':
      return false;
    case 'assert':
      return true;
    case 'group':
      return n.alts.some((alt) => alt.every(nullable));
    case 'quant':
      return n.min === 0 || nullable(n.body);
  }
}

/** Every character the node may consume. */
function chars(n: RNode): CharSet {
  switch (n.t) {
    case 'char':
      return n.set;
    case 'assert':
      return kNone;
    case 'group':
      return n.alts.reduce<CharSet>((acc, alt) => alt.reduce<CharSet>((a, t) => union(a, chars(t)), acc), kNone);
    case 'quant':
      return n.max === 0 ? kNone : chars(n.body);
  }
}

/** Characters the node may start with. */
function first(n: RNode): CharSet {
  switch (n.t) {
    case 'char':
      return n.set;
    case 'assert':
      return kNone;
    case 'group':
      return n.alts.reduce<CharSet>((acc, alt) => union(acc, firstOfSequence(alt)), kNone);
    case 'quant':
      return n.max === 0 ? kNone : first(n.body);
  }
}

function firstOfSequence(seq: readonly RNode[]): CharSet {
  let out: CharSet = kNone;
  for (const t of seq) {
    out = union(out, first(t));
    if (!nullable(t)) break;
  }
  return out;
}

/** Characters the node may end with. */
function last(n: RNode): CharSet {
  switch (n.t) {
    case 'char':
      return n.set;
    case 'assert':
      return kNone;
    case 'group':
      return n.alts.reduce<CharSet>((acc, alt) => union(acc, lastOfSequence(alt)), kNone);
    case 'quant':
      return n.max === 0 ? kNone : last(n.body);
  }
}

function lastOfSequence(seq: readonly RNode[]): CharSet {
  let out: CharSet = kNone;
  for (let i = seq.length - 1; i >= 0; i--) {
    const t = seq[i] as RNode;
    out = union(out, last(t));
    if (!nullable(t)) break;
  }
  return out;
}

function isVariable(n: RNode): boolean {
  return n.t === 'quant' && n.min !== n.max;
}

function variableQuantifiers(n: RNode, out: RNode[] = []): RNode[] {
  if (n.t === 'quant') {
    if (isVariable(n)) out.push(n);
    variableQuantifiers(n.body, out);
  } else if (n.t === 'group') for (const alt of n.alts) for (const t of alt) variableQuantifiers(t, out);
  return out;
}

/** A "wide" quantifier can eat many characters of the same kind. */
function isWide(n: RNode): boolean {
  return n.t === 'quant' && n.max - n.min >= 16;
}

function containsWide(n: RNode): boolean {
  if (isWide(n)) return true;
  if (n.t === 'quant') return containsWide(n.body);
  if (n.t === 'group') return n.alts.some((alt) => alt.some(containsWide));
  return false;
}

/** Flattens single-alternative groups that are not quantified into the sequence. */
function flatten(seq: readonly RNode[]): RNode[] {
  const out: RNode[] = [];
  for (const t of seq) {
    if (t.t === 'group' && t.alts.length === 1) out.push(...flatten(t.alts[0] as RNode[]));
    else out.push(t);
  }
  return out;
}

function offsetOf(n: RNode): number {
  return n.t === 'quant' ? n.at : 0;
}

/** Checks a repetition (max > 1) of `body`. */
function checkRepetition(q: Extract<RNode, { t: 'quant' }>): void {
  const body = q.body;
  if (nullable(body)) throw new RegexRejection('a repeated part can match the empty string', q.at);
  const inner = variableQuantifiers(body);
  if (body.t === 'group' && body.alts.length > 1) {
    if (inner.length > 0) throw new RegexRejection('nested quantifier inside a repeated alternation', q.at);
    const firsts = body.alts.map(firstOfSequence);
    for (let i = 0; i < firsts.length; i++) {
      for (let j = i + 1; j < firsts.length; j++) {
        if (overlaps(firsts[i] as CharSet, firsts[j] as CharSet)) {
          throw new RegexRejection(
            'repeated alternation with branches that can start with the same character',
            q.at,
          );
        }
      }
    }
    return;
  }
  if (inner.length === 0) return;
  // Nested quantifier: allowed only with a mandatory delimiter at the end of
  // each repetition that no inner quantifier can consume.
  const seq = body.t === 'group' ? flatten(body.alts[0] as RNode[]) : [body];
  const last = seq[seq.length - 1];
  const innerChars = inner.reduce<CharSet>((acc, n) => union(acc, chars(n)), kNone);
  if (last === undefined || last.t !== 'char' || overlaps(last.set, innerChars)) {
    throw new RegexRejection(
      'nested quantifier (a repeated part that itself repeats), e.g. (a+)+; end each repetition with a character the inner part cannot match',
      q.at,
    );
  }
}

/** Checks one sequence for adjacent wide quantifiers that compete for characters. */
function checkSequence(seq: readonly RNode[]): void {
  const flat = flatten(seq);
  for (let i = 0; i < flat.length; i++) {
    const a = flat[i] as RNode;
    if (!containsWide(a)) continue;
    const aChars = chars(a);
    for (let j = i + 1; j < flat.length; j++) {
      const b = flat[j] as RNode;
      // Ambiguous when what `a` can end with can also start what follows up
      // to and including `b`, and `b` competes for `a`'s characters.
      if (containsWide(b) && overlaps(aChars, chars(b)) && overlaps(last(a), firstOfSequence(flat.slice(i + 1, j + 1)))) {
        throw new RegexRejection(
          'two repeated parts in a row can match the same characters (e.g. \\d+\\d+ or .*a.*), which backtracks polynomially',
          offsetOf(b),
        );
      }
      // A mandatory part the first quantifier cannot eat at all separates them.
      if (!nullable(b) && !overlaps(chars(b), aChars)) break;
    }
  }
}

function walk(n: RNode): void {
  if (n.t === 'quant') {
    if (n.max > 1) checkRepetition(n);
    walk(n.body);
  } else if (n.t === 'group') {
    for (const alt of n.alts) {
      checkSequence(alt);
      for (const t of alt) walk(t);
    }
  }
}

/**
 * Checks a matches() pattern. Returns null when the pattern is accepted, or
 * the reason and offset it was refused.
 */
export function checkRegex(pattern: string): { message: string; offset: number } | null {
  if (pattern.length > kMaxRegexPatternLength) {
    return { message: `pattern is longer than ${kMaxRegexPatternLength} characters`, offset: 0 };
  }
  try {
    walk(new Parser(pattern).parse());
    new RegExp(pattern); // what we checked must also be what V8 accepts
    return null;
  } catch (err) {
    if (err instanceof RegexRejection) return { message: err.message, offset: err.offset };
    return { message: `invalid pattern: ${(err as Error).message}`, offset: 0 };
  }
}
