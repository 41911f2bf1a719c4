// The rules API's use-cases (DESIGN §3, docs/rules-api.md): read drafts and rulesets on the read
// connection, check rules on the compiler thread, write through the writer, and make a published
// version live at once. Every answer is scoped to the project of the calling key.
import { kMaxRules } from '../../compiler/limits.js';
import type { RuleDefinition, RulesetArtifact } from '../../compiler/index.js';
import { apiError, type ApiError } from '../shared/errors.js';
import type { Db } from '../store/database.js';
import type { AppWriter } from '../write-commands.js';
import type { LiveRulesets } from './live-rulesets.js';
import type { RulesCompiler } from './rules-compiler.js';
import {
  publishDiagnosticsError, ruleProblemsError, versionMismatch, type PolicyChange, type ReplaceRule, type RulesetListQuery,
} from './rules-request.js';
import {
  listRulesets, readDraftPolicyRecord, readDraftRuleRecord, readDraftRuleRecords, readDraftSnapshot, readLiveRuleset,
  publishWouldChange, readLiveVersion, readRuleHistory, readRuleset, restoreChangesDrafts, restorePlan, type StoreRulesetOutcome,
} from './ruleset-store.js';
import { policyView, ruleView, ruleWithHistoryView, rulesListView, rulesetView } from './rules-view.js';
import { projectListIds } from '../lists/list-store.js';

/** A list a rule reads was deleted between the check and the save (a race with DELETE /v1/lists). */
function listsGone(lists: readonly string[]): ApiError {
  return apiError('VALIDATION_ERROR', `The project has no list ${lists.map((id) => `'${id}'`).join(', ')} any more (deleted meanwhile); create it, or change the expression.`, 'expression');
}

export type RulesAnswer = { readonly ok: true; readonly status: number; readonly body: object } | { readonly ok: false; readonly error: ApiError };

/**
 * A publish compiles a snapshot of the drafts off the writer; if a draft changes before the result
 * is stored, it compiles the new drafts. Beyond this many tries the caller is asked to retry.
 */
const kPublishAttempts = 3;

export interface RulesServiceOptions {
  readonly readDb: Db;
  readonly writer: AppWriter;
  readonly compiler: RulesCompiler;
  readonly liveRulesets: LiveRulesets;
  readonly now: () => number;
}

function ok(body: object, status = 200): RulesAnswer {
  return { ok: true, status, body };
}

function refused(error: ApiError): RulesAnswer {
  return { ok: false, error };
}

function ruleNotFound(ruleId: string): ApiError {
  return apiError('NOT_FOUND', `No rule ${JSON.stringify(ruleId)} in this project.`, 'rule_id');
}

function failed(what: string, error: unknown): RulesAnswer {
  return refused(apiError('INTERNAL_ERROR', `${what}: ${(error as Error).message}. Nothing was changed; the request may be retried.`));
}

export class RulesService {
  readonly #readDb: Db;
  readonly #writer: AppWriter;
  readonly #compiler: RulesCompiler;
  readonly #live: LiveRulesets;
  readonly #now: () => number;

  constructor(options: RulesServiceOptions) {
    this.#readDb = options.readDb;
    this.#writer = options.writer;
    this.#compiler = options.compiler;
    this.#live = options.liveRulesets;
    this.#now = options.now;
  }

