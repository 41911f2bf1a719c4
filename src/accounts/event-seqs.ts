// An account's event rows as the store keeps them for erasure (migration 17): a list of seqs as
// unsigned LEB128 varints, appended to as the account's events are written in bulk. Erasure reads
// the list instead of an index of the event log by account, which took a page at a random key for
// every event with an account (bench/README.md, step 27). Pure.

/** Bytes an account row keeps before its list moves to a row of account_event_seqs. */
export const kOpenSeqsBytes = 64;

/** `seqs` (positive integers up to 2^53) as varints, in the order given. */
export function encodeSeqs(seqs: readonly number[]): Buffer {
  let length = 0;
  for (const seq of seqs) length += varintLength(seq);
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (let seq of seqs) {
    // Division instead of shifts: seqs may pass 2^31.
    while (seq >= 0x80) {
      bytes[at++] = (seq % 0x80) | 0x80;
      seq = Math.floor(seq / 0x80);
    }
    bytes[at++] = seq;
  }
  return bytes;
}

/** The seqs of one or more lists made by encodeSeqs, appended to `into`. */
export function decodeSeqs(bytes: Uint8Array, into: number[] = []): number[] {
  let value = 0;
  let scale = 1;
  for (const byte of bytes) {
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      into.push(value);
      value = 0;
      scale = 1;
    } else {
      scale *= 0x80;
    }
  }
  return into;
}

function varintLength(seq: number): number {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`not a seq: ${seq}`);
  let length = 1;
  while (seq >= 0x80) {
    seq = Math.floor(seq / 0x80);
    length++;
  }
  return length;
}
