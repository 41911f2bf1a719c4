// What a start loads from the event log — the velocity windows and the event ids — loaded on a
// thread of its own (start-loads-worker.ts), which first reads the rows of account_links for the
// HTTP thread (accounts/link-rows.ts), while the HTTP thread loads the accounts, signals and links
// from their tables: on two cores the start takes about as long as the longer of the two, not
// their sum. Nothing writes events before the server is ready, so both see the same log.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { LinkRowsReceiver } from '../accounts/link-rows.js';
import { describeCause } from '../shared/errors.js';
import { VelocityWindows, type VelocityParts } from '../signals/velocity.js';
import type { KeyHasher } from '../state/keys.js';
import { databasePath } from '../store/database.js';
import { databaseFileDescriptor } from '../store/read-ahead.js';
import { EventIds, type EventIdsParts } from './event-ids.js';
import type { StartSnapshotParts } from './start-snapshot.js';

export interface StartLoadsSetup {
  readonly dataDir: string;
  readonly secret: Uint8Array;
  /** The time the velocity windows are rebuilt as of. */
  readonly now: number;
  /** A descriptor of the database file the main thread keeps open, for the read-ahead (store/read-ahead.ts); null: none. */
  readonly databaseFd: number | null;
  /** Where the link rows go (accounts/link-rows.ts), and the counter bumped after each message. */
  readonly linkPort: MessagePort;
  readonly linkPosted: Int32Array;
}

/** What the thread sends back (its typed arrays moved with it). */
export interface StartLoadsMessage {
  readonly velocity: VelocityParts;
  readonly rebuilt: number;
  readonly velocityMs: number;
  readonly eventIds: EventIdsParts;
  readonly eventIdsMs: number;
  /** Event ids read from the log's rows (the others came from runs beside it: event-id-runs.ts). */
  readonly eventIdsFromLog: number;
}

export interface StartLoads {
  readonly velocity: VelocityWindows;
  /** Events of the last 24 hours counted again. */
  readonly velocityEventsRebuilt: number;
  readonly eventIds: EventIds;
  readonly velocityMs: number;
  readonly eventIdsMs: number;
  /** Event ids read from the log's rows rather than from runs (0 from the snapshot). */
  readonly eventIdsFromLog: number;
  /** Both came from the start snapshot (start-snapshot.ts), not from the log. */
  readonly fromSnapshot: boolean;
}

/** A load under way: its result, or cancel() (the start failed before it was needed). */
export interface PendingStartLoads {
  readonly result: Promise<StartLoads>;
  /** The rows of account_links as the thread reads them, for HotAccounts.load (null: read nothing). */
  readonly linkRows: LinkRowsReceiver | null;
  cancel(): void;
}

/** Starts loading; `hasher` is the HTTP thread's, under the same `secret`. */
export function startLoads(dataDir: string, secret: Buffer, hasher: KeyHasher, now: number): PendingStartLoads {
  const links = new MessageChannel();
  const linkPosted = new Int32Array(new SharedArrayBuffer(4));
  const setup: StartLoadsSetup = { dataDir, secret: new Uint8Array(secret), now, databaseFd: databaseFileDescriptor(databasePath(dataDir)), linkPort: links.port2, linkPosted };
  const worker = new Worker(new URL('./start-loads-worker.js', import.meta.url), { workerData: setup, transferList: [links.port2] });
  const result = new Promise<StartLoads>((resolve, reject) => {
    let settled = false;
    worker.once('message', (message: StartLoadsMessage) => {
      settled = true;
      resolve({
        velocity: VelocityWindows.fromParts(hasher, message.velocity),
        velocityEventsRebuilt: message.rebuilt,
        eventIds: EventIds.fromParts(hasher, message.eventIds),
        velocityMs: message.velocityMs,
        eventIdsMs: message.eventIdsMs,
        eventIdsFromLog: message.eventIdsFromLog,
        fromSnapshot: false,
      });
    });
    worker.once('error', (error: unknown) => {
      settled = true;
      // A thrown SqliteError arrives as a plain object: made an Error again, with what it said.
      reject(new Error(`the start's load of the event log failed: ${describeCause(error)}`, { cause: error }));
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the start's load of the event log ended (exit code ${code}) before it was done`));
    });
  });
  // A failed start may never await it: its failure is reported by the start, not as unhandled.
  result.catch(() => {});
  return { result, linkRows: new LinkRowsReceiver(links.port1, linkPosted), cancel: () => void worker.terminate() };
}

/**
 * The same state from the start snapshot's parts (read by the HTTP thread: no log to read). The
 * windows drop what is older than the last 24 hours at `now`, as a rebuild would not count it.
 */
export function loadsFromSnapshot(parts: StartSnapshotParts, hasher: KeyHasher, now: number, readMs: number): PendingStartLoads {
  const velocity = VelocityWindows.fromParts(hasher, parts.velocity);
  velocity.sweep(now);
  const loads: StartLoads = { velocity, velocityEventsRebuilt: 0, eventIds: EventIds.fromParts(hasher, parts.eventIds), velocityMs: 0, eventIdsMs: readMs, eventIdsFromLog: 0, fromSnapshot: true };
  return { result: Promise.resolve(loads), linkRows: null, cancel: () => {} };
}
