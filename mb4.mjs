import { openDatabase } from '/work/main/dist/src/store/database.js';
import { migrate } from '/work/main/dist/src/store/migrate.js';
import { bootstrapIfEmpty } from '/work/main/dist/src/tenancy/provision.js';
import { persistScoredEvent } from '/work/main/dist/src/scoring/event-store.js';
import { eventMix } from '/work/main/dist/bench/_helpers/event-mix.js';
import { keyedHash } from '/work/main/dist/src/signals/keyed-hash.js';
import { mkdtempSync } from 'node:fs';
const variant = process.argv[2];
const dir = mkdtempSync('/tmp/mb-'); const db = openDatabase(dir, { checkpointElsewhere: true }); migrate(db); const b = bootstrapIfEmpty(db, Date.now());
const secret = Buffer.alloc(32, 1);
const gen = eventMix(7);
const big = JSON.stringify({ decision: 'allow', breakdown: Array.from({length: 30}, (_, i) => ({ rule_id: 'rule_number_' + i, rule_version: 1, score_delta: 0, band: null, matched: false, reason: 'rule_number_' + i })) });
const small = JSON.stringify({ d: 'allow', r: 3, b: Array.from({length: 30}, (_, i) => 0) });
const seen = new Set();
function record() {
  const payload = gen(); const e = JSON.parse(payload);
  const ids = [];
  if (e.user && !variant.includes('nosig')) { for (const [t, v] of [['email', e.user.email], ['phone', e.user.phone], ['fp', e.context.fp_id], ['ip', e.context.ip], ['card', e.payment ? e.payment.bin + e.payment.last4 : null]]) { if (!v) continue; const k = e.external_account_id + t + v; if (seen.has(k)) continue; seen.add(k); ids.push({ type: t, hash: keyedHash(secret, t, v), masked: 'x' }); } }
  return { projectId: b.live.project_id, tenantId: b.tenant.tenant_id, eventId: e.event_id, eventType: e.event_type, receivedAt: Date.now(), payload,
    account: e.external_account_id && !variant.includes('noacc') ? { accountId: 'acc_' + e.external_account_id, externalId: e.external_account_id } : null,
    identifiers: ids, rulesetVersion: 1, decision: 'allow', riskScore: 3, result: variant.includes('small') ? small : big, shadow: '[]', scoredAt: Date.now(), webhookPayload: null };
}
let frames = 0; let events = 0; let ms = 0;
for (let round = 0; round < 8; round++) {
  const recs = Array.from({ length: 33 * 300 }, record);
  const t = performance.now();
  for (let i = 0; i < recs.length; i += 33) {
    db.exec('BEGIN IMMEDIATE');
    for (let j = i; j < i + 33; j++) persistScoredEvent(db, recs[j], false);
    db.exec('COMMIT');
  }
  if (round >= 4) { ms += performance.now() - t; events += recs.length; }
  const c = db.pragma('wal_checkpoint(TRUNCATE)')[0]; if (round >= 4) frames += c.log;
}
console.log(variant.padEnd(20), (ms * 1000 / events).toFixed(1), 'us/event', (frames / events).toFixed(2), 'WAL pages/event');
