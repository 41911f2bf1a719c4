// A new project's first ruleset: a preset's rules and policy copied into its drafts and published
// as version 1, compiled here in the caller's thread (tenancy/provision.ts: the first start and the
// command line). Apart from ruleset-store.ts so that the writer thread, which stores rulesets
// compiled elsewhere, does not load the compiler.
import { compileRuleset, getPreset, type RuleDiagnostic } from '../../compiler/index.js';
import type { Db } from '../store/database.js';
import { insertRuleset, readDraftSnapshot, saveDraftPolicy, saveDraftRule, type PublishedRuleset } from './ruleset-store.js';

type PublishResult = { ok: true; ruleset: PublishedRuleset } | { ok: false; errors: RuleDiagnostic[] };

/** Compiles the drafts and the draft policy into ruleset version N+1 and stores it (one transaction). */
function publishDrafts(db: Db, projectId: string, publishedBy: string, now: number): PublishResult {
  return db.transaction((): PublishResult => {
    const snapshot = readDraftSnapshot(db, projectId);
    const compiled = compileRuleset(snapshot.rules);
    if (!compiled.ok) return { ok: false, errors: compiled.errors };
    return { ok: true, ruleset: insertRuleset(db, projectId, snapshot, compiled.artifact, publishedBy, now) };
  }).immediate();
}

/** Copies a preset's rules and policy into a new project's drafts and publishes them as version 1. */
export function installPreset(db: Db, projectId: string, presetName: string, now: number): PublishedRuleset {
  const preset = getPreset(presetName);
  if (preset === null) throw new Error(`unknown preset ${JSON.stringify(presetName)}`);
  return db.transaction(() => {
    const changedBy = `preset:${presetName}`;
    for (const rule of preset.rules) saveDraftRule(db, projectId, rule, changedBy, now);
    saveDraftPolicy(db, projectId, preset.policy, now);
    const published = publishDrafts(db, projectId, changedBy, now);
    if (!published.ok) throw new Error(`preset ${presetName} does not compile: ${published.errors[0]?.message}`);
    return published.ruleset;
  }).immediate();
}
