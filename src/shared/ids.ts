import { randomBytes } from 'node:crypto';

const kAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// 62 * 4 = 248: bytes at or above it are dropped so that every character is equally likely.
const kUnbiasedLimit = 248;

/** A uniformly random string of `length` characters from [A-Za-z0-9], from the OS CSPRNG. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      const byte = bytes[i]!;
      if (byte < kUnbiasedLimit) out += kAlphabet[byte % 62];
    }
  }
  return out;
}

export type IdPrefix = 'ten' | 'prj' | 'key' | 'acc' | 'case' | 'fp' | 'evt' | 'whk' | 'msg' | 'aud' | 'bt';

/** Public identifiers: a prefix and 20 random characters (~119 bits), never a counter. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}
