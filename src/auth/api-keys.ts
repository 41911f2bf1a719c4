// API key format and hashing (interface, "Authentication"). Pure: no I/O.
//   <kind>_<environment>_<22 characters>, kind ak (secret) | pk (publishable), environment live | sandbox.
// Keys are stored only as SHA-256 hashes; the plain key exists once, when it is created.
import { createHash } from 'node:crypto';
import { randomBase62 } from '../shared/ids.js';

export type KeyKind = 'secret' | 'publishable';
export type Environment = 'live' | 'sandbox';

export const kScopes = [
  'events:write',
  'fp:write',
  'accounts:link',
  'scores:read',
  'accounts:read',
  'accounts:erase',
  'cases:read',
  'cases:write',
  'rules:read',
  'rules:write',
  'rules:publish',
] as const;
export type Scope = (typeof kScopes)[number];

/** A publishable key may sit in page HTML, so it can never hold more than this. */
export const kPublishableScopes: readonly Scope[] = ['fp:write'];

const kKeyPattern = /^(ak|pk)_(live|sandbox)_[A-Za-z0-9]{22}$/;
const kSecretLength = 22;

export interface ParsedKey {
  readonly kind: KeyKind;
  readonly environment: Environment;
}

/** Recognises the key format only; whether the key exists is the registry's question. */
export function parseApiKey(key: string): ParsedKey | null {
  const match = kKeyPattern.exec(key);
  if (match === null) return null;
  return { kind: match[1] === 'ak' ? 'secret' : 'publishable', environment: match[2] as Environment };
}

export function generateApiKey(kind: KeyKind, environment: Environment): string {
  return `${kind === 'secret' ? 'ak' : 'pk'}_${environment}_${randomBase62(kSecretLength)}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function isScope(value: string): value is Scope {
  return (kScopes as readonly string[]).includes(value);
}

/**
 * Resolves a requested scope list for a new key: secret keys default to every scope,
 * publishable keys can hold only fp:write. Returns an error message for a bad request.
 */
export function resolveScopes(kind: KeyKind, requested: readonly string[] | null): Scope[] | string {
  if (requested === null) return kind === 'secret' ? [...kScopes] : [...kPublishableScopes];
  const unknown = requested.filter((scope) => !isScope(scope));
  if (unknown.length > 0) return `unknown scope ${JSON.stringify(unknown[0])}; known scopes: ${kScopes.join(', ')}`;
  if (requested.length === 0) return 'a key needs at least one scope';
  if (kind === 'publishable') {
    const extra = requested.filter((scope) => !kPublishableScopes.includes(scope as Scope));
    if (extra.length > 0) return `a publishable key can hold only fp:write, not ${extra.join(', ')}`;
  }
  return [...new Set(requested as Scope[])];
}