  list(projectId: string): RulesAnswer {
    // One read transaction: the drafts, the policy and the live version as of one moment.
    return this.#readDb.transaction(() =>
      ok(rulesListView(readDraftRuleRecords(this.#readDb, projectId), readDraftPolicyRecord(this.#readDb, projectId), readLiveRuleset(this.#readDb, projectId))),
    )();
  }

  get(projectId: string, ruleId: string, history: boolean): RulesAnswer {
    return this.#readDb.transaction(() => {
      const record = readDraftRuleRecord(this.#readDb, projectId, ruleId);
      if (record === null) return refused(ruleNotFound(ruleId));
      return ok(history ? ruleWithHistoryView(record, readRuleHistory(this.#readDb, projectId, ruleId)) : ruleView(record));
    })();
  }

  async create(projectId: string, keyId: string, input: Record<string, unknown>): Promise<RulesAnswer> {
    const checked = await this.#check(projectId, input);
    if (!checked.ok) return checked;
    const rule = checked.rule;
    let outcome;
    try {
      outcome = await this.#writer.call('createDraftRule', projectId, rule, keyId, kMaxRules, this.#now(), checked.lists);
    } catch (error) {
      return failed('The rule could not be saved', error);
    }
    switch (outcome.kind) {
      case 'created':
        return ok(ruleView(outcome.record), 201);
      case 'exists':
        return refused(apiError('VALIDATION_ERROR', `A rule ${rule.rule_id} exists already: change it with PUT /v1/rules/${rule.rule_id}.`, 'rule_id'));
      case 'limit':
        return refused(apiError('VALIDATION_ERROR', `The project has ${outcome.limit} rules, the most a ruleset may hold (archived rules count). Reuse an archived rule instead.`, 'rule_id'));
      case 'missing_lists':
        return refused(listsGone(outcome.lists));
    }
  }

  async replace(projectId: string, keyId: string, change: ReplaceRule): Promise<RulesAnswer> {
    const ruleId = change.record.rule_id as string;
    // Unknown rule first: checking the body of a rule that cannot be replaced would be wasted work.
    if (readDraftRuleRecord(this.#readDb, projectId, ruleId) === null) return refused(ruleNotFound(ruleId));
    const checked = await this.#check(projectId, change.record);
    if (!checked.ok) return checked;
    let outcome;
    try {
      outcome = await this.#writer.call('replaceDraftRule', projectId, checked.rule, change.expectedVersion, keyId, this.#now(), checked.lists);
    } catch (error) {
      return failed('The rule could not be saved', error);
    }
    switch (outcome.kind) {
      case 'saved':
      case 'unchanged':
        return ok(ruleView(outcome.record));
      case 'not_found':
        return refused(ruleNotFound(ruleId));
      case 'version_mismatch':
        return refused(versionMismatch(`rule ${ruleId}`, change.expectedVersion!, outcome.current));
      case 'missing_lists':
        return refused(listsGone(outcome.lists));
    }
  }

  /**
   * validateRuleDefinition on the compiler thread, in_list() ids checked against the project's
   * lists; its problems as one VALIDATION_ERROR.
   */
  async #check(projectId: string, input: Record<string, unknown>): Promise<{ ok: true; rule: RuleDefinition; lists: string[] } | { ok: false; error: ApiError }> {
    let checked;
    try {
      checked = await this.#compiler.validate(input, projectListIds(this.#readDb, projectId));
    } catch (error) {
      return { ok: false, error: apiError('INTERNAL_ERROR', `The rule could not be checked: ${(error as Error).message}. Nothing was changed.`) };
    }
    return checked.ok ? checked : { ok: false, error: ruleProblemsError(checked.problems) };
  }

  getPolicy(projectId: string): RulesAnswer {
    return ok(policyView(readDraftPolicyRecord(this.#readDb, projectId)));
  }

  async replacePolicy(projectId: string, keyId: string, change: PolicyChange): Promise<RulesAnswer> {
    const thresholds = { review_threshold: change.review_threshold, block_threshold: change.block_threshold };
    let outcome;
    try {
      outcome = await this.#writer.call('replaceDraftPolicy', projectId, thresholds, change.expectedVersion, this.#now(), keyId);
    } catch (error) {
      return failed('The policy could not be saved', error);
    }
    if (outcome.kind === 'version_mismatch') return refused(versionMismatch('the policy', change.expectedVersion!, outcome.current));
    return ok(policyView(outcome.policy));
  }

  /**
   * Compiles the drafts into ruleset version N+1 and makes it live. Drafts identical to the live
   * ruleset publish nothing (200, changed false): a version number then always means a change.
   */
  async publish(projectId: string, keyId: string): Promise<RulesAnswer> {
    for (let attempt = 0; attempt < kPublishAttempts; attempt++) {
      const snapshot = readDraftSnapshot(this.#readDb, projectId);
      const live = readLiveRuleset(this.#readDb, projectId);
      if (live !== null && !publishWouldChange(snapshot, live)) return ok({ changed: false, ...rulesetView(live, live.version) });
      const answer = await this.#compileAndStore(projectId, snapshot.rules, 'stored', {}, (artifact) =>
        this.#writer.call('storePublishedRuleset', projectId, snapshot, artifact, keyId, this.#now()));
      if (answer !== 'retry') return answer;
    }
    return refused(apiError('INTERNAL_ERROR', 'The drafts kept changing while they were being published. Nothing was published; retry.'));
  }

  /**
   * Rollback (POST /v1/rulesets/{version}/restore): resets the drafts to published version
   * `version` (its rules and policy; rules created since are archived) and publishes them as N+1,
   * compiled off the writer like a publish. When the drafts and the live ruleset already are that
   * version, nothing is written (200, changed false).
   */
  async restore(projectId: string, keyId: string, version: number): Promise<RulesAnswer> {
    for (let attempt = 0; attempt < kPublishAttempts; attempt++) {
      const target = readRuleset(this.#readDb, projectId, version);
      if (target === null) return refused(apiError('NOT_FOUND', `No ruleset version ${version} in this project.`, 'version'));
      const snapshot = readDraftSnapshot(this.#readDb, projectId);
      const plan = restorePlan(snapshot, target);
      const live = readLiveRuleset(this.#readDb, projectId);
      if (live !== null && !restoreChangesDrafts(plan) && !publishWouldChange(plan, live)) return ok({ changed: false, restored_from: version, ...rulesetView(live, live.version) });
      // The rules the restore saves archived are not compiled, but the lists they read stay in use
      // (docs/lists.md): read them here, off the writer. One naming a list deleted since refuses
      // the restore, as a missing list refuses a rule when it is saved.
      let archived;
      try {
        archived = await this.#compiler.ruleLists(plan.saved.filter((rule) => rule.status === 'archived'), projectListIds(this.#readDb, projectId));
      } catch (error) {
        return failed('The ruleset could not be compiled', error);
      }
      if (!archived.ok) return refused(publishDiagnosticsError(archived.errors));
      const archivedLists = archived.lists;
      // A compile error is possible only if the compiler changed since the version was published.
      const answer = await this.#compileAndStore(projectId, plan.rules, 'restored', { restored_from: version }, (artifact) =>
        this.#writer.call('storeRestoredRuleset', projectId, version, snapshot, artifact, archivedLists, keyId, this.#now()));
      if (answer !== 'retry') return answer;
    }
    return refused(apiError('INTERNAL_ERROR', 'The drafts kept changing while the version was being restored. Nothing was published; retry.'));
  }

  /**
   * One attempt of a publish or a restore: compiles `rules` off the writer, then has `store` write
   * the result. 'retry' when the drafts changed, or a list the rules read was deleted, in between:
   * the caller reads the drafts again (and a new compile names the rules of a missing list).
   * `extra` goes into the answer's data.
   */
  async #compileAndStore(
    projectId: string, rules: readonly RuleDefinition[], stored: 'stored' | 'restored', extra: object,
    store: (artifact: RulesetArtifact) => Promise<StoreRulesetOutcome>,
  ): Promise<RulesAnswer | 'retry'> {
    let compiled;
    try {
      compiled = await this.#compiler.compile(rules, projectListIds(this.#readDb, projectId));
    } catch (error) {
      return failed('The ruleset could not be compiled', error);
    }
    if (!compiled.ok) return refused(publishDiagnosticsError(compiled.errors));
    let outcome;
    try {
      outcome = await store(compiled.artifact);
    } catch (error) {
      return failed(`The ruleset could not be ${stored}`, error);
    }
    if (outcome.kind === 'stale' || outcome.kind === 'missing_lists') return 'retry';
    if (outcome.kind === 'published') {
      // Committed: the next event of the project must take the new version, not the cached one.
      this.#live.notifyPublished(projectId);
      return ok({ changed: true, ...extra, ...rulesetView(outcome.ruleset, outcome.ruleset.version) }, 201);
    }
    return ok({ changed: false, ...extra, ...rulesetView(outcome.ruleset, outcome.ruleset.version) });
  }

  listRulesets(projectId: string, query: RulesetListQuery): RulesAnswer {
    return this.#readDb.transaction(() => {
      const live = readLiveVersion(this.#readDb, projectId);
      // One more than the page tells whether an older page follows.
      const rows = listRulesets(this.#readDb, projectId, { before: query.before, limit: query.limit + 1 });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return ok({
        rulesets: page.map((ruleset) => rulesetView(ruleset, live)),
        next_before: rows.length > query.limit && last !== undefined ? last.version : null,
      });
    })();
  }

  getRuleset(projectId: string, version: number): RulesAnswer {
    return this.#readDb.transaction(() => {
      const ruleset = readRuleset(this.#readDb, projectId, version);
      if (ruleset === null) return refused(apiError('NOT_FOUND', `No ruleset version ${version} in this project.`, 'version'));
      return ok(rulesetView(ruleset, readLiveVersion(this.#readDb, projectId)));
    })();
  }
}
