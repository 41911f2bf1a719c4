import { ConfigError, describeSettings, kSettings, loadConfig } from '../config/settings.js';
import { kBootstrapKeysFile, startService } from '../main.js';
import { createLogger } from '../shared/log.js';
import { join } from 'node:path';
import { parse, print, UsageError, type Command } from './args.js';

const kSettingOptions = Object.fromEntries(
  Object.values(kSettings).map((setting) => [setting.flag, { type: 'string' as const }]),
);

export const serveCommand: Command = {
  summary: 'start the server',
  help: `Usage: fraud-scorer serve [options]

Starts the HTTP server. On an empty data dir the first start creates a default tenant, a live
project, its sandbox project and three keys, prints them once and saves them to
<data-dir>/${kBootstrapKeysFile} (mode 0600).

Every setting is a flag or an environment variable (flags win):
${describeSettings()}

SIGTERM or SIGINT drains: stops listening, finishes requests in flight, flushes the writer and
closes the database.`,

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
    const log = createLogger('info');
    const service = await startService(config, log);
    if (service.bootstrap !== null) {
      print('First start: created the default tenant, its live and sandbox projects, and these keys.');
      print('They are shown only this once; they are also saved, readable only by you, in');
      print(`  ${join(config.dataDir, kBootstrapKeysFile)}`);
      for (const entry of service.bootstrap.keys) print(`  ${entry.name.padEnd(18)} ${entry.key}`);
    }
    print(`fraud-scorer listening on http://${config.host}:${service.port} (data in ${config.dataDir})`);
    await new Promise<void>((resolve) => {
      let draining = false;
      // A second signal while draining changes nothing: the drain is bounded, and a hard stop is
      // what SIGKILL is for.
      const stop = (signal: string): void => {
        if (draining) {
          log.info('already draining', { signal });
          return;
        }
        draining = true;
        log.info('draining', { signal });
        service.shutdown().then(resolve, (error: unknown) => {
          log.error('shutdown failed', { error });
          process.exitCode = 1;
          resolve();
        });
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
    });
    log.info('stopped');
    return 0;
  },
};
