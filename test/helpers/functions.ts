import { testKnex } from './db';

/** A database function's current text as `pg_get_functiondef` shows it, trimmed. */
export async function functionText(name: string): Promise<string> {
  const { rows } = await testKnex().raw<{ rows: Array<{ text: string }> }>('SELECT pg_get_functiondef(?::regproc) AS text', [name]);
  return rows[0].text.trim();
}
