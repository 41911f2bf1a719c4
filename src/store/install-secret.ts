// A random secret made once per installation and kept in the database (meta.install_secret).
// Keyed hashes of signals (emails, phones, device fingerprints) use it, so that identifiers derived
// here cannot be recomputed, or matched against another installation's, without this database.
import { randomBytes } from 'node:crypto';
import type { Db } from './database.js';

const kSecretBytes = 32;

/** The install secret (32 bytes), created on first use. */
export function installSecret(db: Db): Buffer {
  db.prepare("INSERT OR IGNORE INTO meta (name, value) VALUES ('install_secret', ?)").run(randomBytes(kSecretBytes).toString('base64'));
  const row = db.prepare("SELECT value FROM meta WHERE name = 'install_secret'").get() as { value: string };
  return Buffer.from(row.value, 'base64');
}
