// One way to build the ajv instance request schemas are compiled with: strict mode, and the
// ajv-formats formats the schemas use (uuid, email, date-time, ip addresses, uri).
import { Ajv, type ErrorObject } from 'ajv';
import { apiError, type ApiError } from '../shared/errors.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
type AddFormats = (ajv: Ajv, formats: readonly string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false });
  addFormats(ajv, ['uuid', 'email', 'date-time', 'ipv4', 'ipv6', 'uri']);
  return ajv;
}

/** "/user/phone" → "user.phone", "/extras/list/0" → "extras.list[0]". */
export function pointerToPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^[0-9]+$/.test(segment) ? `[${segment}]` : path === '' ? segment : `.${segment}`;
  }
  return path;
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}

/**
 * The first schema violation as a 400 VALIDATION_ERROR whose parameter names the field
 * ("user.phone", not a JSON pointer). `alternatives` words the failure of an anyOf by field.
 */
export function validationErrorOf(errors: readonly ErrorObject[], alternatives: Readonly<Record<string, string>> = {}): ApiError {
  // With anyOf, ajv lists each branch's failure before the anyOf itself; the anyOf reads better.
  const error = errors.find((candidate) => candidate.keyword === 'anyOf') ?? errors[0]!;
  const at = pointerToPath(error.instancePath);
  switch (error.keyword) {
    case 'required': {
      const field = join(at, (error.params as { missingProperty: string }).missingProperty);
      return apiError('VALIDATION_ERROR', `${field} is required.`, field);
    }
    case 'additionalProperties': {
      const field = join(at, (error.params as { additionalProperty: string }).additionalProperty);
      return apiError('VALIDATION_ERROR', `${field} is not a known property.`, field);
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: readonly unknown[] }).allowedValues.join(', ');
      return apiError('VALIDATION_ERROR', `${at} must be one of: ${allowed}.`, at);
    }
    case 'anyOf':
      return apiError('VALIDATION_ERROR', alternatives[at] ?? `${at} is invalid.`, at);
    default:
      return apiError('VALIDATION_ERROR', `${at === '' ? 'The body' : at} ${error.message ?? 'is invalid'}.`, at === '' ? 'body' : at);
  }
}
