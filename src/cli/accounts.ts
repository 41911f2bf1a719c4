// fraud-scorer accounts erase: the operator's erasure (docs/accounts.md, "The operator's erasure").
// The erasure itself is the server's (a barrier on its events and its memory): the command writes
// a request row and waits for the answer. With no server on the data dir, the command starts the
// server's machinery in this process, without HTTP; the start does the request, and it stops.
import { collectOperatorAnswer, requestOperatorErasure, withdrawOperatorErasure, type OperatorErasureAnswer } from '../accounts/operator-erasure-store.js';
import type { ErasureSummary } from '../accounts/accounts-service.js';
import { ConfigError, loadConfig } from '../config/settings.js';
import { createLogger } from '../shared/log.js';
import { tryDataDirLock } from '../store/data-dir-lock.js';
import type { Db } from '../store/database.js';
import { resolveProjectRef } from '../tenancy/tenancy-store.js';
import { actionCommand, CliError, dataDirOf, kDataDirHelp, kDataDirOption, openDataDir, parse, print, printJson, required, UsageError } from './args.js';

const kHelp = `Usage:
  fraud-scorer accounts erase --project live|sandbox|<prj_id> [--data-dir D] [--json] [--] ID

erase  erases the account ID (its acc_ id, or the external_account_id the project sends) as
       DELETE /v1/accounts/{id} does: its events, pending ones included, signals, links, list
       items, fingerprint sightings; cases and labels lose it. An account that several live
       projects of the tenant used is erased in all of them: the API answers it 403
       ACCOUNT_SHARED_ACROSS_PROJECTS, and only the operator erases it. Each project whose data
       went has the erasure in its audit trail, by actor "cli".
       A running server does it and answers within a second or so (an erasure waits for the
       account's events in flight and for webhook deliveries naming it). With no server on the
       data dir, the command starts the server's parts in this process (no HTTP), does it and
       stops them again; a server cannot start meanwhile.
       Prints what was erased (with --json: the DELETE's answer); an account erased before is
       answered as such. Exit 1: no such account in the project, or the erasure failed.

${kDataDirHelp}`;

export const accountsCommand = actionCommand('accounts', 'erase an account, in every project that used it', kHelp, { erase });

/** How long the command waits for a running server's answer. */
const kAnswerWaitMs = 120_000;
const kAnswerPollMs = 50;

async function erase(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { ...kDataDirOption, project: { type: 'string' }, json: { type: 'boolean' } }, true);
  if (values.help) return (print(kHelp), 0);
  const projectRef = required(values.project, 'project');
  if (positionals.length !== 1 || positionals[0] === '') throw new UsageError('give one account: its acc_ id or its external_account_id');
  const accountRef = positionals[0]!;
  const dataDir = dataDirOf(values);
  let db: Db = openDataDir(dataDir);
  let requestId: number;
  let projectId: string;
  try {
    const project = resolveProjectRef(db, projectRef);
    if (project === null) throw new UsageError(`no such project: ${projectRef}`);
    projectId = project.project_id;
    requestId = requestOperatorErasure(db, projectId, accountRef, Date.now());
  } finally {
    db.close();
  }
  await eraseWithoutServer(dataDir);
  db = openDataDir(dataDir);
  try {
    const answer = await waitForAnswer(db, requestId);
    return report(answer, accountRef, projectId, values.json === true);
  } finally {
    db.close();
  }
}

/**
 * No server holds the data dir: its parts start here, without HTTP, and the start does the
 * request. A server that starts first does it instead (the start refused here for the lock).
 */
async function eraseWithoutServer(dataDir: string): Promise<void> {
  const probe = tryDataDirLock(dataDir);
  if (probe === null) return;
  probe.release();
  let config;
  try {
    config = loadConfig({ 'data-dir': dataDir }, process.env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
  // The whole server is loaded only for this: the other commands have no use for it.
  const { startService, StartupError } = await import('../main.js');
  let service;
  try {
    service = await startService(config, createLogger('warn'), { listen: false });
  } catch (error) {
    if (error instanceof StartupError && tryDataDirLock(dataDir) === null) return;
    if (error instanceof StartupError) throw new CliError(error.message);
    throw error;
  }
  await service.shutdown();
}

async function waitForAnswer(db: Db, requestId: number): Promise<OperatorErasureAnswer> {
  const deadline = Date.now() + kAnswerWaitMs;
  for (;;) {
    const answer = collectOperatorAnswer(db, requestId);
    if (answer !== null) return answer;
    if (Date.now() > deadline) {
      const seconds = kAnswerWaitMs / 1000;
      if (withdrawOperatorErasure(db, requestId)) throw new CliError(`the server did not take the request within ${seconds} s, and it is withdrawn: nothing was erased (is the server stuck? its log says)`);
      throw new CliError(`the server took the request and has not answered within ${seconds} s; it goes on: run the command again later (an erased account is answered as erased before)`);
    }
    await new Promise((resolve) => setTimeout(resolve, kAnswerPollMs));
  }
}

function report(answer: OperatorErasureAnswer, accountRef: string, projectId: string, json: boolean): number {
  if (!answer.ok) {
    if (answer.code === 'NOT_FOUND') throw new CliError(`no account ${JSON.stringify(accountRef)} in project ${projectId}`);
    throw new CliError(`the erasure failed (${answer.code}): ${answer.message}`);
  }
  if (json) printJson(answer.body);
  else print(describe(answer.body));
  return 0;
}

function describe(summary: ErasureSummary): string {
  const account = summary.account_public_id ?? 'the account (its events were not scored yet: no acc_ id)';
  const counts = Object.entries(summary.erased).map(([name, count]) => `${name} ${count}`).join(', ');
  return summary.already_erased ? `${account} was erased before, at ${summary.erased_at}: ${counts}` : `erased ${account} at ${summary.erased_at}: ${counts}`;
}
