// What the hot state answers instead of throwing (STYLE.md: errors are values). None of these is
// expected in service: they mean a caller's bug or a limit reached, and the caller answers 500.

export type StateErrorCode =
  /** A limit of the typed arrays: 2^28 − 1 accounts, signal values, holders, links or event ids. */
  | 'STATE_FULL'
  /** The public id function returned something other than an unused acc_ + 20 base62 characters. */
  | 'INVALID_PUBLIC_ID'
  /** An external id or mask longer than the string arena keeps (2 MiB). */
  | 'STRING_TOO_LONG'
  /** A project number outside 0..kMaxProject. */
  | 'INVALID_PROJECT';

export interface StateError {
  readonly code: StateErrorCode;
  readonly message: string;
}

export function stateError(code: StateErrorCode, message: string): StateError {
  return { code, message };
}

export function isStateError(value: unknown): value is StateError {
  return typeof value === 'object' && value !== null && 'code' in value;
}
