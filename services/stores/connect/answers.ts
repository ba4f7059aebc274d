/** How a platform's answers read, whatever the platform: its JSON object, a field's object, an id. */

/** An answer's JSON object, or an empty one. */
export function jsonOf(body: string): Record<string, unknown> {
  try {
    return fieldsOf(JSON.parse(body));
  } catch {
    return {};
  }
}

export function fieldsOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A non-empty string or number field as text (an id), else null. */
export function idOf(value: unknown): string | null {
  return typeof value === 'string' && value ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
}
