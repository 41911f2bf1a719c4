// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012), in 32-bit halves
// because JavaScript has no fast 64-bit integers. The hot state keys everything by keyed hashes of
// the values (src/state/keys.ts): a lookup costs a fraction of a microsecond, where an HMAC-SHA256
// from node:crypto costs several, and with a secret key the hashes kept at rest cannot be matched
// against guessed emails or phone numbers. Pure.
//
// A 64-bit lane is a pair (hi, lo) of int32 locals. The state lives in eight locals rather than a
// typed array with a helper call per lane operation: that first version cost ~1.4 µs per 64-bit
// hash of a 25-byte value here, this one a tenth of it (bench/state/hot-state.bench.ts prints it).

/** A SipHash key: 128 bits as four uint32, k0 = (k[0] hi, k[1] lo), k1 = (k[2] hi, k[3] lo). */
export type SipKey = Uint32Array;

/** A key from 16 bytes (little-endian k0 then k1, as in the reference implementation). */
export function sipKey(bytes: Uint8Array): SipKey {
  if (bytes.length !== 16) throw new RangeError('a SipHash key is 16 bytes');
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  return Uint32Array.of(view.getUint32(4, true), view.getUint32(0, true), view.getUint32(12, true), view.getUint32(8, true));
}

/**
 * SipHash-2-4 of `bytes[0..length)` under `key`; the 64-bit result is written to out[at] (hi) and
 * out[at + 1] (lo).
 */
export function sipHash(key: SipKey, bytes: Uint8Array, length: number, out: Uint32Array, at: number): void {
  // v0 = k0 ^ "somepseu", v1 = k1 ^ "dorandom", v2 = k0 ^ "lygenera", v3 = k1 ^ "tedbytes"
  let v0h = key[0]! ^ 0x736f6d65; let v0l = key[1]! ^ 0x70736575;
  let v1h = key[2]! ^ 0x646f7261; let v1l = key[3]! ^ 0x6e646f6d;
  let v2h = key[0]! ^ 0x6c796765; let v2l = key[1]! ^ 0x6e657261;
  let v3h = key[2]! ^ 0x74656462; let v3l = key[3]! ^ 0x79746573;
  const whole = length & ~7;
  // Message words 0..last-1 are whole 8-byte words; word `last` holds the tail and the length;
  // then one more pass of 4 rounds finalises. One loop keeps a single copy of the round.
  const last = whole >>> 3;
  let l = 0;
  let t = 0;
  for (let word = 0; word <= last + 1; word++) {
    let mh = 0;
    let ml = 0;
    let rounds = 4;
    if (word < last) {
      const i = word << 3;
      ml = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
      mh = bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24);
      rounds = 2;
    } else if (word === last) {
      // The remaining bytes, and the length's low byte in the top byte.
      mh = (length & 0xff) << 24;
      for (let j = 0; j < length - whole; j++) {
        const byte = bytes[whole + j]!;
        if (j < 4) ml |= byte << (8 * j);
        else mh |= byte << (8 * (j - 4));
      }
      rounds = 2;
    } else {
      v2l ^= 0xff;
    }
    v3h ^= mh; v3l ^= ml;
    for (let r = 0; r < rounds; r++) {
      // v0 += v1; v1 <<<= 13; v1 ^= v0; v0 <<<= 32
      l = (v0l + v1l) | 0; v0h = (v0h + v1h + ((l >>> 0) < (v0l >>> 0) ? 1 : 0)) | 0; v0l = l;
      t = v1h; v1h = (v1h << 13) | (v1l >>> 19); v1l = (v1l << 13) | (t >>> 19);
      v1h ^= v0h; v1l ^= v0l;
      t = v0h; v0h = v0l; v0l = t;
      // v2 += v3; v3 <<<= 16; v3 ^= v2
      l = (v2l + v3l) | 0; v2h = (v2h + v3h + ((l >>> 0) < (v2l >>> 0) ? 1 : 0)) | 0; v2l = l;
      t = v3h; v3h = (v3h << 16) | (v3l >>> 16); v3l = (v3l << 16) | (t >>> 16);
      v3h ^= v2h; v3l ^= v2l;
      // v0 += v3; v3 <<<= 21; v3 ^= v0
      l = (v0l + v3l) | 0; v0h = (v0h + v3h + ((l >>> 0) < (v0l >>> 0) ? 1 : 0)) | 0; v0l = l;
      t = v3h; v3h = (v3h << 21) | (v3l >>> 11); v3l = (v3l << 21) | (t >>> 11);
      v3h ^= v0h; v3l ^= v0l;
      // v2 += v1; v1 <<<= 17; v1 ^= v2; v2 <<<= 32
      l = (v2l + v1l) | 0; v2h = (v2h + v1h + ((l >>> 0) < (v2l >>> 0) ? 1 : 0)) | 0; v2l = l;
      t = v1h; v1h = (v1h << 17) | (v1l >>> 15); v1l = (v1l << 17) | (t >>> 15);
      v1h ^= v2h; v1l ^= v2l;
      t = v2h; v2h = v2l; v2l = t;
    }
    v0h ^= mh; v0l ^= ml;
  }
  out[at] = (v0h ^ v1h ^ v2h ^ v3h) >>> 0;
  out[at + 1] = (v0l ^ v1l ^ v2l ^ v3l) >>> 0;
}
