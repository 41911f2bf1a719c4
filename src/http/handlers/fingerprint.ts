// Device-fingerprint routes (docs/fingerprint.md): POST /v1/fp/collect and GET /v1/fp/agent.js.
// The I/O shell around the pure parts: body check (collect-request.ts), fp_id derivation
// (fp-id.ts), then one write through the group-commit writer (fingerprint-store.ts).
import { checkCollectBody } from '../../fingerprint/collect-request.js';
import type { AppWriter } from '../../write-commands.js';
import { deriveFpId } from '../../fingerprint/fp-id.js';
import { data, failure, raw, type Handler } from '../types.js';

export interface CollectDependencies {
  /** The install secret (src/store/install-secret.ts), read once at start. */
  readonly installSecret: Buffer;
  readonly writer: AppWriter;
}

export function createCollectHandler(deps: CollectDependencies): Handler {
  return async (context) => {
    const checked = checkCollectBody(context.body);
    if (!checked.ok) return failure(checked.error);
    // auth 'key' on this route: the server has authenticated a key before calling us.
    const tenantId = context.key!.tenantId;
    const fpId = deriveFpId(deps.installSecret, tenantId, checked.request.components);
    const sighting = await deps.writer.call('recordFingerprintSighting', tenantId, context.key!.environment, fpId, context.receivedAt);
    return data({
      fp_id: sighting.fp_id,
      first_seen: new Date(sighting.first_seen).toISOString(),
      last_seen: new Date(sighting.last_seen).toISOString(),
      seen_count: sighting.seen_count,
    });
  };
}

const kJavaScript = 'application/javascript; charset=utf-8';
// An hour: a busy shop does not fetch the script on every page view, and after an upgrade pages
// run the new agent within the hour. Until then a cached older agent posts to the new server, so a
// change to the body schema has to accept the previous agent's body (docs/fingerprint.md).
const kAgentHeaders = [
  ['Cache-Control', 'public, max-age=3600'],
  ['X-Content-Type-Options', 'nosniff'],
] as const;

/** GET /v1/fp/agent.js: the script, outside the JSON envelope (it is loaded by a <script> tag). */
export function createAgentHandler(script: string): Handler {
  const reply = raw(200, kJavaScript, script, kAgentHeaders);
  return () => reply;
}
