// The checkpointer thread on a real database file, with a reset size small enough to reach: it
// starts the WAL over while another thread commits without pause (so that no PASSIVE pass ever
// copies the whole WAL and SQLite would not start it over by itself), not while a reader still
// reads the WAL, and it releases every descriptor it opened.
import test from 'ava';
import { closeSync, openSync, readdirSync, readlinkSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { Checkpointer } from '../../src/store/checkpointer.js';
import { databasePath, openDatabase } from '../../src/store/database.js';
import { makeDataDir, waitFor } from '../_helpers/server.js';

const kResetBytes = 64 * 4096;

/** The WAL header's checkpoint sequence: one more each time the WAL starts over. */
function walSequence(dataDir: string): number {
  const fd = openSync(`${databasePath(dataDir)}-wal`, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

// A thread that commits one row per transaction until told to stop, then reports how many.
const kWriterScript = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 10000');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
const insert = db.prepare('INSERT INTO blobs (body) VALUES (randomblob(3000))');
const stop = new Int32Array(workerData.stop);
let rows = 0;
while (Atomics.load(stop, 0) === 0) { insert.run(); rows++; }
db.close();
parentPort.postMessage(rows);
`;

interface Writing {
  readonly dataDir: string;
  readonly rows: () => number;
  stop(): Promise<number>;
}

function startWriting(): Writing {
  const dataDir = makeDataDir();
  const db = openDatabase(dataDir, { servingWriter: true });
  db.exec('CREATE TABLE blobs (body BLOB NOT NULL)');
  db.close();
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const thread = new Worker(kWriterScript, {
    eval: true,
    workerData: { path: databasePath(dataDir), betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3'), stop: stop.buffer },
  });
  const done = new Promise<number>((resolve, reject) => {
    thread.once('message', resolve);
    thread.once('error', reject);
  });
  const reader = openDatabase(dataDir, { readonly: true });
  const count = reader.prepare('SELECT count(*) AS n FROM blobs').pluck();
  return {
    dataDir,
    rows: () => count.get() as number,
    async stop() {
      Atomics.store(stop, 0, 1);
      const rows = await done;
      reader.close();
      return rows;
    },
  };
}

async function startedOver(dataDir: string, sequence: number): Promise<void> {
  await waitFor(() => walSequence(dataDir) > sequence, 'the WAL to start over');
}

test('under writes without pause the WAL starts over once past the reset size, and no row is lost', async (t) => {
  const writing = startWriting();
  const checkpointer = new Checkpointer(writing.dataDir, { walResetBytes: kResetBytes, intervalMs: 10 });
  try {
    const first = walSequence(writing.dataDir);
    await startedOver(writing.dataDir, first);
    // And again.
    await startedOver(writing.dataDir, walSequence(writing.dataDir));
  } finally {
    const rows = await writing.stop();
    await checkpointer.stop();
    checkpointer.closeDatabaseFile();
    const db = openDatabase(writing.dataDir);
    t.is(db.prepare('SELECT count(*) FROM blobs').pluck().get(), rows);
    db.close();
  }
});

test('a reader on the WAL holds the reset back; it happens once the reader is done', async (t) => {
  const writing = startWriting();
  const checkpointer = new Checkpointer(writing.dataDir, { walResetBytes: kResetBytes, intervalMs: 10 });
  const reader = openDatabase(writing.dataDir, { readonly: true });
  try {
    // With no checkpoint running, so that the reader's snapshot is on the WAL (not the file alone).
    const seen = await checkpointer.whilePaused(async () => {
      reader.exec('BEGIN');
      return reader.prepare('SELECT count(*) FROM blobs').pluck().get();
    });
    const first = walSequence(writing.dataDir);
    // Well past the reset size: the checkpointer has tried, and given up, many times.
    await waitFor(() => statSync(`${databasePath(writing.dataDir)}-wal`).size > 8 * kResetBytes, 'the WAL to grow');
    t.is(walSequence(writing.dataDir), first);
    t.is(reader.prepare('SELECT count(*) FROM blobs').pluck().get(), seen);
    reader.exec('COMMIT');
    await startedOver(writing.dataDir, first);
    t.true(writing.rows() > (seen as number));
  } finally {
    reader.close();
    await writing.stop();
    await checkpointer.stop();
    checkpointer.closeDatabaseFile();
  }
});

test('closeDatabaseFile leaves no descriptor of the database open', async (t) => {
  const dataDir = makeDataDir();
  openDatabase(dataDir).close();
  const path = databasePath(dataDir);
  const descriptors = (): number => readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;
  const checkpointer = new Checkpointer(dataDir);
  t.true(descriptors() > 0);
  await checkpointer.stop();
  checkpointer.closeDatabaseFile();
  t.is(descriptors(), 0);
});
