// The JS step of migration 7 (store/migrations/007-environments.ts): every account gets the
// environment of the projects that used it; an account that live and sandbox projects both used is
// split in two. The live side keeps the acc_ id (live integrations may have stored it); the sandbox
// side gets a new one, with its events, project rows and cases. The signals of a split account are
// recomputed from its events (a signal row does not say which project used it), and the links of
// both halves are rebuilt within their environment.
import { kMaxLinksPerValue } from '../state/hot-state.js';
import { newId } from '../shared/ids.js';
import { phoneModule } from '../signals/phone-on-demand.js';
import { storedIdentifiers } from '../signals/stored-identifiers.js';
import type { Db } from '../store/database.js';
import type { EventInput } from '../validation/event-input.js';
import { payloadText } from '../scoring/stored-payload.js';

const kDayMs = 86_400_000;

interface Split {
  readonly tenantId: string;
  readonly live: string;
  readonly sandbox: string;
}

export function splitEnvironments(db: Db): void {
  const usage = db.prepare(
    `SELECT ap.account_id, a.tenant_id, min(p.environment) AS first_env, max(p.environment) AS last_env
     FROM account_projects ap JOIN projects p ON p.project_id = ap.project_id JOIN accounts a ON a.account_id = ap.account_id
     GROUP BY ap.account_id`,
  ).all() as Array<{ account_id: string; tenant_id: string; first_env: string; last_env: string }>;
  const setSandbox = db.prepare("UPDATE accounts SET environment = 'sandbox' WHERE account_id = ?");
  const splits: Split[] = [];
  for (const row of usage) {
    if (row.first_env === 'sandbox') setSandbox.run(row.account_id); // 'live' < 'sandbox': sandbox only
    else if (row.last_env === 'sandbox') splits.push({ tenantId: row.tenant_id, live: row.account_id, sandbox: newId('acc') });
  }
  for (const split of splits) moveSandboxSide(db, split);

  // Signals of accounts that stayed whole keep their rows, now with the account's environment.
  db.exec('CREATE TEMP TABLE split_accounts (account_id TEXT PRIMARY KEY) WITHOUT ROWID');
  const markSplit = db.prepare('INSERT INTO temp.split_accounts (account_id) VALUES (?)');
  for (const split of splits) markSplit.run(split.live);
  db.exec(
    `INSERT INTO account_signals_env SELECT s.tenant_id, a.environment, s.signal_type, s.signal_hash, s.account_id, s.masked, s.first_seen, s.last_seen
     FROM account_signals s JOIN accounts a ON a.account_id = s.account_id WHERE s.account_id NOT IN (SELECT account_id FROM temp.split_accounts)`,
  );
  db.exec('DROP TABLE temp.split_accounts');
  if (splits.length === 0) return;

  const secret = Buffer.from((db.prepare("SELECT value FROM meta WHERE name = 'install_secret'").pluck().get() as string | undefined) ?? '', 'base64');
  for (const split of splits) {
    recomputeSignals(db, split.tenantId, 'live', split.live, secret);
    recomputeSignals(db, split.tenantId, 'sandbox', split.sandbox, secret);
  }
  const dropLinks = db.prepare('DELETE FROM account_links WHERE account_id = ? OR other_account_id = ?');
  for (const split of splits) dropLinks.run(split.live, split.live);
  for (const split of splits) {
    rebuildLinks(db, split.tenantId, 'live', split.live);
    rebuildLinks(db, split.tenantId, 'sandbox', split.sandbox);
  }
}

function moveSandboxSide(db: Db, split: Split): void {
  const sandboxProjects = `(SELECT project_id FROM projects WHERE tenant_id = ? AND environment = 'sandbox')`;
  db.prepare(`UPDATE events SET account_id = ? WHERE account_id = ? AND project_id IN ${sandboxProjects}`).run(split.sandbox, split.live, split.tenantId);
  db.prepare(`UPDATE account_projects SET account_id = ? WHERE account_id = ? AND project_id IN ${sandboxProjects}`).run(split.sandbox, split.live, split.tenantId);
  db.prepare(`UPDATE cases SET account_id = ? WHERE account_id = ? AND project_id IN ${sandboxProjects}`).run(split.sandbox, split.live, split.tenantId);
  db.prepare(
    `INSERT INTO accounts (account_id, tenant_id, environment, external_account_id, created_at, last_seen_at, events, blocks, reviews, fraud_confirmed)
     SELECT ?, tenant_id, 'sandbox', external_account_id, created_at, last_seen_at, 0, 0, 0, 0 FROM accounts WHERE account_id = ?`,
  ).run(split.sandbox, split.live);
  // Counters, times and the fraud mark of each half, from what each half holds.
  const recount = db.prepare(
    `UPDATE accounts SET
       events = (SELECT count(*) FROM events WHERE account_id = @id AND state = 'scored'),
       blocks = (SELECT count(*) FROM events WHERE account_id = @id AND decision = 'block'),
       reviews = (SELECT count(*) FROM events WHERE account_id = @id AND decision = 'review'),
       created_at = coalesce((SELECT min(scored_at) FROM events WHERE account_id = @id), created_at),
       last_seen_at = coalesce((SELECT max(scored_at) FROM events WHERE account_id = @id), last_seen_at),
       fraud_confirmed = EXISTS (SELECT 1 FROM cases WHERE account_id = @id AND resolution = 'fraud')
     WHERE account_id = @id`,
  );
  recount.run({ id: split.live });
  recount.run({ id: split.sandbox });
}

