// The rule statistics thread (a one-thread piscina pool, stats-service.ts): reads stored results
// through a read-only connection of its own, at the lowest priority (background-priority.ts), and
// keeps the counts of finished days between requests (stats-reader.ts).
import Database from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import { databasePath } from '../store/database.js';
import { announceThread } from '../shared/threads.js';
import { lowerThreadPriority } from './background-priority.js';
import { RuleStatsReader, type StatsResult, type StatsTask } from './stats-reader.js';

export interface StatsSetup {
  readonly dataDir: string;
}

announceThread('stats');
lowerThreadPriority();

const setup = workerData as StatsSetup;
let reader: RuleStatsReader | null = null;

export default function ruleStats(task: StatsTask): StatsResult {
  if (reader === null) {
    const db = new Database(databasePath(setup.dataDir), { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    reader = new RuleStatsReader(db);
  }
  return reader.read(task);
}
