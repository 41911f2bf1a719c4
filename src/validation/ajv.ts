// One way to build the ajv instance request schemas are compiled with: strict mode, and the
// ajv-formats formats the schemas use (uuid, email, date-time, ip addresses, uri).
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
type AddFormats = (ajv: Ajv, formats: readonly string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false });
  addFormats(ajv, ['uuid', 'email', 'date-time', 'ipv4', 'ipv6', 'uri']);
  return ajv;
}
