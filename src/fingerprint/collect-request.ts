// The body of POST /v1/fp/collect: its JSON schema (collect-schema.ts, compiled when the project is
// built), and the check that turns a parsed body into Components or into the 400 the interface asks
// for. Pure.
//
//   { "components": { "canvas": "1x2y3z", "webgl": {...}, "screen": {...}, ... } }
//
// Unknown fields are refused at every level, so a misspelt component is reported (parameter
// 'components.scren') instead of silently left out of the fp_id. The agent that sends the body is
// served by the same server (GET /v1/fp/agent.js), so both change in the same release; a page may
// keep a cached agent for up to an hour after an upgrade (docs/fingerprint.md, "Compatibility").
import type { ApiError } from '../shared/errors.js';
import { validationErrorOf } from '../validation/ajv.js';
import { precompiledValidator } from '../validation/precompiled.js';
import { kCollectSchema } from './collect-schema.js';
import type { Components } from './components.js';

// Compiled by ajv at build time (validation/write-validators.ts): no schema compile at start.
const kValidate = precompiledValidator('collect-request', kCollectSchema);

export interface CollectRequest {
  readonly components: Components;
}

export type CollectCheck = { readonly ok: true; readonly request: CollectRequest } | { readonly ok: false; readonly error: ApiError };

export function checkCollectBody(body: unknown): CollectCheck {
  if (kValidate(body)) return { ok: true, request: body as unknown as CollectRequest };
  return { ok: false, error: validationErrorOf(kValidate.errors!) };
}
