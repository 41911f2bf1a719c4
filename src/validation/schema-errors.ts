// Turns what ajv reports about a rejected body into the API's 400 VALIDATION_ERROR, with
// `parameter` naming the field the way the rest of the API does: dotted keys and [index] for array
// items ('components.screen.width', 'components.fonts[3]'). Pure.
import type { ErrorObject } from 'ajv';
import { apiError, type ApiError } from '../shared/errors.js';

/** The field an ajv error is about, as a dotted path into `root` (the validated value). */
export function parameterOf(error: ErrorObject, root: unknown): string {
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapePointer);
  // For these keywords ajv points at the parent object; the field itself is in params.
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  else if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  else if (error.keyword === 'uniqueItems') segments.push(String(error.params.j));

  let path = '';
  let value: unknown = root;
  for (const segment of segments) {
    // An index into an array reads as [i]; a key that happens to be digits stays a key.
    if (Array.isArray(value)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return path;
}

/** The first ajv error of a rejected body as a VALIDATION_ERROR. */
export function validationErrorOf(error: ErrorObject, root: unknown): ApiError {
  const parameter = parameterOf(error, root);
  const subject = parameter === '' ? 'The body' : parameter;
  return apiError('VALIDATION_ERROR', `${subject} ${describe(error)}.`, parameter);
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'uniqueItems':
      return `repeats item ${String(error.params.i)}`;
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** JSON Pointer (RFC 6901) unescaping: ~1 is '/', ~0 is '~'. */
function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
