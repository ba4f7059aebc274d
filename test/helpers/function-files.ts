import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../config';

/**
 * A database function's file (docs/architecture.md): `services/<domain>/db/<name>.sql`, its text as
 * `pg_get_functiondef` gives it, or `<name>.sql.ts`, whose `definition` is that text made from a
 * TypeScript table.
 */
export interface FunctionFile {
  name: string;
  domain: string;
  /** From the project's root: services/<domain>/db/<file>. */
  file: string;
  text: string;
}

/** Every function file of every domain: a `.sql` read from the sources, a `.sql.ts` loaded compiled. */
export function functionFiles(): FunctionFile[] {
  const found: FunctionFile[] = [];
  const services = path.join(ROOT, 'services');
  for (const domain of fs.readdirSync(services)) {
    const dir = path.join(services, domain, 'db');
    if (!fs.existsSync(dir)) continue;
    for (const file of fs.readdirSync(dir).sort()) {
      const sql = /^(\w+)\.sql$/.exec(file);
      const typed = /^(\w+)\.sql\.ts$/.exec(file);
      if (!sql && !typed) continue;
      const text = sql
        ? fs.readFileSync(path.join(dir, file), 'utf8')
        : (require(path.join(__dirname, '..', '..', 'services', domain, 'db', `${typed![1]}.sql.js`)) as { definition: string }).definition;
      found.push({ name: (sql ?? typed)![1], domain, file: path.posix.join('services', domain, 'db', file), text });
    }
  }
  return found;
}

/** A definition as compared: without trailing whitespace (of a line or of the text), which editors strip. */
export function withoutTrailingSpace(text: string): string {
  return text.replace(/[ \t]+$/gm, '').trimEnd();
}
