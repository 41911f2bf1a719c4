// Standard Webhooks signatures (https://www.standardwebhooks.com): the receiver checks
//   webhook-signature: v1,<base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>">
// with the secret's bytes (the base64 after "whsec_"). While a rotated secret overlaps the new one,
// the header carries one signature per secret, separated by spaces (the spec's way to rotate): a
// receiver holding either secret accepts the message. Pure.
import { createHmac, randomBytes } from 'node:crypto';

const kSecretPrefix = 'whsec_';
const kSecretBytes = 24;

export function generateWebhookSecret(): string {
  return `${kSecretPrefix}${randomBytes(kSecretBytes).toString('base64')}`;
}

/** Whether `secret` has the whsec_<base64> form and at least 16 bytes. */
export function isWebhookSecret(secret: string): boolean {
  if (!secret.startsWith(kSecretPrefix)) return false;
  const encoded = secret.slice(kSecretPrefix.length);
  return /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && Buffer.from(encoded, 'base64').length >= 16;
}

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/** Signs with every secret in `secrets` (the current one first). */
export function signWebhook(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): SignedHeaders {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  const signatures = secrets.map((secret) => {
    const key = Buffer.from(secret.slice(kSecretPrefix.length), 'base64');
    return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  });
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}

export interface SecretsOfWebhook {
  readonly secret: string;
  readonly previous_secret: string | null;
  /** Epoch ms until which the previous secret still signs. */
  readonly previous_secret_until: number | null;
}

/** The secrets that sign at `now`: the current one, and the previous one during its overlap. */
export function signingSecrets(config: SecretsOfWebhook, now: number): string[] {
  const overlapping = config.previous_secret !== null && config.previous_secret_until !== null && now < config.previous_secret_until;
  return overlapping ? [config.secret, config.previous_secret!] : [config.secret];
}

/**
 * Delay before retry number `attempt` (1 = the first retry): exponential from `baseMs`, capped at
 * `capMs`, with full jitter in the upper half so that a receiver coming back is not hit by every
 * sender at once.
 */
export function retryDelayMs(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
