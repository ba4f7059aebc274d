import type { ValidationError } from '../../services/errors';

/** A service's field errors keyed by the form's input names (services name fields in camelCase). */
export function errorsByInput(err: ValidationError, inputNames: Record<string, string>): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [field, message] of Object.entries(err.fields)) errors[inputNames[field] ?? field] = message;
  return errors;
}

/** What a re-rendered form shows: the user's input and a message per bad field. */
export interface FormState {
  values?: Record<string, string>;
  errors?: Record<string, string>;
}
