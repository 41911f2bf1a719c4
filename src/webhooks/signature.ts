// Standard Webhooks signatures (https://www.standardwebhooks.com): the receiver checks
//   webhook-signature: v1,<base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>">
// with the secret's bytes (the base64 after "whsec_"). Pure.
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

export function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): SignedHeaders {
  const key = Buffer.from(secret.slice(kSecretPrefix.length), 'base64');
  const signature = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
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
