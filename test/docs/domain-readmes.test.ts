import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import { testKnex } from '../helpers/db';
import { functionFiles } from '../helpers/function-files';

/** Every domain README under services/, its "Triggers and functions" section, and the names that section lists first on each line. */
function readmes(): Array<{ file: string; text: string; section: string; listed: string[] }> {
  const found: Array<{ file: string; text: string; section: string; listed: string[] }> = [];
  const services = path.join(ROOT, 'services');
  for (const entry of fs.readdirSync(services, { withFileTypes: true })) {
    const file = path.join(services, entry.name, 'README.md');
    if (!entry.isDirectory() || !fs.existsSync(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    const section = /^## Triggers and functions\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1] ?? '';
    // A bullet names its triggers and functions first, over one line or more: "- `a`, `b` — what they do".
    const listed = [...section.matchAll(/^- ((?:`\w+`(?:,\s+|\s+and\s+)?)+)/gm)].flatMap((m) => [...m[1].matchAll(/`(\w+)`/g)].map((n) => n[1]));
    found.push({ file: path.relative(ROOT, file), text, section, listed });
  }
  return found;
}

/**
 * The rules that live in the database (triggers and the functions they and the queries call) are
 * named in the README of the domain they belong to: a trigger nobody names is a rule nobody sees.
 */
describe('domain READMEs name the database’s triggers and functions', () => {
  async function inDatabase(): Promise<{ triggers: string[]; functions: string[] }> {
    const triggers = await testKnex().raw('SELECT DISTINCT tgname AS name FROM pg_trigger WHERE NOT tgisinternal');
    // Our functions: the public schema's, less those an extension (pg_trgm, unaccent) brings.
    const functions = await testKnex().raw(
      `SELECT DISTINCT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
    );
    const names = (result: { rows: Array<{ name: string }> }) => result.rows.map((r) => r.name).sort();
    return { triggers: names(triggers), functions: names(functions) };
  }

  it('every trigger and function of a migrated database is listed in a domain README', async () => {
    const { triggers, functions } = await inDatabase();
    const listed = new Set(readmes().flatMap((r) => r.listed));
    expect(
      triggers.filter((name) => !listed.has(name)),
      'triggers no README lists',
    ).to.deep.equal([]);
    expect(
      functions.filter((name) => !listed.has(name)),
      'functions no README lists',
    ).to.deep.equal([]);
  });

  it('each function’s file (services/<domain>/db/) is named in its domain README’s "Triggers and functions"', () => {
    const sections = new Map(readmes().map((r) => [r.file, r.section]));
    const unnamed = functionFiles().filter(
      ({ domain, file }) => !sections.get(path.join('services', domain, 'README.md'))?.includes(`(${path.posix.relative(`services/${domain}`, file)})`),
    );
    expect(
      unnamed.map((f) => f.file),
      'function files their README does not link',
    ).to.deep.equal([]);
  });

  it('a README lists no trigger or function that is gone', async () => {
    const { triggers, functions } = await inDatabase();
    const exists = new Set([...triggers, ...functions]);
    for (const { file, listed } of readmes())
      expect(
        listed.filter((name) => !exists.has(name)),
        file,
      ).to.deep.equal([]);
  });
});
