import { kDatabaseFileName } from '../store/database.js';
import { BackupError, backupDatabase } from '../store/backup.js';
import { dataDirOf, kDataDirHelp, kDataDirOption, parse, print, required, type Command } from './args.js';

const kHelp = `Usage: fraud-scorer backup --to FILE [--data-dir D] [--force]

Copies the database of the data dir into FILE, while the server keeps running: SQLite's online
backup API takes a consistent snapshot and the server is not paused. The copy is one file,
readable only by you (mode 0600); it holds every tenant, project, key hash, fingerprint and the
install secret. It appears at FILE only when complete and checked (PRAGMA quick_check).

--to FILE     where to write the copy (its folder must exist)
--force       replace FILE if it exists (refused otherwise; never a database in use)
${kDataDirHelp}

Restore: stop the server, put FILE into an empty data dir as ${kDatabaseFileName}, start the server
(docs/operations.md).`;

export const backupCommand: Command = {
  summary: 'copy the database to a file while the server runs',
  help: kHelp,
  async run(args) {
    const { values } = parse(args, { ...kDataDirOption, to: { type: 'string' }, force: { type: 'boolean' } });
    if (values.help) return (print(kHelp), 0);
    const destination = required(values.to, 'to');
    try {
      const result = await backupDatabase(dataDirOf(values), destination, { force: values.force ?? false });
      print(`backed up ${result.source} to ${result.destination}: ${result.bytes} bytes, ${result.pages} pages, schema version ${result.schemaVersion}, quick_check ok`);
      return 0;
    } catch (error) {
      if (!(error instanceof BackupError)) throw error;
      process.stderr.write(`fraud-scorer backup: ${error.message}\n`);
      return 1;
    }
  },
};
