import { ConfigError, describeSettings, kSettings, loadConfig } from '../config/settings.js';
import { kBootstrapKeysFile, StartupError, startService } from '../main.js';
import { createAccessLog, createLogger, type LogLevel } from '../shared/log.js';
import { kLockFileName } from '../store/data-dir-lock.js';
import { join } from 'node:path';
import { parse, print, UsageError, type Command } from './args.js';
import { missingServerNodeFlags } from './node-flags.js';

const kSettingOptions = Object.fromEntries(
  Object.values(kSettings).map((setting) => [setting.flag, { type: 'string' as const }]),
);
const kParentWatchIntervalMs = 1000;

export const serveCommand: Command = {
  summary: 'start the server',
  help: `Usage: fraud-scorer serve [options]

Starts the HTTP server. On an empty data dir the first start creates a default tenant, a live
project, its sandbox project and three keys, prints them once and saves them to
<data-dir>/${kBootstrapKeysFile} (mode 0600). Only serve creates a database.

One server per data dir and per port: it holds <data-dir>/${kLockFileName} while it runs, and listens
on its port exclusively. A second server on either exits with status 1 and one line saying why;
so does a start whose port cannot be bound.

Every setting is a flag or an environment variable (flags win):
${describeSettings()}

UWS_HTTP_MAX_HEADERS_SIZE (environment only, read by uWebSockets.js; default 16384, 1024 to 1048576):
the most bytes of headers a request may send; more, or more than 98 header lines, is answered 431.

SIGTERM, SIGINT or SIGHUP drains: stops listening, finishes requests in flight, flushes the writer and
closes the database. Started by npm start, the server also stops when npm goes away.`,

  async run(args) {
    const { values } = parse(args, { ...kSettingOptions, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      print(this.help);
      return 0;
    }
    let config;
    try {
      config = loadConfig(values, process.env);
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message);
      throw error;
    }
    const log = createLogger(config.logLevel as LogLevel);
    const missingFlags = missingServerNodeFlags(process.execArgv, process.env.NODE_OPTIONS);
    if (missingFlags.length > 0) {
      log.warn('node was started without flags the server is tuned for; the tail latency suffers (docs/operations.md, "Node flags")', {
        // This very command with the flags added: the node flags, data dir and port it was given kept.
        missing: missingFlags, start_with: ['node', ...process.execArgv, ...missingFlags, ...process.argv.slice(1)].map(shellWord).join(' '),
      });
    }
    // A stop asked for during the start (it takes seconds, 25 s or more for a large store after a
    // crash) is kept and done once the start is: without a handler the signal would end the
    // process at once, leaving the WAL and no start snapshot behind.
    let stopAskedAt: string | null = null;
    const askedDuringStart = (signal: NodeJS.Signals): void => {
      if (stopAskedAt !== null) return;
      stopAskedAt = signal;
      log.info('stop asked for during the start: the server stops once started', { signal });
    };
    for (const signal of kStopSignals) process.on(signal, askedDuringStart);
    let service;
    try {
      service = await startService(config, log, { accessLog: config.accessLog ? createAccessLog() : null });
    } catch (error) {
      // Out at once, whatever failed: a supervisor (systemd Restart=on-failure) sees the failure.
      // An error the start did not foresee (a write refused by the database, say) comes with its
      // stack; left to the caller, the threads the start made (writer, checkpointer, rule workers)
      // kept the process alive, listening on nothing and holding the data dir's lock.
      process.stderr.write(error instanceof StartupError ? `fraud-scorer serve: ${error.message}\n` : `fraud-scorer serve: the start failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    }
    if (service.bootstrap !== null) {
      print('First start: created the default tenant, its live and sandbox projects, and these keys.');
      print('They are shown only this once; they are also saved, readable only by you, in');
      print(`  ${join(config.dataDir, kBootstrapKeysFile)}`);
      for (const entry of service.bootstrap.keys) print(`  ${entry.name.padEnd(18)} ${entry.key}`);
    }
    // The handlers go in before the line that says the server listens: a supervisor (or a test)
    // may send SIGTERM as soon as it reads it, and a signal with no handler ends the process
    // without the clean stop.
    let stop: (signal: string) => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      let draining = false;
      // A second signal while draining changes nothing: the drain is bounded, and a hard stop is
      // what SIGKILL is for.
      stop = (signal: string): void => {
        if (draining) {
          log.info('already draining', { signal });
          return;
        }
        draining = true;
        const shutdown = service.shutdown();
        // After the call: shutdown closes the listen socket before its first await, so whoever
        // reads this line knows that no new connection will be taken.
        log.info('draining', { signal });
        shutdown.then(resolve, (error: unknown) => {
          log.error('shutdown failed', { error });
          process.exitCode = 1;
          resolve();
        });
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
      // SIGHUP (the terminal of a foreground server closed, or a `kill -HUP` meant as "reload")
      // would otherwise end the process at once: no drain, requests in flight cut, the WAL left
      // behind and no start snapshot, so the next start loads from the tables. There is nothing
      // to reload (settings are read once), so it is a clean stop too.
      process.on('SIGHUP', () => stop('SIGHUP'));
      stopWhenNpmGoes(() => stop('npm exited'));
    });
    for (const signal of kStopSignals) process.off(signal, askedDuringStart);
    if (stopAskedAt !== null) stop(stopAskedAt);
    else print(`fraud-scorer listening on ${serverUrl(config.host, service.port)} (data in ${config.dataDir})`);
    await stopped;
    log.info('stopped');
    return 0;
  },
};

const kStopSignals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Under `npm start` the server is npm's child: the start script execs node, so the SIGTERM or
 * SIGINT npm forwards reaches the server. An npm that is killed outright (SIGKILL) forwards
 * nothing, and the server would go on as an orphan holding the port; it notices that it was
 * re-parented and drains instead. Outside npm the parent is left alone (a shell may exit while the
 * server it started goes on under nohup or a supervisor).
 */
function stopWhenNpmGoes(stop: () => void): void {
  if (process.env.npm_lifecycle_event !== 'start') return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, kParentWatchIntervalMs);
  timer.unref();
}

/** `word` as a POSIX shell reads it back: as is when plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The server's base URL: an IPv6 address in brackets, as URLs write it. */
export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
