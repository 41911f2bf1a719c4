// The start's load of the event log on its own thread (scoring/start-loads.ts): when it cannot
// load, the start is told so (the HTTP restart test checks what it loads).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoads } from '../../src/scoring/start-loads.js';
import { KeyHasher } from '../../src/state/keys.js';

test('a data dir without a database: the load fails, and the start sees the reason', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'fraud-scorer-start-loads-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const secret = randomBytes(32);
  const loads = startLoads(dataDir, secret, new KeyHasher(secret), Date.now());
  await t.throwsAsync(loads.result, { instanceOf: Error, message: /^the start's load of the event log failed: .*(unable to open|SQLITE_CANTOPEN)/i });
});
