// The request validators ajv compiled when the project was built (write-validators.ts writes them
// next to this module, in generated/). Loading one costs a module read; compiling its schema at
// start cost 50–100 ms per schema on the HTTP thread, at every start.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

/** The validators write-validators.ts makes, by the name of the module that uses each. */
export type PrecompiledName = 'event-input' | 'collect-request';

/** What a generated validator records of the schema it was compiled from. */
export function schemaDigest(schema: object): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
}

// ajv writes CommonJS (its standalone code requires its runtime helpers), loaded synchronously here.
const require = createRequire(import.meta.url);

/** The validator of `schema` built as `name`; refused if the build is older than the schema. */
export function precompiledValidator(name: PrecompiledName, schema: object): ValidateFunction {
  let validate: ValidateFunction & { schemaDigest?: string };
  try {
    validate = require(`./generated/${name}.cjs`) as ValidateFunction;
  } catch (error) {
    throw new Error(`the request validator ${name} was not built: run npm run build (${(error as Error).message})`);
  }
  // A build with tsc alone leaves the validators of the last full build, perhaps of an older schema.
  if (validate.schemaDigest !== schemaDigest(schema)) throw new Error(`the request validator ${name} was built from another schema: run npm run build`);
  return validate;
}
