// Build step (scripts/build.mjs runs it after tsc): compiles the request schemas with ajv and writes
// each validator as code into generated/ next to this module, where precompiled.ts loads it. The
// server then neither loads ajv's compiler nor compiles a schema when it starts.
//   node dist/src/validation/write-validators.js
import { mkdirSync, writeFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import { kCollectSchema } from '../fingerprint/collect-schema.js';
import { kEventSchema } from './event-schema.js';
import { schemaDigest, type PrecompiledName } from './precompiled.js';

// Both are CommonJS with `exports.default`; under NodeNext the default import is the module.
type AddFormats = (ajv: Ajv, formats: readonly string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;
type StandaloneCode = (ajv: Ajv, validate: ReturnType<Ajv['compile']>) => string;
const standaloneCode = ((standaloneCodeModule as unknown as { default?: StandaloneCode }).default ?? standaloneCodeModule) as unknown as StandaloneCode;

const kSchemas: Readonly<Record<PrecompiledName, object>> = {
  'event-input': kEventSchema,
  'collect-request': kCollectSchema,
};

/** The project's ajv: strict, first error only, the ajv-formats formats the schemas use. */
function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false, code: { source: true } });
  addFormats(ajv, ['uuid', 'email', 'date-time', 'ipv4', 'ipv6', 'uri']);
  return ajv;
}

const out = new URL('./generated/', import.meta.url);
mkdirSync(out, { recursive: true });
for (const [name, schema] of Object.entries(kSchemas)) {
  const ajv = createAjv();
  const code = standaloneCode(ajv, ajv.compile(schema));
  const digest = `module.exports.schemaDigest = ${JSON.stringify(schemaDigest(schema))};`;
  writeFileSync(new URL(`${name}.cjs`, out), `// Written by write-validators.js from the schema; do not edit.\n${code}\n${digest}\n`);
}
