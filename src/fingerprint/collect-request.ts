// The body of POST /v1/fp/collect: its JSON schema, compiled once when this module loads, and the
// check that turns a parsed body into Components or into the 400 the interface asks for. Pure.
//
//   { "components": { "canvas": "1x2y3z", "webgl": {...}, "screen": {...}, ... } }
//
// Unknown fields are refused at every level, so a misspelt component is reported (parameter
// 'components.scren') instead of silently left out of the fp_id. The agent that sends the body is
// served by the same server (GET /v1/fp/agent.js), so both change in the same release; a page may
// keep a cached agent for up to an hour after an upgrade (docs/fingerprint.md, "Compatibility").
import type { ApiError } from '../shared/errors.js';
import { createAjv, validationErrorOf } from '../validation/ajv.js';
import { kComponents, kStableComponentNames, type Components } from './components.js';

export const kCollectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['components'],
  properties: {
    components: {
      type: 'object',
      additionalProperties: false,
      required: kStableComponentNames,
      properties: Object.fromEntries(kComponents.map((component) => [component.name, component.schema])),
    },
  },
} as const;

// The project's ajv (strict, first error only, ajv-formats); union types ('string' | 'null') are
// how the component table says "the browser may not have this".
const kValidate = createAjv().compile(kCollectSchema);

export interface CollectRequest {
  readonly components: Components;
}

export type CollectCheck = { readonly ok: true; readonly request: CollectRequest } | { readonly ok: false; readonly error: ApiError };

export function checkCollectBody(body: unknown): CollectCheck {
  if (kValidate(body)) return { ok: true, request: body as unknown as CollectRequest };
  return { ok: false, error: validationErrorOf(kValidate.errors!) };
}
