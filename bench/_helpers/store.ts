// A fresh data dir with the schema, a bootstrapped tenant and the default preset published: what
// the in-process benchmarks measure against.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { installSecret } from '../../src/store/install-secret.js';
import { bootstrapIfEmpty, type BootstrapResult } from '../../src/tenancy/provision.js';

export interface BenchStore {
  readonly dataDir: string;
  readonly db: Db;
  readonly bootstrap: BootstrapResult;
  readonly secret: Buffer;
  remove(): void;
}

/** `dir`: where to make it (created if missing); a new temporary dir when not given. */
export function createBenchStore(dir?: string): BenchStore {
  if (dir !== undefined) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'fraud-scorer-bench-'));
  const db = openDatabase(dataDir);
  migrate(db);
  const bootstrap = bootstrapIfEmpty(db, Date.now())!;
  const secret = installSecret(db);
  return { dataDir, db, bootstrap, secret, remove: () => { db.close(); rmSync(dataDir, { recursive: true, force: true }); } };
}
