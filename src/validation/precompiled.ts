// The request validators ajv compiled when the project was built (write-validators.ts writes them
// next to this module, in generated/). Loading one costs a module read; compiling its schema at
// start cost 50–100 ms per schema on the HTTP thread, at every start.
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

/** The validators write-validators.ts makes, by the name of the module that uses each. */
export type PrecompiledName = 'event-input' | 'collect-request';

// ajv writes CommonJS (its standalone code requires its runtime helpers), loaded synchronously here.
const require = createRequire(import.meta.url);

export function precompiledValidator(name: PrecompiledName): ValidateFunction {
  try {
    return require(`./generated/${name}.cjs`) as ValidateFunction;
  } catch (error) {
    throw new Error(`the request validator ${name} was not built: run npm run build (${(error as Error).message})`);
  }
}
