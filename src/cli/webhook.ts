import { resolveProjectRef, type Project } from '../tenancy/tenancy-store.js';
import { kCliActor } from '../audit/audit-store.js';
import type { Db } from '../store/database.js';
import { generateWebhookSecret, isWebhookSecret } from '../webhooks/signature.js';
import {
  findWebhook,
  kDeliveryFilters,
  listDeliveries,
  redeliver,
  redeliverAbandoned,
  removeWebhook,
  rotateWebhookSecret,
  setWebhook,
  type Delivery,
  type DeliveryFilter,
  type WebhookConfig,
} from '../webhooks/webhook-store.js';
import { actionCommand, withDataDir, formatTime, kDataDirHelp, kDataDirOption, parse, print, printJson, required, UsageError, CliError } from './args.js';

const kHelp = `Usage:
  fraud-scorer webhook set    --project live|sandbox|<prj_id> --url https://... [--secret whsec_...] [--data-dir D] [--json]
  fraud-scorer webhook show   --project live|sandbox|<prj_id> [--data-dir D] [--json]
  fraud-scorer webhook remove --project live|sandbox|<prj_id> [--data-dir D]
  fraud-scorer webhook rotate-secret --project live|sandbox|<prj_id> [--overlap 24h] [--secret whsec_...] [--data-dir D] [--json]
  fraud-scorer webhook deliveries    --project live|sandbox|<prj_id> [--status ${kDeliveryFilters.join('|')}] [--limit N] [--data-dir D] [--json]
  fraud-scorer webhook redeliver     --project live|sandbox|<prj_id> (--message-id msg_... | --all-abandoned) [--data-dir D] [--json]

The decision webhook delivers the result of every event scored in the background (async) as a
POST with the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature
(v1, HMAC-SHA256 with the secret); verify it with any Standard Webhooks library.

set            sets the URL and the secret and prints the secret (a new one unless --secret is
               given). The new secret signs alone from the next delivery on.
rotate-secret  replaces the secret and prints the new one. During --overlap (default 24h; units
               s, m, h, d; 0 for none; at most 30d) every message carries two signatures, one per
               secret, so receivers can switch to the new secret without losing a message.
deliveries     lists the project's messages, newest first: pending (not tried yet), retrying,
               delivered, abandoned (retries ran out); failed = retrying or abandoned.
redeliver      makes a message due again now, with a fresh retry window (same webhook-id, so
               receivers still de-duplicate); --all-abandoned does it for every abandoned one.

A running server uses changed settings and redeliveries within a second or so.
${kDataDirHelp}`;

const kProjectOptions = { ...kDataDirOption, project: { type: 'string' }, json: { type: 'boolean' } } as const;
const kMaxOverlapMs = 30 * 86_400_000;
const kDefaultOverlap = '24h';

export const webhookCommand = actionCommand('webhook', 'set, rotate, show or remove a project\'s decision webhook; see and redeliver its messages', kHelp, {
  set(args) {
    const { values } = parse(args, { ...kProjectOptions, url: { type: 'string' }, secret: { type: 'string' } });
    if (values.help) return (print(kHelp), 0);
    const url = required(values.url, 'url');
    const problem = webhookUrlProblem(url);
    if (problem !== null) throw new UsageError(`--url: ${problem}`);
    const secret = checkedSecret(values.secret);
    return withProject(values, (db, project) => printConfig(setWebhook(db, project.project_id, url, secret, Date.now(), kCliActor), values.json));
  },
  show(args) {
    const { values } = parse(args, kProjectOptions);
    if (values.help) return (print(kHelp), 0);
    return withProject(values, (db, project) => printConfig(configOf(db, project), values.json));
  },
  remove(args) {
    const { values } = parse(args, kProjectOptions);
    if (values.help) return (print(kHelp), 0);
    return withProject(values, (db, project) => {
      if (!removeWebhook(db, project.project_id, Date.now(), kCliActor)) throw new CliError(`project ${project.project_id} has no webhook`);
      print(`removed the webhook of ${project.project_id}`);
      return 0;
    });
  },
  'rotate-secret'(args) {
    const { values } = parse(args, { ...kProjectOptions, overlap: { type: 'string' }, secret: { type: 'string' } });
    if (values.help) return (print(kHelp), 0);
    const overlapMs = parseDuration(values.overlap ?? kDefaultOverlap);
    if (overlapMs === null || overlapMs > kMaxOverlapMs) throw new UsageError('--overlap must be a duration like 24h, 90m or 2d (s, m, h, d), 0 for none, at most 30d');
    const secret = checkedSecret(values.secret);
    return withProject(values, (db, project) => {
      const config = rotateWebhookSecret(db, project.project_id, secret, overlapMs, Date.now(), kCliActor);
      if (config === null) throw new CliError(`project ${project.project_id} has no webhook; set one first`);
      return printConfig(config, values.json);
    });
  },
  deliveries(args) {
    const { values } = parse(args, { ...kProjectOptions, status: { type: 'string' }, limit: { type: 'string' } });
    if (values.help) return (print(kHelp), 0);
    const status = values.status ?? null;
    if (status !== null && !(kDeliveryFilters as readonly string[]).includes(status)) throw new UsageError(`--status must be one of ${kDeliveryFilters.join(', ')}`);
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be an integer from 1 to 10000');
    return withProject(values, (db, project) => {
      const { deliveries } = listDeliveries(db, project.project_id, status as DeliveryFilter | null, null, limit);
      if (values.json) printJson(deliveries);
      else if (deliveries.length === 0) print(status === null ? 'no messages' : `no ${status} messages`);
      else for (const delivery of deliveries) print(describeDelivery(delivery));
      return 0;
    });
  },
  redeliver(args) {
    const { values } = parse(args, { ...kProjectOptions, 'message-id': { type: 'string' }, 'all-abandoned': { type: 'boolean' } });
    if (values.help) return (print(kHelp), 0);
    const messageId = values['message-id'];
    if ((messageId === undefined) === (values['all-abandoned'] !== true)) throw new UsageError('give either --message-id msg_... or --all-abandoned');
    return withProject(values, (db, project) => {
      configOf(db, project);
      if (messageId === undefined) {
        const count = redeliverAbandoned(db, project.project_id, Date.now(), kCliActor);
        if (values.json) printJson({ redelivered: count });
        else print(`${count} abandoned message(s) of ${project.project_id} are due again`);
        return 0;
      }
      const delivery = redeliver(db, project.project_id, messageId, Date.now(), kCliActor);
      if (delivery === null) throw new CliError(`project ${project.project_id} has no message ${messageId}`);
      if (values.json) printJson(delivery);
      else print(describeDelivery(delivery));
      return 0;
    });
  },
});

