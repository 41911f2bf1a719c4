// The data dir lock in one process: held until released, refused meanwhile, free again after.
// (Across processes, with a server and SIGKILL: test/cli/process.test.ts.)
import test from 'ava';
import { acquireDataDirLock, DataDirLockedError } from '../../src/store/data-dir-lock.js';
import { makeDataDir } from '../_helpers/server.js';

test('a held lock is refused with DataDirLockedError until it is released', (t) => {
  const dataDir = makeDataDir();
  const lock = acquireDataDirLock(dataDir);
  const refused = t.throws(() => acquireDataDirLock(dataDir), { instanceOf: DataDirLockedError });
  t.regex(refused!.message, /in use by another fraud-scorer process, a server/);
  lock.release();
  const again = acquireDataDirLock(dataDir);
  again.release();
});
