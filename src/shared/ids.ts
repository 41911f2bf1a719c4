import { randomFillSync } from 'node:crypto';

const kAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// 62 * 4 = 248: bytes at or above it are dropped so that every character is equally likely.
const kUnbiasedLimit = 248;

// Random bytes are taken from a pool that the CSPRNG refills 4 KiB at a time, as node does for
// crypto.randomUUID: a randomBytes call per id cost 5–14 µs here (bench/README.md, step 56), a
// byte of the pool a few nanoseconds. Each thread has its own pool; a byte is used once.
const kPoolBytes = 4096;
const pool = Buffer.allocUnsafeSlow(kPoolBytes);
let poolAt = kPoolBytes;

function randomByte(): number {
  if (poolAt === kPoolBytes) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** A uniformly random string of `length` characters from [A-Za-z0-9], from the OS CSPRNG. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < kUnbiasedLimit) out += kAlphabet[byte % 62];
  }
  return out;
}

export type IdPrefix = 'ten' | 'prj' | 'key' | 'acc' | 'case' | 'fp' | 'evt' | 'whk' | 'msg' | 'aud' | 'bt';

/** Public identifiers: a prefix and 20 random characters (~119 bits), never a counter. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}

const kSortableAlphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const kTimeChars = 8;

/**
 * The same form (a prefix and 20 characters of [A-Za-z0-9]), made of the creation time in ms (8
 * characters, in an alphabet that sorts as the time does) and 12 random characters (~71 bits):
 * for the keys of tables that new rows are added to all the time (accounts, cases), so that a new
 * row goes to the end of its table and its indexes keyed by it, beside the other new rows, instead of
 * to a random page (bench/README.md, step 32). Still not a counter and not guessable.
 */
export function newSortableId(prefix: IdPrefix, now = Date.now()): string {
  let time = '';
  for (let rest = Math.floor(now), i = 0; i < kTimeChars; i++, rest = Math.floor(rest / 62)) time = kSortableAlphabet[rest % 62]! + time;
  return `${prefix}_${time}${randomBase62(20 - kTimeChars)}`;
}
