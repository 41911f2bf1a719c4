// A reader of the protocol buffer text format, enough for google/cel-spec's
// conformance files (test/compiler/cel-spec). No schema: every field is
// collected into an array, messages become objects of such arrays, scalars
// stay their text (strings decoded). Test tooling for vendored data.

export type TextValue = string | TextMessage;
export interface TextMessage {
  [field: string]: TextValue[];
}

class Reader {
  #i = 0;
  constructor(readonly text: string) {}

  #skip(): void {
    const s = this.text;
    for (;;) {
      while (this.#i < s.length && /\s/.test(s[this.#i]!)) this.#i++;
      if (s[this.#i] === '#') {
        while (this.#i < s.length && s[this.#i] !== '\n') this.#i++;
        continue;
      }
      return;
    }
  }

  peek(): string {
    this.#skip();
    return this.text[this.#i] ?? '';
  }

  take(ch: string): boolean {
    if (this.peek() !== ch) return false;
    this.#i++;
    return true;
  }

  expect(ch: string): void {
    if (!this.take(ch)) throw new Error(`textproto: expected '${ch}' at ${this.#i}: ${this.text.slice(this.#i, this.#i + 40)}`);
  }

  /** A field name: an identifier, or an extension / Any type URL in brackets. */
  name(): string {
    if (this.take('[')) {
      const start = this.#i;
      while (this.text[this.#i] !== ']') this.#i++;
      const name = this.text.slice(start, this.#i).trim();
      this.#i++;
      return `[${name}]`;
    }
    return this.word();
  }

  word(): string {
    this.#skip();
    const m = /^[-+]?[A-Za-z0-9_.]+(?:[-+][0-9]+)?/.exec(this.text.slice(this.#i, this.#i + 400));
    if (m === null) throw new Error(`textproto: expected a value at ${this.#i}: ${this.text.slice(this.#i, this.#i + 40)}`);
    this.#i += m[0].length;
    return m[0];
  }

  /** One or more adjacent quoted strings, escapes decoded as UTF-8 bytes. */
  string(): string {
    const bytes: number[] = [];
    while (this.peek() === '"' || this.peek() === "'") {
      const quote = this.text[this.#i++]!;
      for (;;) {
        const c = this.text[this.#i++];
        if (c === undefined) throw new Error('textproto: unterminated string');
        if (c === quote) break;
        if (c !== '\\') {
          bytes.push(...Buffer.from(c, 'utf8'));
          continue;
        }
        const e = this.text[this.#i++]!;
        const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, "'": 39, '"': 34, '?': 63 };
        if (simple[e] !== undefined) bytes.push(simple[e]!);
        else if (e === 'x' || e === 'X') {
          const m = /^[0-9a-fA-F]{1,2}/.exec(this.text.slice(this.#i))!;
          bytes.push(parseInt(m[0], 16));
          this.#i += m[0].length;
        } else if (e === 'u' || e === 'U') {
          const n = e === 'u' ? 4 : 8;
          bytes.push(...Buffer.from(String.fromCodePoint(parseInt(this.text.slice(this.#i, this.#i + n), 16)), 'utf8'));
          this.#i += n;
        } else if (/[0-7]/.test(e)) {
          const m = /^[0-7]{0,2}/.exec(this.text.slice(this.#i))!;
          bytes.push(parseInt(e + m[0], 8) & 0xff);
          this.#i += m[0].length;
        } else throw new Error(`textproto: unknown escape \\${e}`);
      }
    }
    return Buffer.from(bytes).toString('utf8');
  }

  message(close: string): TextMessage {
    const out: TextMessage = {};
    while (this.peek() !== close) {
      if (this.peek() === '') {
        if (close === '') break;
        throw new Error('textproto: unexpected end');
      }
      const field = this.name();
      const hasColon = this.take(':');
      let values: TextValue[];
      if (this.peek() === '[' && hasColon) {
        // A list of values: field: [a, b]
        this.expect('[');
        values = [];
        while (!this.take(']')) {
          values.push(this.value());
          this.take(',');
        }
      } else values = [this.value()];
      (out[field] ??= []).push(...values);
      if (!this.take(';')) this.take(',');
    }
    return out;
  }

  value(): TextValue {
    const c = this.peek();
    if (c === '{' || c === '<') {
      this.take(c);
      const m = this.message(c === '{' ? '}' : '>');
      this.expect(c === '{' ? '}' : '>');
      return m;
    }
    if (c === '"' || c === "'") return this.string();
    return this.word();
  }
}

export function parseTextproto(text: string): TextMessage {
  return new Reader(text).message('');
}

/** The single value of a field, or undefined. */
export function one(m: TextMessage | undefined, field: string): TextValue | undefined {
  return m?.[field]?.[0];
}
