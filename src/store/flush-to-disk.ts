// fsync by path, for what a rename must not lose in a power cut: the file renamed into place, and
// the directory that holds the new name (store/backup.ts, store/parts-file.ts).
import { closeSync, fsyncSync, openSync } from 'node:fs';

/** fsync a file, or a directory (so that a rename in it survives a power cut). */
export function flushToDisk(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
