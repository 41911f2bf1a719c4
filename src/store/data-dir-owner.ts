// A command run as root (`sudo fraud-scorer backup`, `accounts erase`) on a data dir that the
// service's own user owns: the files it makes there (server.lock, start-snapshot) are given to
// that user, as SQLite gives its -wal and -shm. Left to root, they stop the service's next start,
// which cannot make them private (secureDataDir) nor lock or replace them.
import { chownSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Gives `path` (a file just made in a data dir) to the data dir's owner when this process is root and the owner is not. */
export function giveToDataDirOwner(path: string): void {
  if (process.getuid?.() !== 0) return;
  const owner = statSync(dirname(path));
  if (owner.uid === 0) return;
  chownSync(path, owner.uid, owner.gid);
}
