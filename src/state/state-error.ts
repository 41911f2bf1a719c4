// What the hot state answers instead of throwing (STYLE.md: errors are values). None of these is
// expected in service: they mean a caller's bug or a limit reached, and the caller answers 500.

export type StateErrorCode =
  /** A limit of the typed arrays: 2^28 − 1 accounts, signal values, holders, links or event ids. */
  | 'STATE_FULL'
  /**
   * A public id (from the caller's function, or given to recordEvent or loadAccount) that is not
   * acc_ + 20 base62 characters, or that a live account already has.
   */
  | 'INVALID_PUBLIC_ID'
  /** A loaded row the state already holds: an account's (space, external id), a holder's (account, value), a link. */
  | 'DUPLICATE_ROW'
  /**
   * A loaded row the state cannot hold: its account is not live or is of another space, a link
   * joins an account with itself, a signal type outside SignalType.
   */
  | 'INVALID_ROW'
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
