// The schema history, in order. A migration is never edited once released: add a new one.
// The schema version is SQLite's user_version; each migration runs in its own transaction.
import { kTenancyMigration } from './001-tenancy.js';
import { kFingerprintsMigration } from './006-fingerprints.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const kMigrations: readonly Migration[] = [
  { version: 1, name: 'tenancy', sql: kTenancyMigration },
  { version: 6, name: 'fingerprints', sql: kFingerprintsMigration },
];
