// Lengths of text, and white space, as the documents count them. Pure.

/**
 * The length of `text` in characters (code points), as the documents count it and as the event
 * input's limits count it (ajv's maxLength): `String.length` counts UTF-16 units, two for an emoji.
 */
export function characterLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/**
 * Unicode White_Space (PropList.txt), what CEL's trim() removes and what "only white space" means in
 * the documents: unlike JavaScript's trim() it includes U+0085 (next line) and excludes U+FEFF
 * (byte order mark), which is not white space.
 */
export function isWhiteSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0x85) return false;
  return c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 ||
    c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/** Whether `text` is empty or holds nothing but white space (isWhiteSpace). */
export function isOnlyWhiteSpace(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isWhiteSpace(text.charCodeAt(i))) return false;
  return true;
}
