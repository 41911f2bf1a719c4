// Device fingerprints seen per tenant (POST /v1/fp/collect). Only the derived fp_id and when it was
// seen are kept; the components a browser sent are not stored (docs/fingerprint.md says why).
// Times are epoch milliseconds, like every other table.
export const kFingerprintsMigration = `
CREATE TABLE fingerprints (
  tenant_id  TEXT NOT NULL REFERENCES tenants (tenant_id),
  fp_id      TEXT NOT NULL,
  first_seen INTEGER NOT NULL,
  last_seen  INTEGER NOT NULL,
  seen_count INTEGER NOT NULL CHECK (seen_count >= 1),
  PRIMARY KEY (tenant_id, fp_id)
) WITHOUT ROWID;
`;
