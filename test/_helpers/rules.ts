// Helpers for the rules API tests: rule bodies, publishing, and reading the test server's store.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createKeyWithCli } from './fingerprint.js';
import { api, runCli, type ApiResponse, type TestServer } from './server.js';

/** A valid rule body for POST /v1/rules (a monitoring rule that never matches unless changed). */
export function ruleBody(ruleId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    rule_id: ruleId,
    kind: 'monitoring',
    status: 'active',
    expression: `extras.${ruleId} == true`,
    description: `Test rule ${ruleId}.`,
    ...overrides,
  };
}

export async function createRule(server: TestServer, key: string, body: Record<string, unknown>): Promise<ApiResponse> {
  const response = await api(server, 'POST', '/v1/rules', { key, body });
  if (response.status !== 201) throw new Error(`rule not created: ${response.text}`);
  return response;
}

export async function publish(server: TestServer, key: string): Promise<ApiResponse> {
  const response = await api(server, 'POST', '/v1/rules/publish', { key });
  if (response.status !== 201 && response.status !== 200) throw new Error(`not published: ${response.text}`);
  return response;
}

/** Runs `read` on a read-only connection to the server's database (WAL: sees every commit). */
export function readStore<T>(server: TestServer, read: (db: Database.Database) => T): T {
  const db = new Database(join(server.dataDir, 'fraud-scorer.db'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Everything the rules API stores for a project, to show that a refused request changed nothing. */
export function rulesState(server: TestServer, projectId: string): unknown {
  return readStore(server, (db) => ({
    rules: db.prepare('SELECT rule_id, version, definition, created_at, updated_at FROM rules WHERE project_id = ? ORDER BY rule_id').all(projectId),
    history: db.prepare('SELECT count(*) AS n FROM rule_history WHERE project_id = ?').get(projectId),
    policy: db.prepare('SELECT * FROM policies WHERE project_id = ?').get(projectId),
    rulesets: db.prepare('SELECT version FROM rulesets WHERE project_id = ? ORDER BY version').all(projectId),
  }));
}

/**
 * A new live project of the server's tenant (from a preset, or 'none') with a secret key of every
 * scope: tests that look at a project's whole rule state get a project of their own.
 */
export async function newProject(server: TestServer, preset = 'default'): Promise<{ projectId: string; key: string; keyId: string }> {
  const created = await runCli(['projects', 'create', '--data-dir', server.dataDir, '--name', `rules test ${preset}`, '--preset', preset, '--json']);
  if (created.code !== 0) throw new Error(`projects create failed: ${created.stderr}`);
  const projectId = (JSON.parse(created.stdout) as { project_id: string }).project_id;
  const key = await createKeyWithCli(server.dataDir, ['--project', projectId, '--kind', 'secret']);
  return { projectId, key: key.key, keyId: key.key_id };
}
