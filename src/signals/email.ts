// What can be judged about an email address offline (DESIGN §3, the `email` signal): its domain,
// whether the domain is a known disposable-mailbox service or a free consumer provider. Pure.
import { kDisposableDomains, kFreeProviderDomains } from './email-domains.js';

export interface EmailSignals {
  readonly present: boolean;
  readonly valid: boolean;
  readonly domain: string | null;
  readonly disposable: boolean;
  readonly free_provider: boolean;
}

const kAbsent: EmailSignals = Object.freeze({ present: false, valid: false, domain: null, disposable: false, free_provider: false });
// Deliberately simple: the request schema already checked the format.
const kShape = /^[^\s@]+@([^\s@]+\.[^\s@]+)$/;

/** Trimmed and lower-cased: the form emails are linked and counted by. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

export function analyzeEmail(normalized: string | null): EmailSignals {
  if (normalized === null) return kAbsent;
  const match = kShape.exec(normalized);
  if (match === null) return { present: true, valid: false, domain: null, disposable: false, free_provider: false };
  const domain = match[1]!;
  return { present: true, valid: true, domain, disposable: kDisposableDomains.has(domain), free_provider: kFreeProviderDomains.has(domain) };
}

/**
 * "jane.doe@example.com" → "j***@e***.com": enough to recognise, not enough to read. A part of one
 * character shows none ("a@b.io" → "***@***.io"), or the mask would be the address.
 */
export function maskEmail(normalized: string): string {
  const at = normalized.lastIndexOf('@');
  if (at <= 0) return '***';
  const local = normalized.slice(0, at);
  const domain = normalized.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const domainName = dot <= 0 ? domain : domain.slice(0, dot);
  const tld = dot <= 0 ? '' : domain.slice(dot);
  return `${firstOfLonger(local)}***@${firstOfLonger(domainName)}***${tld}`;
}

function firstOfLonger(part: string): string {
  return part.length >= 2 ? part[0]! : '';
}
