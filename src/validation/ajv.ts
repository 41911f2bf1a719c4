// ajv's errors as the interface's: the first violation as a 400 VALIDATION_ERROR naming its field.
// The schemas themselves are compiled when the project is built (write-validators.ts).
import type { ErrorObject } from 'ajv';
import { apiError, type ApiError } from '../shared/errors.js';

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
