// The lists routes' use-cases (DESIGN §8, docs/lists.md): read lists on the read connection,
// normalise values on the rules compiler thread, write through the writer, and advance the lists
// clock once a change is committed, so that the next event's rules see it. Every answer is scoped
// to the project of the calling key (sandbox projects have lists of their own).
import { apiError, causedBy, type ApiError } from '../shared/errors.js';
import { encodeCursor } from '../shared/query.js';
import type { Db } from '../store/database.js';
import type { RulesCompiler } from '../rulesets/rules-compiler.js';
import type { AppWriter } from '../write-commands.js';
import type { ListsClock } from './lists-clock.js';
import { kNotACursor, listCursorScope, type ItemsQuery, type NewList, type RawItem } from './lists-request.js';
import { findList, listItems, listLists, listUses, type ItemRow, type ItemsOutcome, type ListRow, type NewItem } from './list-store.js';

export type ListsAnswer = { readonly ok: true; readonly status: number; readonly body: object } | { readonly ok: false; readonly error: ApiError };

export interface ListsServiceOptions {
  readonly readDb: Db;
  readonly writer: AppWriter;
  readonly compiler: RulesCompiler;
  readonly clock: ListsClock;
  readonly now: () => number;
}

function ok(body: object, status = 200): ListsAnswer {
  return { ok: true, status, body };
}

function refused(error: ApiError): ListsAnswer {
  return { ok: false, error };
}

function iso(epochMs: number | null): string | null {
  return epochMs === null ? null : new Date(epochMs).toISOString();
}

function notFound(listId: string): ApiError {
  return apiError('NOT_FOUND', `No list ${JSON.stringify(listId)} in this project.`, 'list_id');
}

function failed(what: string, error: unknown): ListsAnswer {
  return refused(causedBy(apiError('INTERNAL_ERROR', `${what}. Nothing was changed; the request may be retried.`), error));
}

/** A list as the API shows it. */
export function listView(list: ListRow): Record<string, unknown> {
  return {
    list_id: list.list_id,
    kind: list.kind,
    description: list.description,
    item_count: list.item_count,
    created_at: iso(list.created_at),
    created_by: list.created_by,
    updated_at: iso(list.updated_at),
  };
}

function itemView(item: ItemRow): Record<string, unknown> {
  return { value: item.value, note: item.note, expires_at: iso(item.expires_at), added_at: iso(item.added_at), added_by: item.added_by };
}

export class ListsService {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #compiler: RulesCompiler;
  readonly #clock: ListsClock;
  readonly #now: () => number;

  constructor(options: ListsServiceOptions) {
    this.#readDb = options.readDb;
    this.#writer = options.writer;
    this.#compiler = options.compiler;
    this.#clock = options.clock;
    this.#now = options.now;
  }

