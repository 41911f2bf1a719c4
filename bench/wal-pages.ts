// By hand (about half a minute): which B-trees the writer's WAL pages belong to, under sync load
// (WAL_PAGES_ASYNC=1: async). One server, warmed up with wrk (events.lua, the realistic mix;
// WAL_PAGES_HARSH=1: the harsh one) for WAL_PAGES_WARMUP_SECONDS (5; 60 shows the steady state,
// once the mix's accounts hold their values and links), then driven for 12 s; 10 s in, the WAL and the
// database file are copied (the WAL is read as it is: a reset would have emptied it after the load). Each frame of the WAL's current
// cycle (the salts of its header) is mapped to the table or index that owns its page, through
// SQLite's dbstat on the copy with its WAL applied. Prints frames per B-tree and
// per event-log frame (the log is the only append; every other page is an index or table at a
// key the events scatter). bench/README.md, steps 8 and 12. WAL_PAGES_RATE=<events/s>: the
// realistic mix offered open-loop at that rate instead of wrk's capacity, warm-up included — below
// capacity each commit holds fewer events, and what every commit writes again shows (step 42).
//   node dist/bench/wal-pages.js     (after npm run build)
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realisticLoad } from './_helpers/open-loop.js';
import { startFraudScorer } from './_helpers/processes.js';
import { runWrk } from './_helpers/wrk.js';

const kMixEnv: Record<string, string> = {
  ...(process.env.WAL_PAGES_HARSH === '1' ? { FS_HARSH: '1' } : {}),
  ...(process.env.WAL_PAGES_ASYNC === '1' ? { FS_ASYNC: '1' } : {}),
};
const kWarmupSeconds = Number(process.env.WAL_PAGES_WARMUP_SECONDS ?? 5);
const kRate = process.env.WAL_PAGES_RATE === undefined ? null : Number(process.env.WAL_PAGES_RATE);
if (kRate !== null && !(Number.isFinite(kRate) && kRate > 0)) throw new Error('WAL_PAGES_RATE: events per second, a positive number');
if (kRate !== null && Object.keys(kMixEnv).length > 0) throw new Error('WAL_PAGES_RATE drives the realistic sync mix only');
const kWalHeaderBytes = 32;
const kFrameHeaderBytes = 24;

interface WalPages {
  readonly frames: number;
  readonly commits: number;
  readonly byOwner: ReadonlyMap<string, number>;
}

/** The frames of the WAL's current cycle, by the B-tree that owns each page in `database`. */
function walPages(wal: Buffer, database: Database.Database): WalPages {
  const owner = new Map<number, string>();
  for (const row of database.prepare('SELECT name, pageno FROM dbstat').all() as Array<{ name: string; pageno: number }>) owner.set(row.pageno, row.name);
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  const byOwner = new Map<string, number>();
  let frames = 0;
  let commits = 0;
  for (let at = kWalHeaderBytes; at + kFrameHeaderBytes + pageSize <= wal.length; at += kFrameHeaderBytes + pageSize) {
    // Frames of an earlier cycle (before the last reset) carry other salts.
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) continue;
    frames++;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
    const name = owner.get(wal.readUInt32BE(at)) ?? '(free pages)';
    byOwner.set(name, (byOwner.get(name) ?? 0) + 1);
  }
  return { frames, commits, byOwner };
}

async function main(): Promise<void> {
  const server = await startFraudScorer(kMixEnv);
  const copies = mkdtempSync(join(tmpdir(), 'fraud-scorer-wal-pages-'));
  try {
    const env = { ...kMixEnv, FS_KEY: server.liveKey };
    const atRate = kRate === null ? null : realisticLoad(server, kRate);
    const drive = async (seconds: number): Promise<void> => {
      if (atRate === null) await runWrk({ url: server.url, script: 'events.lua', env, connections: 64, seconds });
      else await atRate(seconds);
    };
    await drive(kWarmupSeconds);
    const copied = new Promise<void>((resolve) => setTimeout(resolve, 10_000)).then(() => {
      copyFileSync(join(server.dataDir, 'fraud-scorer.db-wal'), join(copies, 'copy.db-wal'));
      copyFileSync(join(server.dataDir, 'fraud-scorer.db'), join(copies, 'copy.db'));
    });
    await Promise.all([drive(12), copied]);
    // Read before the copy is opened: opening recovers the WAL, closing checkpoints it away.
    const wal = readFileSync(join(copies, 'copy.db-wal'));
    const database = new Database(join(copies, 'copy.db'));
    const pages = walPages(wal, database);
    database.close();
    const logFrames = pages.byOwner.get('events') ?? 0;
    console.log(`${process.env.WAL_PAGES_HARSH === '1' ? 'harsh' : 'realistic'} mix${process.env.WAL_PAGES_ASYNC === '1' ? ', async' : ''}${kRate === null ? '' : ` at ${kRate}/s`}: ${pages.frames} frames in the WAL's current cycle, ${pages.commits} commits (${(pages.frames / Math.max(1, pages.commits)).toFixed(1)} frames each)\n`);
    console.log('  frames   share   per log frame  B-tree');
    for (const [name, frames] of [...pages.byOwner].sort((a, b) => b[1] - a[1])) {
      const perLog = logFrames === 0 ? '–' : (frames / logFrames).toFixed(2);
      console.log(`${String(frames).padStart(8)} ${((100 * frames) / pages.frames).toFixed(1).padStart(6)} % ${perLog.padStart(14)}  ${name}`);
    }
  } finally {
    await server.stop();
    rmSync(copies, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
