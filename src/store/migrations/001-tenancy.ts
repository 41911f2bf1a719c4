// Tenants, their projects (live ones and exactly one sandbox each) and API keys.
export const kTenancyMigration = `
CREATE TABLE meta (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE tenants (
  tenant_id  TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE projects (
  project_id  TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (tenant_id),
  name        TEXT NOT NULL,
  environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
  preset      TEXT NOT NULL,
  created_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX projects_by_tenant ON projects (tenant_id);
CREATE UNIQUE INDEX projects_one_sandbox_per_tenant ON projects (tenant_id) WHERE environment = 'sandbox';

-- Only the SHA-256 hash of a key is kept. key_id is the public handle used to list and revoke.
CREATE TABLE api_keys (
  key_hash        TEXT PRIMARY KEY,
  key_id          TEXT NOT NULL UNIQUE,
  project_id      TEXT NOT NULL REFERENCES projects (project_id),
  kind            TEXT NOT NULL CHECK (kind IN ('secret', 'publishable')),
  environment     TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
  scopes          TEXT NOT NULL,
  allowed_origins TEXT,
  label           TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  revoked_at      INTEGER
) WITHOUT ROWID;
CREATE INDEX api_keys_by_project ON api_keys (project_id);

-- A running server polls this counter to learn that keys changed in another process (the command
-- line), so a revoked key stops working within a second without a lookup on every request.
INSERT INTO meta (name, value) VALUES ('keys_generation', '0');
CREATE TRIGGER api_keys_insert AFTER INSERT ON api_keys BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'keys_generation';
END;
CREATE TRIGGER api_keys_update AFTER UPDATE ON api_keys BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'keys_generation';
END;
CREATE TRIGGER api_keys_delete AFTER DELETE ON api_keys BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE name = 'keys_generation';
END;
`;
