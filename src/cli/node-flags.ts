// Flags for the node process that runs `serve`. They must be on node's command line (or in
// NODE_OPTIONS): V8's thread pool is made before any of our code runs. `npm start` and
// docs/fraud-scorer.service pass them (test/cli/node-flags.test.ts keeps both in step); a server
// started without them says so in its log.

/**
 * V8's background threads (concurrent and parallel GC, compilation): one instead of Node's
 * default four. Every core already runs one of the server's busy threads (HTTP, rule workers,
 * writer); four more during a mark-compact took the cores from them. p99 at 0.4 of capacity
 * 16–19 → 10–11 ms, p99.9 46–54 → 19–22 ms, with no more CPU per event (bench/README.md, step 25).
 */
export const kServerNodeFlags: readonly string[] = ['--v8-pool-size=1'];

/**
 * Those of kServerNodeFlags whose option this node was started without (with any value: an
 * operator may have chosen another on purpose). Pure.
 */
export function missingServerNodeFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map((arg) => arg.split('=')[0]);
  return kServerNodeFlags.filter((flag) => !given.includes(flag.split('=')[0]));
}