function withProject(values: { 'data-dir'?: string | undefined; project?: string | undefined }, work: (db: Db, project: Project) => number): number {
  const projectRef = required(values.project, 'project');
  return withDataDir(values, (db) => {
    const project = resolveProjectRef(db, projectRef);
    if (project === null) throw new UsageError(`no such project: ${projectRef}`);
    return work(db, project);
  });
}

function configOf(db: Db, project: Project): WebhookConfig {
  const config = findWebhook(db, project.project_id);
  if (config === null) throw new CliError(`project ${project.project_id} has no webhook`);
  return config;
}

function printConfig(config: WebhookConfig, json: boolean | undefined): number {
  const overlapping = config.previous_secret_until !== null && config.previous_secret_until > Date.now() ? config.previous_secret_until : null;
  if (json) {
    printJson({ project_id: config.project_id, url: config.url, secret: config.secret, previous_secret_until: overlapping === null ? null : formatTime(overlapping) });
  } else {
    print(`${config.project_id}  ${config.url}\nsecret ${config.secret}`);
    if (overlapping !== null) print(`the previous secret also signs until ${formatTime(overlapping)}`);
  }
  return 0;
}

function describeDelivery(delivery: Delivery): string {
  const when = delivery.delivered_at ?? delivery.abandoned_at ?? (delivery.next_attempt_at === null ? '' : `next ${delivery.next_attempt_at}`);
  const error = delivery.last_error === null ? '' : `  last error: ${delivery.last_error}`;
  return `${delivery.message_id}  event ${delivery.event_id}  ${delivery.status.padEnd(9)} attempts ${delivery.attempts}  created ${delivery.created_at}  ${when}${error}`;
}

function checkedSecret(secret: string | undefined): string {
  if (secret === undefined) return generateWebhookSecret();
  if (!isWebhookSecret(secret)) throw new UsageError('--secret must be whsec_ followed by at least 16 base64-encoded bytes');
  return secret;
}

const kDurationUnits: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "24h", "90m", "2d", "45s", "0" → milliseconds; null when not a duration. */
export function parseDuration(text: string): number | null {
  if (text === '0') return 0;
  const match = /^(\d{1,6})([smhd])$/.exec(text);
  return match === null ? null : Number(match[1]) * kDurationUnits[match[2]!]!;
}

/** Why `value` cannot be a webhook URL, or null. */
function webhookUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'not an http(s) URL';
  // fetch refuses URLs with credentials: nothing would ever be delivered (put a token in the path or query instead).
  if (url.username !== '' || url.password !== '') return 'a URL with a user name or password (user:password@) cannot be delivered to; put a token in the path or the query instead';
  // No server listens on port 0: every connection to it is refused.
  if (url.port === '0') return 'port 0 is no port a receiver can listen on; use its real port';
  // fetch refuses these too, whoever listens there.
  if (url.port !== '' && kFetchBadPorts.has(Number(url.port))) return `port ${url.port} is one that fetch never sends to (the Fetch standard's "bad ports"); use another port`;
  return null;
}

/** The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#port-blocking), as Node's fetch blocks them. */
const kFetchBadPorts: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119,
  123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990,
  993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);
