// Flags for the node process that runs `serve`. They must be on node's command line: V8's thread
// pool is made, and its heap set up, before any of our code runs (NODE_OPTIONS takes the first, and
// node refuses the second there). `npm start` and docs/fraud-scorer.service pass them
// (test/cli/node-flags.test.ts keeps both in step); a server started without them says so in its log.

/**
 * V8's background threads (concurrent and parallel GC, compilation): one instead of Node's
 * default four. Every core already runs one of the server's busy threads (HTTP, rule workers,
 * writer); four more during a mark-compact took the cores from them. p99 at 0.4 of capacity
 * 16–19 → 10–11 ms, p99.9 46–54 → 19–22 ms, with no more CPU per event (bench/README.md, step 25).
 */
const kOneBackgroundThread = '--v8-pool-size=1';

/**
 * V8's allocation-site pretenuring off: objects are always made in the young generation. With it
 * on, the HTTP thread fell in some runs (4 of about 40 in step 42, 3 of 8 in step 43) into a mode,
 * set in the first seconds of load and kept for the run, in which every object of a request
 * outlived the young generation (promotion 41–44 instead of 6–7 MiB/s, scavenges 3.5–4.3 instead
 * of 1.3–1.7 ms, p99 at half of capacity 22–40 instead of 10–23 ms); without it, in none of 25
 * runs (bench/README.md, steps 42 and 43).
 */
const kNoPretenuring = '--no-allocation-site-pretenuring';

export const kServerNodeFlags: readonly string[] = [kOneBackgroundThread, kNoPretenuring];

/** A flag's option, whatever its value or spelling: `--no-x`, `--x=…` and `--x_y` name the same. */
function optionOf(arg: string): string {
  return arg.split('=')[0]!.replace(/_/g, '-').replace(/^--no-/, '--');
}

/**
 * Those of kServerNodeFlags whose option this node was started without (with any value: an
 * operator may have chosen another on purpose). Pure.
 */
export function missingServerNodeFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(optionOf);
  return kServerNodeFlags.filter((flag) => !given.includes(optionOf(flag)));
}
