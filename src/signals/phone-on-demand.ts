// The phone module (libphonenumber-js and its metadata) loaded on first use instead of with the
// module that needs it: loading it costs ~90 ms of CPU, which every command line run (through the
// migrations, which run synchronously) and the writer thread at every start (through erasures'
// list items) paid for code few of their runs reach. A synchronous `require` of an ES module
// (Node 20.19+, 22.12+) returns the instance an `import` of it loads, so the threads that score
// (which import it) share one copy as before.
import { createRequire } from 'node:module';
import type * as PhoneModule from './phone.js';

let loaded: typeof PhoneModule | null = null;

export function phoneModule(): typeof PhoneModule {
  loaded ??= createRequire(import.meta.url)('./phone.js') as typeof PhoneModule;
  return loaded;
}
