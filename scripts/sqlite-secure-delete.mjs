// npm runs this after every install (`postinstall`). It makes better-sqlite3's SQLite keep the
// erasure guarantee (docs/operations.md, "SQLite, patched for erasure"):
//
// With `secure_delete` on, SQLite zeroes a deleted cell, a freed page and a defragmented page's
// free space, but a page rebuilt while the B-tree is rebalanced (rebuildPage) keeps its previous
// bytes in the gap between its cell pointers and its cells: copies of cells that moved to a
// sibling page, or of cells that are still there at another offset. An erased account's payload
// could outlive its erasure there (seen in CI: the flood test of test/http/erasure.test.ts found
// an erased event's payload in the database file after the checkpoint). The patch zeroes that gap
// when secure_delete is on, and names itself in `PRAGMA compile_options`, which the server checks
// before it opens a database (src/store/database.ts).
//
// Steps, each done only when needed, so that a repeated install does nothing:
//   1. patch node_modules/better-sqlite3/deps/sqlite3/sqlite3.c (fails if SQLite's text changed);
//   2. rebuild the native module from that source with npm's node-gyp (a prebuilt binary, or one
//      built before the patch, lacks it);
//   3. check the new module names the patch.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';

/**
 * What `PRAGMA compile_options` lists for a build with these changes (the same in src/store/database.ts;
 * a new version of the changes takes a new name, so that an install rebuilds).
 */
const kPatchOption = 'FRAUD_SCORER_SECURE_DELETE_V1';

// Each change: an exact text of SQLite 3.53's amalgamation (btree.c, and ctime.c for the last),
// and what replaces it (the text kept).
const kPatches = [
  {
    what: 'rebuildPage zeroes the gap it leaves',
    anchor: `  /* The pPg->nFree field is now set incorrectly. The caller will fix it. */
  assert( nCell < 10922 );`,
    replacement: `  /* fraud-scorer: the gap between the cell pointers and the cells still holds the page's
  ** previous bytes, cells moved to other pages among them. */
  if( pPg->pBt->btsFlags & BTS_FAST_SECURE ){
    memset(pCellptr, 0, pData - pCellptr);
  }
  /* The pPg->nFree field is now set incorrectly. The caller will fix it. */
  assert( nCell < 10922 );`,
  },
  {
    what: 'editPage zeroes what its shift of the cell pointers read past them',
    anchor: `    memmove(pPg->aCellIdx, &pPg->aCellIdx[nShift*2], nCell*2);
    nCell -= nShift;
`,
    replacement: `    memmove(pPg->aCellIdx, &pPg->aCellIdx[nShift*2], nCell*2);
    nCell -= nShift;
    /* fraud-scorer: the move read nShift*2 bytes past the old cell pointers: the first bytes of
    ** a cell, now in the gap. */
    if( pPg->pBt->btsFlags & BTS_FAST_SECURE ){
      memset(&pPg->aCellIdx[nCell*2], 0, nShift*2);
    }
`,
  },
  {
    what: 'copyNodeContent zeroes the gap of the page it fills',
    anchor: `    memcpy(&aTo[iToHdr], &aFrom[iFromHdr], pFrom->cellOffset + 2*pFrom->nCell);
`,
    replacement: `    memcpy(&aTo[iToHdr], &aFrom[iFromHdr], pFrom->cellOffset + 2*pFrom->nCell);
    /* fraud-scorer: between the cell pointers and the cells, pTo still holds its previous bytes. */
    if( pBt->btsFlags & BTS_FAST_SECURE ){
      int iGap = iToHdr + pFrom->cellOffset - iFromHdr + 2*pFrom->nCell;
      if( iGap<iData ) memset(&aTo[iGap], 0, iData - iGap);
    }
`,
  },
  {
    what: 'PRAGMA compile_options names the patch',
    anchor: `static const char * const sqlite3azCompileOpt[] = {
`,
    replacement: `static const char * const sqlite3azCompileOpt[] = {
  "${kPatchOption}",
`,
  },
];

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('better-sqlite3/package.json'));
const sourcePath = join(packageDir, 'deps', 'sqlite3', 'sqlite3.c');

function fail(message) {
  process.stderr.write(`fraud-scorer: ${message}\n`);
  process.exit(1);
}

/** Step 1: the amalgamation with every change; whether it had to be written. */
function patchSource() {
  const source = readFileSync(sourcePath, 'latin1');
  let patched = source;
  for (const patch of kPatches) {
    if (patched.includes(patch.replacement)) continue;
    if (patched.split(patch.anchor).length !== 2) fail(`cannot patch SQLite (${patch.what}): its source at ${sourcePath} has changed; see docs/operations.md, "SQLite, patched for erasure".`);
    patched = patched.replace(patch.anchor, () => patch.replacement);
  }
  if (patched === source) return false;
  writeFileSync(sourcePath, patched, 'latin1');
  return true;
}

/** Whether the native module that `require('better-sqlite3')` loads was built with the patch. */
function builtWithPatch() {
  const probe = spawnSync(process.execPath, ['-e', `
    const Database = require(${JSON.stringify(packageDir)});
    const db = new Database(':memory:');
    process.stdout.write(JSON.stringify(db.pragma('compile_options', { simple: false }).map((row) => row.compile_options)));
  `], { encoding: 'utf8' });
  if (probe.status !== 0) return false;
  return JSON.parse(probe.stdout).includes(kPatchOption);
}

/** npm's own node-gyp: npm names it to install scripts; otherwise it sits beside npm's CLI. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  if (process.env.npm_execpath) return join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  fail('cannot find node-gyp to build SQLite: run `npm install` (npm brings node-gyp).');
}

const changed = patchSource();
if (!changed && builtWithPatch()) process.exit(0);
process.stdout.write('fraud-scorer: building better-sqlite3 with SQLite patched for erasure (about a minute)\n');
const build = spawnSync(process.execPath, [nodeGyp(), 'rebuild', '--release'], { cwd: packageDir, stdio: 'inherit' });
if (build.status !== 0) fail('building SQLite failed: it needs a C/C++ toolchain (make, g++, python3) and Node\'s headers; see docs/operations.md, "Install".');
if (!builtWithPatch()) fail('the rebuilt better-sqlite3 does not carry the erasure patch; see docs/operations.md, "SQLite, patched for erasure".');
