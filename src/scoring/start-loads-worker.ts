// The thread that loads, at start, what the HTTP thread needs besides the accounts: the rows of
// account_links, for the HTTP thread to take as typed arrays (accounts/link-rows.ts); the velocity
// windows (the last 24 hours of events counted again) and the event ids (every stored event: from
// their runs beside the log, then the log after them); the accounts, signals and links are loaded from their
// own tables on the HTTP thread meanwhile (start-loads.ts). What it built goes back as typed arrays,
// moved, not copied.
import { parentPort, workerData } from 'node:worker_threads';
import { postLinkRows } from '../accounts/link-rows.js';
import { announceThread } from '../shared/threads.js';
import { VelocityWindows } from '../signals/velocity.js';
import { KeyHasher } from '../state/keys.js';
import { partBuffers } from '../state/slots.js';
import { openDatabase } from '../store/database.js';
import { EventIds } from './event-ids.js';
import type { StartLoadsMessage, StartLoadsSetup } from './start-loads.js';
import { rebuildVelocity } from './velocity-rebuild.js';

announceThread('start');

const setup = workerData as StartLoadsSetup;
const db = openDatabase(setup.dataDir, { readonly: true });
try {
  const hasher = new KeyHasher(Buffer.from(setup.secret));
  // One read transaction: both see the same log.
  const message = db.transaction((): StartLoadsMessage => {
    // First what the HTTP thread takes once it has loaded the accounts and signals.
    postLinkRows(db, setup.linkPort, setup.linkPosted);
    setup.linkPort.close();
    const started = performance.now();
    const velocity = new VelocityWindows(hasher);
    const rebuilt = rebuildVelocity(db, velocity, setup.now, setup.databaseFd);
    const velocityMs = performance.now() - started;
    const eventIds = EventIds.load(db, hasher);
    const eventIdsMs = performance.now() - started - velocityMs;
    return { velocity: velocity.parts(), rebuilt, velocityMs, eventIds: eventIds.parts(), eventIdsMs, eventIdsFromLog: eventIds.loaded.fromLog };
  })();
  parentPort!.postMessage(message, partBuffers(message));
} finally {
  db.close();
}
