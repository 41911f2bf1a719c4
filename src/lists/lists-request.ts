// The bodies and query strings of the lists routes (docs/lists.md), checked into values or a
// VALIDATION_ERROR naming the parameter. Pure. Item values are normalised by the list's kind
// elsewhere (list-kinds.ts, on the rules compiler thread): here only the shape is checked.
import { kListIdPattern } from '../../compiler/limits.js';
import { apiError, type ApiError } from '../shared/errors.js';
import { decodeCursor, parsePageSize, parseRfc3339, unknownOrRepeatedParameter } from '../shared/query.js';
import { characterLength } from '../shared/text.js';
import { isListKind, kListKinds, type ListKind } from './list-kinds.js';
import { kMaxItemsPerRequest } from './list-store.js';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiError };

export const kMaxListDescriptionLength = 2000;
export const kMaxItemNoteLength = 1000;

function invalid<T>(parameter: string, message: string): Checked<T> {
  return { ok: false, error: apiError('VALIDATION_ERROR', message, parameter) };
}

function unknownField<T>(body: Readonly<Record<string, unknown>>, allowed: ReadonlySet<string>, prefix = ''): Checked<T> | null {
  for (const name of Object.keys(body)) {
    if (!allowed.has(name)) return invalid(`${prefix}${name}`, `${prefix}${name} is not a field here; the fields are ${[...allowed].join(', ')}.`);
  }
  return null;
}

export interface NewList {
  readonly list_id: string;
  readonly kind: ListKind;
  readonly description: string;
}

const kListFields = new Set(['list_id', 'kind', 'description']);

/** POST /v1/lists: {list_id, kind, description?}. */
export function parseCreateList(body: Readonly<Record<string, unknown>>): Checked<NewList> {
  const unknown = unknownField<NewList>(body, kListFields);
  if (unknown !== null) return unknown;
  const listId = body.list_id;
  if (listId === undefined) return invalid('list_id', 'list_id is required.');
  if (typeof listId !== 'string' || !kListIdPattern.test(listId)) {
    return invalid('list_id', 'list_id must be 1 to 64 lower-case letters, digits and _, starting with a letter (like a rule id).');
  }
  if (body.kind === undefined) return invalid('kind', 'kind is required.');
  if (!isListKind(body.kind)) return invalid('kind', `kind must be one of ${kListKinds.join(', ')}.`);
  const description = body.description ?? '';
  if (typeof description !== 'string' || characterLength(description) > kMaxListDescriptionLength) {
    return invalid('description', `description must be a string of at most ${kMaxListDescriptionLength} characters.`);
  }
  return { ok: true, value: { list_id: listId, kind: body.kind, description } };
}

/** An item of POST /v1/lists/{list_id}/items before its value is normalised. */
export interface RawItem {
  readonly value: unknown;
  readonly note: string | null;
  readonly expiresAt: number | null;
}

const kItemsFields = new Set(['items']);
const kItemFields = new Set(['value', 'note', 'expires_at']);

/** POST /v1/lists/{list_id}/items: {items: [{value, note?, expires_at?}]}, 1 to 10,000, expiries in the future. */
export function parseAddItems(body: Readonly<Record<string, unknown>>, now: number): Checked<RawItem[]> {
  const unknown = unknownField<RawItem[]>(body, kItemsFields);
  if (unknown !== null) return unknown;
  const items = body.items;
  if (!Array.isArray(items) || items.length === 0 || items.length > kMaxItemsPerRequest) {
    return invalid('items', `items must be an array of 1 to ${kMaxItemsPerRequest.toLocaleString('en-US')} items.`);
  }
  const out: RawItem[] = [];
  for (let i = 0; i < items.length; i++) {
    const item: unknown = items[i];
    const at = `items[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return invalid(at, `${at} must be an object with value, and optionally note and expires_at.`);
    const fields = item as Record<string, unknown>;
    const unknownItem = unknownField<RawItem[]>(fields, kItemFields, `${at}.`);
    if (unknownItem !== null) return unknownItem;
    if (fields.value === undefined || fields.value === null) return invalid(`${at}.value`, `${at}.value is required.`);
    let note: string | null = null;
    if (fields.note !== undefined && fields.note !== null) {
      if (typeof fields.note !== 'string' || characterLength(fields.note) > kMaxItemNoteLength) {
        return invalid(`${at}.note`, `${at}.note must be a string of at most ${kMaxItemNoteLength} characters.`);
      }
      note = fields.note === '' ? null : fields.note;
    }
    let expiresAt: number | null = null;
    if (fields.expires_at !== undefined && fields.expires_at !== null) {
      const time = typeof fields.expires_at === 'string' ? parseRfc3339(fields.expires_at) : null;
      if (time === null) return invalid(`${at}.expires_at`, `${at}.expires_at must be an RFC 3339 date-time, like 2026-12-31T23:59:59Z.`);
      if (time <= now) return invalid(`${at}.expires_at`, `${at}.expires_at is in the past: an item that has expired would match nothing.`);
      expiresAt = time;
    }
    out.push({ value: fields.value, note, expiresAt });
  }
  return { ok: true, value: out };
}

const kRemoveFields = new Set(['values']);

/** POST /v1/lists/{list_id}/remove: {values: [...]}, 1 to 10,000. */
export function parseRemoveItems(body: Readonly<Record<string, unknown>>): Checked<unknown[]> {
  const unknown = unknownField<unknown[]>(body, kRemoveFields);
  if (unknown !== null) return unknown;
  const values = body.values;
  if (!Array.isArray(values) || values.length === 0 || values.length > kMaxItemsPerRequest) {
    return invalid('values', `values must be an array of 1 to ${kMaxItemsPerRequest.toLocaleString('en-US')} values.`);
  }
  return { ok: true, value: values };
}

export interface ItemsQuery {
  readonly limit: number;
  /** The value after which the page starts (the cursor); null: from the first. */
  readonly after: string | null;
  /**
   * The list the cursor was made for (its lid): a list deleted and created again under the same
   * list_id is another list, whose pages the cursor does not continue. null: no cursor.
   */
  readonly cursorLid: number | null;
}

const kListQueryParameters = new Set(['limit', 'cursor']);

export const kNotACursor = 'cursor is not a cursor this API returned.';

/** Cursors of the items of list `listId` of `projectId` (their position also names the list's lid). */
export function listCursorScope(projectId: string, listId: string): string {
  return `list ${projectId} ${listId}`;
}

/** GET /v1/lists/{list_id}: limit (1–100, default 50) and cursor. */
export function parseItemsQuery(query: string, projectId: string, listId: string): Checked<ItemsQuery> {
  const params = new URLSearchParams(query);
  const unknown = unknownOrRepeatedParameter(params, kListQueryParameters);
  if (unknown !== null) return { ok: false, error: unknown };
  const limit = parsePageSize(params.get('limit'));
  if (typeof limit !== 'number') return { ok: false, error: limit };
  const cursor = params.get('cursor');
  if (cursor === null) return { ok: true, value: { limit, after: null, cursorLid: null } };
  const position = decodeCursor(listCursorScope(projectId, listId), cursor, 2);
  if (position === null || typeof position[0] !== 'string' || !Number.isSafeInteger(position[1])) return invalid('cursor', kNotACursor);
  return { ok: true, value: { limit, after: position[0], cursorLid: position[1] as number } };
}
