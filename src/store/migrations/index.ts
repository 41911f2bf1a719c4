// The schema history, in order. A migration is never edited once released: add a new one.
// The schema version is SQLite's user_version; each migration runs in its own transaction.
import { kTenancyMigration } from './001-tenancy.js';
import { kRulesMigration } from './002-rules.js';
import { kEventsMigration } from './003-events.js';
import { kAccountsMigration } from './004-accounts.js';
import { kCasesMigration } from './005-cases.js';
import { kFingerprintsMigration } from './006-fingerprints.js';
import { kEnvironmentsMigrationAfter, kEnvironmentsMigrationBefore } from './007-environments.js';
import { kOperationsMigration } from './008-operations.js';
import { kListsLabelsAuditMigration } from './009-lists-labels-audit.js';
import { kRecordedSignalsMigration } from './010-recorded-signals.js';
import { kBacktestsMigration } from './011-backtests.js';
import { kEventLogMigration } from './012-event-log.js';
import { kDerivedRowsMigration } from './013-derived-rows.js';
import { kEventCaseMigration } from './014-event-case.js';
import { kSignalsByAccountMigration } from './015-signals-by-account.js';
import { kLinksWithoutJsonMigration } from './016-links-without-json.js';
import { kAccountEventSeqsMigration, kAccountEventSeqsMigrationAfter, moveAccountEventSeqs } from './017-account-event-seqs.js';
import { kCaseEventSeqsMigration, kCaseEventSeqsMigrationAfter, moveCaseEventSeqs } from './018-case-event-seqs.js';
import { kStartSnapshotMigration } from './019-start-snapshot.js';
import { kEventIdRunsMigration } from './020-event-id-runs.js';
import { kEventPayloadsMigration } from './021-event-payloads.js';
import { kPendingWithoutIndexMigration } from './022-pending-without-index.js';
import { kDerivedPartsOpenMigration } from './023-derived-parts-open.js';
import { kOutboxDueByProjectMigration } from './024-outbox-due-by-project.js';
import { kOutboxWindowAttemptsMigration } from './025-outbox-window-attempts.js';
import { kSignalsByFirstSeenMigration } from './026-signals-by-first-seen.js';
import { kPendingFromSeqMigration } from './027-pending-from-seq.js';
import { kEventPayloadsShallowMigration } from './028-event-payloads-shallow.js';
import { kOperatorErasuresMigration } from './029-operator-erasures.js';
import { splitEnvironments } from '../../accounts/split-environments.js';
import { writeEventIdRunsOfLog } from '../../scoring/event-id-runs.js';
import type { Db } from '../database.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** A step that needs code (recomputing keyed hashes), run after `sql` in the same transaction. */
  readonly run?: (db: Db) => void;
  /** SQL run after `run`. */
  readonly sqlAfter?: string;
}

export const kMigrations: readonly Migration[] = [
  { version: 1, name: 'tenancy', sql: kTenancyMigration },
  { version: 2, name: 'rules', sql: kRulesMigration },
  { version: 3, name: 'events', sql: kEventsMigration },
  { version: 4, name: 'accounts', sql: kAccountsMigration },
  { version: 5, name: 'cases', sql: kCasesMigration },
  { version: 6, name: 'fingerprints', sql: kFingerprintsMigration },
  { version: 7, name: 'environments', sql: kEnvironmentsMigrationBefore, run: splitEnvironments, sqlAfter: kEnvironmentsMigrationAfter },
  { version: 8, name: 'operations', sql: kOperationsMigration },
  { version: 9, name: 'lists, labels and audit', sql: kListsLabelsAuditMigration },
  { version: 10, name: 'recorded signals', sql: kRecordedSignalsMigration },
  { version: 11, name: 'backtests', sql: kBacktestsMigration },
  { version: 12, name: 'event log', sql: kEventLogMigration },
  { version: 13, name: 'derived rows', sql: kDerivedRowsMigration },
  { version: 14, name: 'the case of an event on its row', sql: kEventCaseMigration },
  { version: 15, name: 'signals keyed by account', sql: kSignalsByAccountMigration },
  { version: 16, name: 'links without their JSON', sql: kLinksWithoutJsonMigration },
  { version: 17, name: 'event seqs kept with accounts', sql: kAccountEventSeqsMigration, run: moveAccountEventSeqs, sqlAfter: kAccountEventSeqsMigrationAfter },
  { version: 18, name: 'event seqs kept with cases', sql: kCaseEventSeqsMigration, run: moveCaseEventSeqs, sqlAfter: kCaseEventSeqsMigrationAfter },
  { version: 19, name: 'start snapshot seal', sql: kStartSnapshotMigration },
  { version: 20, name: 'event id runs', sql: kEventIdRunsMigration, run: writeEventIdRunsOfLog },
  { version: 21, name: 'event payloads with coded names', sql: kEventPayloadsMigration },
  { version: 22, name: 'pending events without an index', sql: kPendingWithoutIndexMigration },
  { version: 23, name: 'derived parts open', sql: kDerivedPartsOpenMigration },
  { version: 24, name: 'webhook messages due by project', sql: kOutboxDueByProjectMigration },
  { version: 25, name: 'webhook attempts in the retry window', sql: kOutboxWindowAttemptsMigration },
  { version: 26, name: 'signals keyed by first seen', sql: kSignalsByFirstSeenMigration },
  { version: 27, name: 'pending events read from a bound of their own', sql: kPendingFromSeqMigration },
  { version: 28, name: 'event payloads view an older sqlite3 can parse', sql: kEventPayloadsShallowMigration },
  { version: 29, name: 'operator erasures', sql: kOperatorErasuresMigration },
];
