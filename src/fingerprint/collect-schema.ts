// The JSON schema of the body of POST /v1/fp/collect, from the component table. Compiled by ajv when
// the project is built (validation/write-validators.ts); collect-request.ts validates with it.
// The project's ajv is strict, stops at the first error and has ajv-formats; union types
// ('string' | 'null') are how the component table says "the browser may not have this".
import { kComponents, kStableComponentNames } from './components.js';

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