  list(projectId: string): ListsAnswer {
    return ok({ lists: listLists(this.#readDb, projectId).map(listView) });
  }

  get(projectId: string, listId: string, query: ItemsQuery): ListsAnswer {
    return this.#readDb.transaction(() => {
      const list = findList(this.#readDb, projectId, listId);
      if (list === null) return refused(notFound(listId));
      if (query.cursorLid !== null && query.cursorLid !== list.lid) {
        return refused(apiError('VALIDATION_ERROR', `${kNotACursor} It was made for a list ${listId} deleted since.`, 'cursor'));
      }
      // One item more than the page tells whether another page follows.
      const rows = listItems(this.#readDb, list.lid, query.after, query.limit + 1, this.#now());
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      const uses = listUses(this.#readDb, projectId, listId);
      return ok({
        ...listView(list),
        used_by: { draft_rules: uses.drafts, published_rules: uses.published },
        items: page.map(itemView),
        next_cursor: rows.length > query.limit && last !== undefined ? encodeCursor(listCursorScope(projectId, listId), [last.value, list.lid]) : null,
      });
    })();
  }

  async create(projectId: string, actor: string, spec: NewList): Promise<ListsAnswer> {
    let outcome;
    try {
      outcome = await this.#writer.call('createList', projectId, spec, actor, this.#now());
    } catch (error) {
      return failed('The list could not be created', error);
    }
    switch (outcome.kind) {
      case 'created':
        this.#clock.advance(outcome.seq);
        return ok(listView(outcome.list), 201);
      case 'exists':
        return refused(apiError('VALIDATION_ERROR', `A list ${spec.list_id} exists already in this project.`, 'list_id'));
      case 'limit':
        return refused(apiError('VALIDATION_ERROR', `The project has ${outcome.limit} lists, the most it may hold; delete one first.`, 'list_id'));
    }
  }

  async delete(projectId: string, listId: string, actor: string): Promise<ListsAnswer> {
    let outcome;
    try {
      outcome = await this.#writer.call('deleteList', projectId, listId, actor, this.#now());
    } catch (error) {
      return failed('The list could not be deleted', error);
    }
    switch (outcome.kind) {
      case 'deleted':
        this.#clock.advance(outcome.seq);
        return ok({ list_id: listId, deleted: true, items: outcome.items });
      case 'not_found':
        return refused(notFound(listId));
      case 'in_use': {
        const uses = [
          ...outcome.drafts.map((ruleId) => `${ruleId} (draft)`),
          ...outcome.published.map((ruleId) => `${ruleId} (published)`),
        ];
        return refused(apiError(
          'VALIDATION_ERROR',
          `The list ${listId} is used by the rules ${uses.join(', ')}: change those rules (and publish) so that no rule reads it, then delete it.`,
          'list_id',
        ));
      }
    }
  }

  async addItems(projectId: string, listId: string, actor: string, items: readonly RawItem[]): Promise<ListsAnswer> {
    const list = findList(this.#readDb, projectId, listId);
    if (list === null) return refused(notFound(listId));
    const values = await this.#normalize(list, items.map((item) => item.value), (i) => `items[${i}].value`);
    if (!values.ok) return values;
    const normalized: NewItem[] = items.map((item, i) => ({ value: values.values[i]!, note: item.note, expiresAt: item.expiresAt }));
    return this.#change(listId, () => this.#writer.call('addListItems', projectId, list.lid, normalized, actor, this.#now()));
  }

  async removeItems(projectId: string, listId: string, actor: string, raw: readonly unknown[]): Promise<ListsAnswer> {
    const list = findList(this.#readDb, projectId, listId);
    if (list === null) return refused(notFound(listId));
    const values = await this.#normalize(list, raw, (i) => `values[${i}]`);
    if (!values.ok) return values;
    return this.#change(listId, () => this.#writer.call('removeListItems', projectId, list.lid, values.values, actor, this.#now()));
  }

  /** The values normalised by the list's kind, or a VALIDATION_ERROR naming the first that is not one. */
  async #normalize(list: ListRow, raw: readonly unknown[], parameter: (index: number) => string): Promise<{ ok: true; values: string[] } | { ok: false; error: ApiError }> {
    let outcome;
    try {
      outcome = await this.#compiler.normalizeListValues(list.kind, raw);
    } catch (error) {
      return { ok: false, error: causedBy(apiError('INTERNAL_ERROR', 'The values could not be checked. Nothing was changed; the request may be retried.'), error) };
    }
    if (outcome.ok) return outcome;
    return { ok: false, error: apiError('VALIDATION_ERROR', `${parameter(outcome.index)}: ${outcome.message} (list ${list.list_id} is of kind ${list.kind}). Nothing of this request was stored.`, parameter(outcome.index)) };
  }

  async #change(listId: string, write: () => Promise<ItemsOutcome>): Promise<ListsAnswer> {
    let outcome;
    try {
      outcome = await write();
    } catch (error) {
      return failed('The items could not be stored', error);
    }
    if (outcome.kind === 'not_found') return refused(notFound(listId));
    this.#clock.advance(outcome.seq);
    return ok({
      list_id: listId,
      added: outcome.added,
      updated: outcome.updated,
      removed: outcome.removed,
      not_on_list: outcome.absent,
      item_count: outcome.list.item_count,
    });
  }
}
