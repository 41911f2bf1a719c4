// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012), in 32-bit halves
// because JavaScript has no fast 64-bit integers. The hot state keys everything by keyed hashes of
// the values (src/state/keys.ts): a lookup costs a fraction of a microsecond, where an HMAC-SHA256
// from node:crypto costs several, and with a secret key the hashes kept at rest cannot be matched
// against guessed emails or phone numbers. Pure.
//
// A 64-bit lane is a pair (hi, lo) of uint32. The state v0..v3 lives in one Uint32Array.

const v = new Uint32Array(8); // v0 hi, v0 lo, v1 hi, v1 lo, v2 hi, v2 lo, v3 hi, v3 lo
const m = new Uint32Array(2); // the current message word (hi, lo)

/** A SipHash key: 128 bits as four uint32, k0 = (k[0] hi, k[1] lo), k1 = (k[2] hi, k[3] lo). */
export type SipKey = Uint32Array;

/** A key from 16 bytes (little-endian k0 then k1, as in the reference implementation). */
export function sipKey(bytes: Uint8Array): SipKey {
  if (bytes.length !== 16) throw new RangeError('a SipHash key is 16 bytes');
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  return Uint32Array.of(view.getUint32(4, true), view.getUint32(0, true), view.getUint32(12, true), view.getUint32(8, true));
}

// (hi, lo) += (hi2, lo2)
function add(a: number, b: number): void {
  const lo = (v[a + 1]! + v[b + 1]!) >>> 0;
  v[a] = (v[a]! + v[b]! + (lo < v[a + 1]! ? 1 : 0)) >>> 0;
  v[a + 1] = lo;
}

// rotate lane `a` left by n bits (0 < n < 64)
function rotl(a: number, n: number): void {
  let hi = v[a]!;
  let lo = v[a + 1]!;
  if (n >= 32) {
    const t = hi;
    hi = lo;
    lo = t;
    n -= 32;
  }
  if (n === 0) {
    v[a] = hi;
    v[a + 1] = lo;
    return;
  }
  v[a] = ((hi << n) | (lo >>> (32 - n))) >>> 0;
  v[a + 1] = ((lo << n) | (hi >>> (32 - n))) >>> 0;
}

// lane a ^= lane b
function xor(a: number, b: number): void {
  v[a] = (v[a]! ^ v[b]!) >>> 0;
  v[a + 1] = (v[a + 1]! ^ v[b + 1]!) >>> 0;
}

function swapHalves(a: number): void {
  const t = v[a]!;
  v[a] = v[a + 1]!;
  v[a + 1] = t;
}

const V0 = 0;
const V1 = 2;
const V2 = 4;
const V3 = 6;

function round(): void {
  add(V0, V1); rotl(V1, 13); xor(V1, V0); swapHalves(V0);
  add(V2, V3); rotl(V3, 16); xor(V3, V2);
  add(V0, V3); rotl(V3, 21); xor(V3, V0);
  add(V2, V1); rotl(V1, 17); xor(V1, V2); swapHalves(V2);
}

function absorb(): void {
  v[V3] = (v[V3]! ^ m[0]!) >>> 0;
  v[V3 + 1] = (v[V3 + 1]! ^ m[1]!) >>> 0;
  round();
  round();
  v[V0] = (v[V0]! ^ m[0]!) >>> 0;
  v[V0 + 1] = (v[V0 + 1]! ^ m[1]!) >>> 0;
}

/**
 * SipHash-2-4 of `bytes[0..length)` under `key`; the 64-bit result is written to out[at] (hi) and
 * out[at + 1] (lo).
 */
export function sipHash(key: SipKey, bytes: Uint8Array, length: number, out: Uint32Array, at: number): void {
  // v0 = k0 ^ "somepseu", v1 = k1 ^ "dorandom", v2 = k0 ^ "lygenera", v3 = k1 ^ "tedbytes"
  v[0] = (key[0]! ^ 0x736f6d65) >>> 0; v[1] = (key[1]! ^ 0x70736575) >>> 0;
  v[2] = (key[2]! ^ 0x646f7261) >>> 0; v[3] = (key[3]! ^ 0x6e646f6d) >>> 0;
  v[4] = (key[0]! ^ 0x6c796765) >>> 0; v[5] = (key[1]! ^ 0x6e657261) >>> 0;
  v[6] = (key[2]! ^ 0x74656462) >>> 0; v[7] = (key[3]! ^ 0x79746573) >>> 0;
  const whole = length & ~7;
  for (let i = 0; i < whole; i += 8) {
    m[1] = (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) >>> 0;
    m[0] = (bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24)) >>> 0;
    absorb();
  }
  // The last word: the remaining bytes, and the length's low byte in the top byte.
  let lo = 0;
  let hi = (length & 0xff) << 24;
  const rest = length - whole;
  for (let j = 0; j < rest; j++) {
    const byte = bytes[whole + j]!;
    if (j < 4) lo |= byte << (8 * j);
    else hi |= byte << (8 * (j - 4));
  }
  m[0] = hi >>> 0;
  m[1] = lo >>> 0;
  absorb();
  v[V2 + 1] = (v[V2 + 1]! ^ 0xff) >>> 0;
  round(); round(); round(); round();
  out[at] = (v[0]! ^ v[2]! ^ v[4]! ^ v[6]!) >>> 0;
  out[at + 1] = (v[1]! ^ v[3]! ^ v[5]! ^ v[7]!) >>> 0;
}
