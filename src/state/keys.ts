// Keys of the hot state: 64- or 128-bit keyed hashes (SipHash-2-4, siphash.ts) of a domain byte, a
// small integer (project or account space) and a string. Two independent SipHash keys, derived
// from the install secret, give the two halves of a 128-bit key. Pure once constructed.
import { createHmac } from 'node:crypto';
import { sipHash, sipKey, type SipKey } from './siphash.js';

/** What a key is of; part of the hashed bytes, so equal strings of two domains never collide. */
export const enum KeyDomain {
  EventId = 1,
  /** A project's number in the keys of event ids (scoring/event-ids.ts). */
  EventProject = 4,
  ExternalAccountId = 2,
  PublicAccountId = 3,
  Email = 10,
  Phone = 11,
  Fp = 12,
  Ip = 13,
  Card = 14,
  VelocityCard = 20,
  VelocityIp = 21,
  VelocityAccount = 22,
  VelocityEmail = 23,
  VelocityFp = 24,
  /** A signal value's stored keyed hash, cached (signals/keyed-hash-cache.ts). */
  StoredHash = 30,
  /** A presented API key's SHA-256, cached (auth/key-registry.ts). */
  ApiKeyHash = 31,
}

const kHeaderBytes = 5;

export class KeyHasher {
  readonly #first: SipKey;
  readonly #second: SipKey;
  readonly #encoder = new TextEncoder();
  #buffer = new Uint8Array(1024);

  constructor(installSecret: Buffer) {
    this.#first = sipKey(createHmac('sha256', installSecret).update('fraud-scorer state key 1').digest().subarray(0, 16));
    this.#second = sipKey(createHmac('sha256', installSecret).update('fraud-scorer state key 2').digest().subarray(0, 16));
  }

  /** Writes the 64-bit key of (domain, scope, value) to out[at], out[at + 1]. */
  key64(domain: KeyDomain, scope: number, value: string, out: Uint32Array, at: number): void {
    sipHash(this.#first, this.#buffer, this.#encode(domain, scope, value), out, at);
  }

  /** Writes the 128-bit key of (domain, scope, value) to out[at..at + 4). */
  key128(domain: KeyDomain, scope: number, value: string, out: Uint32Array, at: number): void {
    const length = this.#encode(domain, scope, value);
    sipHash(this.#first, this.#buffer, length, out, at);
    sipHash(this.#second, this.#buffer, length, out, at + 2);
  }

  #encode(domain: KeyDomain, scope: number, value: string): number {
    if (value.length * 3 + kHeaderBytes > this.#buffer.length) this.#buffer = new Uint8Array(value.length * 3 + kHeaderBytes);
    const buffer = this.#buffer;
    buffer[0] = domain;
    buffer[1] = scope & 0xff;
    buffer[2] = (scope >>> 8) & 0xff;
    buffer[3] = (scope >>> 16) & 0xff;
    buffer[4] = (scope >>> 24) & 0xff;
    // ASCII (nearly every id, email, IP) is copied char by char: TextEncoder.encodeInto and the
    // subarray it needs cost more than the hash itself for values this short.
    let at = kHeaderBytes;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) return kHeaderBytes + this.#encoder.encodeInto(value, buffer.subarray(kHeaderBytes)).written;
      buffer[at++] = code;
    }
    return at;
  }
}
