// The rules write commands of ruleset-store.ts on a fresh in-memory store: the cases the HTTP tests
// cannot force, such as a draft changing between the compile of a publish and its store.
import test from 'ava';
import Database from 'better-sqlite3';
import { compileRuleset } from '../../compiler/index.js';
import {
  createDraftRule, readDraftRuleRecord, readDraftSnapshot, readLiveVersion, replaceDraftRule, storePublishedRuleset,
} from '../../src/rulesets/ruleset-store.js';
import { migrate } from '../../src/store/migrate.js';
import { provisionTenant } from '../../src/tenancy/provision.js';
import type { Db } from '../../src/store/database.js';

function freshProject(): { db: Db; projectId: string } {
  const db = new Database(':memory:');
  migrate(db);
  const { live } = provisionTenant(db, 'test', 1000);
  return { db, projectId: live.project_id };
}

function artifactOf(db: Db, projectId: string) {
  const compiled = compileRuleset(readDraftSnapshot(db, projectId).rules);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  return compiled.artifact;
}

const rule = { rule_id: 'flagged', kind: 'monitoring', status: 'active', expression: 'extras.flag == true', score_delta: 0, bands: null, action: null, description: '', version: 1 } as const;

test('a publish whose drafts changed after the compile is stale and stores nothing', (t) => {
  const { db, projectId } = freshProject();
  t.teardown(() => db.close());
  t.is(createDraftRule(db, projectId, rule, 'key_a', 1000, 2000).kind, 'created');
  const snapshot = readDraftSnapshot(db, projectId);
  const artifact = artifactOf(db, projectId);
  t.is(replaceDraftRule(db, projectId, { ...rule, description: 'changed' }, null, 'key_b', 3000).kind, 'saved');
  t.deepEqual(storePublishedRuleset(db, projectId, snapshot, artifact, 'key_a', 4000), { kind: 'stale' });
  t.is(readLiveVersion(db, projectId), 1);

  const fresh = readDraftSnapshot(db, projectId);
  const published = storePublishedRuleset(db, projectId, fresh, artifactOf(db, projectId), 'key_a', 5000);
  t.is(published.kind, 'published');
  t.is(readLiveVersion(db, projectId), 2);
  // The same drafts again: the live ruleset already holds them.
  const again = storePublishedRuleset(db, projectId, fresh, artifactOf(db, projectId), 'key_a', 6000);
  t.is(again.kind, 'unchanged');
  t.is(readLiveVersion(db, projectId), 2);
});

test('create refuses an existing rule and a full project; replace checks existence and the expected version', (t) => {
  const { db, projectId } = freshProject();
  t.teardown(() => db.close());
  const presetRules = readDraftSnapshot(db, projectId).rules.length;
  t.deepEqual(createDraftRule(db, projectId, rule, 'key_a', presetRules, 2000), { kind: 'limit', limit: presetRules });
  t.is(createDraftRule(db, projectId, rule, 'key_a', presetRules + 1, 2000).kind, 'created');
  t.deepEqual(createDraftRule(db, projectId, rule, 'key_a', 10_000, 2000), { kind: 'exists' });
  t.deepEqual(replaceDraftRule(db, projectId, { ...rule, rule_id: 'missing' }, null, 'key_a', 3000), { kind: 'not_found' });
  t.deepEqual(replaceDraftRule(db, projectId, { ...rule, description: 'x' }, 7, 'key_a', 3000), { kind: 'version_mismatch', current: 1 });
  // Unchanged content (whatever version the caller put in the record) makes no version.
  t.is(replaceDraftRule(db, projectId, { ...rule, version: 9 }, 1, 'key_a', 3000).kind, 'unchanged');
  t.like(readDraftRuleRecord(db, projectId, 'flagged'), { rule: { version: 1 }, created_at: 2000, updated_at: 2000 });
});
