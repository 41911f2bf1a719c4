// Thread attribution for benchmarks and profiles. Every thread of the process is named "node" by
// the OS, so /proc/<pid>/task/<tid>/stat cannot tell the writer from a rule worker. With
// FS_ANNOUNCE_THREADS=1 each of our threads writes one JSON line to stderr naming its role and its
// OS thread id; bench/_helpers/proc.ts reads them. Off (and free) otherwise.
import { readlinkSync, writeSync } from 'node:fs';

/** Writes `{"message":"thread","role":…,"tid":…}` to stderr when FS_ANNOUNCE_THREADS=1. */
export function announceThread(role: string): void {
  if (process.env.FS_ANNOUNCE_THREADS !== '1') return;
  let link: string;
  try {
    // "<pid>/task/<tid>"; absent outside Linux (and on kernels before 3.17).
    link = readlinkSync('/proc/thread-self');
  } catch {
    return;
  }
  const tid = Number(link.slice(link.lastIndexOf('/') + 1));
  if (!Number.isInteger(tid)) return;
  // writeSync from the calling thread itself: a worker's process.stderr is relayed through the
  // main thread, which may be busy. One short line is one atomic write on a pipe.
  writeSync(2, `${JSON.stringify({ message: 'thread', role, tid })}\n`);
}
