import { Secrets } from '../../integrations/secrets';
import { TEST_SECRETS_KEY } from './db';

/** The tests' key: what the app under test seals third-party secrets with (TEST_ENV.SECRETS_KEY). */
export const testSecrets = new Secrets(TEST_SECRETS_KEY);

/** A row as the service reads it: each of `columns` (sealed at rest) opened; no row, undefined. */
export function opened<T extends object | undefined>(row: T, columns: readonly string[] = ['secret']): T {
  return row === undefined ? row : (testSecrets.openFields(row as object, columns) as T);
}
