// For migrations that list rows' event seqs (17, 18): an SQL aggregate that makes the varint
// list of src/accounts/event-seqs.ts from a group's seqs.
import { encodeSeqs } from '../../accounts/event-seqs.js';
import type { Db } from '../database.js';

/** Registers fs_encode_seqs(seq) on the connection (again: the same definition replaces itself). */
export function registerEncodeSeqs(db: Db): void {
  db.aggregate('fs_encode_seqs', {
    start: () => [] as number[],
    step: (seqs: number[], seq: number) => {
      seqs.push(seq);
    },
    result: (seqs: number[]) => encodeSeqs(seqs),
  });
}
