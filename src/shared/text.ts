// Lengths of text as the documents count them. Pure.

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