function recomputeSignals(db: Db, tenantId: string, environment: string, accountId: string, secret: Buffer): void {
  // Loaded here, not with this module: only a database from before migration 7 gets this far.
  const phone = phoneModule();
  const events = db.prepare("SELECT payload, scored_at FROM events WHERE account_id = ? AND state = 'scored' ORDER BY seq").all(accountId) as Array<{ payload: string; scored_at: number }>;
  const upsert = db.prepare(
    `INSERT INTO account_signals_env (tenant_id, environment, signal_type, signal_hash, account_id, masked, first_seen, last_seen)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT DO UPDATE SET last_seen = max(last_seen, excluded.last_seen), first_seen = min(first_seen, excluded.first_seen)`,
  );
  for (const event of events) {
    let body: EventInput;
    try {
      body = JSON.parse(payloadText(event.payload)) as EventInput;
    } catch {
      continue;
    }
    for (const id of storedIdentifiers(body, phone.analyzeEventPhone(body), secret)) {
      upsert.run(tenantId, environment, id.type, id.hash, accountId, id.masked, event.scored_at, event.scored_at);
    }
  }
}

/** Links of one account with the holders of its signals in its environment (both directions). */
function rebuildLinks(db: Db, tenantId: string, environment: string, accountId: string): void {
  const own = db.prepare('SELECT signal_type, signal_hash, masked, first_seen, last_seen FROM account_signals_env WHERE account_id = ? AND tenant_id = ? AND environment = ?')
    .all(accountId, tenantId, environment) as Array<{ signal_type: string; signal_hash: string; masked: string; first_seen: number; last_seen: number }>;
  const others = db.prepare(
    `SELECT s.account_id, s.first_seen, s.last_seen, a.external_account_id,
       (SELECT ',' || group_concat(project_id, ',') || ',' FROM account_projects WHERE account_id = s.account_id) AS projects
     FROM account_signals_env s JOIN accounts a ON a.account_id = s.account_id
     WHERE s.tenant_id = ? AND s.environment = ? AND s.signal_type = ? AND s.signal_hash = ? AND s.account_id != ?
     ORDER BY s.last_seen DESC LIMIT ${kMaxLinksPerValue}`,
  );
  const self = db.prepare(
    `SELECT external_account_id, (SELECT ',' || group_concat(project_id, ',') || ',' FROM account_projects WHERE account_id = @id) AS projects
     FROM accounts WHERE account_id = @id`,
  ).get({ id: accountId }) as { external_account_id: string; projects: string | null };
  const upsert = db.prepare(
    `INSERT INTO account_links (account_id, signal_type, other_account_id, other_external_id, other_projects, masked, first_seen, last_seen)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, signal_type, other_account_id) DO UPDATE SET
       last_seen = max(last_seen, excluded.last_seen), first_seen = min(first_seen, excluded.first_seen), masked = excluded.masked, other_projects = excluded.other_projects`,
  );
  for (const signal of own) {
    const linkType = signal.signal_type === 'ip' ? 'ip_24h' : signal.signal_type;
    const holders = others.all(tenantId, environment, signal.signal_type, signal.signal_hash, accountId) as Array<{
      account_id: string; first_seen: number; last_seen: number; external_account_id: string; projects: string | null;
    }>;
    for (const other of holders) {
      // An IP links only accounts that used it within 24 hours of each other.
      if (signal.signal_type === 'ip' && Math.abs(other.last_seen - signal.last_seen) > kDayMs) continue;
      const firstSeen = Math.max(signal.first_seen, other.first_seen);
      const lastSeen = Math.max(signal.last_seen, other.last_seen);
      upsert.run(accountId, linkType, other.account_id, other.external_account_id, other.projects ?? ',', signal.masked, firstSeen, lastSeen);
      upsert.run(other.account_id, linkType, accountId, self.external_account_id, self.projects ?? ',', signal.masked, firstSeen, lastSeen);
    }
  }
}
