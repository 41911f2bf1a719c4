import { resolveProjectRef } from '../tenancy/tenancy-store.js';
import { generateWebhookSecret, isWebhookSecret } from '../webhooks/signature.js';
import { findWebhook, removeWebhook, setWebhook } from '../webhooks/webhook-store.js';
import { actionCommand, withDataDir, kDataDirOption, parse, print, printJson, required, UsageError } from './args.js';

const kHelp = `Usage:
  fraud-scorer webhook set    --project live|sandbox|<prj_id> --url https://... [--secret whsec_...] [--data-dir D] [--json]
  fraud-scorer webhook show   --project live|sandbox|<prj_id> [--data-dir D] [--json]
  fraud-scorer webhook remove --project live|sandbox|<prj_id> [--data-dir D]

The decision webhook delivers the result of every event scored in the background (async) as a
POST with the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature
(v1, HMAC-SHA256 with the secret). set prints the secret (a new one unless --secret is given);
verify it with any Standard Webhooks library. A running server uses the new settings for the
next delivery.`;

export const webhookCommand = actionCommand('webhook', 'set, show or remove a project\'s decision webhook', kHelp, {
  set: (args) => webhook('set', args),
  show: (args) => webhook('show', args),
  remove: (args) => webhook('remove', args),
});

function webhook(action: 'set' | 'show' | 'remove', rest: string[]): number {
  const { values } = parse(rest, { ...kDataDirOption, project: { type: 'string' }, url: { type: 'string' }, secret: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) return (print(kHelp), 0);
  const projectRef = required(values.project, 'project');
  let url = '';
  if (action === 'set') {
    url = required(values.url, 'url');
    if (!isHttpUrl(url)) throw new UsageError(`--url: ${JSON.stringify(url)} is not an http(s) URL`);
    if (values.secret !== undefined && !isWebhookSecret(values.secret)) throw new UsageError('--secret must be whsec_ followed by at least 16 base64-encoded bytes');
  }
  return withDataDir(values, (db) => {
    const project = resolveProjectRef(db, projectRef);
    if (project === null) throw new UsageError(`no such project: ${projectRef}`);
    if (action === 'remove') {
      if (!removeWebhook(db, project.project_id)) {
        process.stderr.write(`project ${project.project_id} has no webhook\n`);
        return 1;
      }
      print(`removed the webhook of ${project.project_id}`);
      return 0;
    }
    const config = action === 'set'
      ? setWebhook(db, project.project_id, url, values.secret ?? generateWebhookSecret(), Date.now())
      : findWebhook(db, project.project_id);
    if (config === null) {
      process.stderr.write(`project ${project.project_id} has no webhook\n`);
      return 1;
    }
    if (values.json) printJson({ project_id: config.project_id, url: config.url, secret: config.secret });
    else print(`${config.project_id}  ${config.url}\nsecret ${config.secret}`);
    return 0;
  });
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
