import { expect } from 'chai';
import { functionFiles, withoutTrailingSpace } from '../helpers/function-files';
import { testKnex } from '../helpers/db';

/** Our functions in the migrated database: the public schema's, less those an extension (pg_trgm, unaccent) brings. */
async function databaseFunctions(): Promise<Array<{ name: string; definition: string }>> {
  const { rows } = await testKnex().raw(
    `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
      ORDER BY p.proname`,
  );
  return rows;
}

/**
 * The current text of each database function lives in the domain that owns it
 * (services/<domain>/db/<name>.sql or .sql.ts), and migrations carry copies of it: the file and the
 * migrated database must agree, so that reading the file is reading the rule the database runs.
 * A change is both: the file edited, and a new migration carrying its new text (docs/architecture.md).
 */
describe('the database’s functions, each in its domain’s file', () => {
  const files = functionFiles();

  it('every function of the migrated database has exactly one file, and every file names a function that exists', async () => {
    const functions = await databaseFunctions();
    const names = functions.map((f) => f.name);
    expect(new Set(names).size, 'one function per name: a file holds one definition').to.equal(names.length);
    expect(
      names.filter((name) => files.filter((f) => f.name === name).length !== 1),
      'functions without exactly one file under services/<domain>/db/',
    ).to.deep.equal([]);
    expect(
      files.filter((f) => !names.includes(f.name)).map((f) => f.file),
      'files of functions the database does not have',
    ).to.deep.equal([]);
  });

  for (const { name, file, text } of files)
    it(`${file} is the text of ${name} in the migrated database`, async () => {
      const [{ definition }] = (await testKnex().raw('SELECT pg_get_functiondef(to_regproc(?)) AS definition', [name])).rows;
      expect(definition, `${file}: the database has no function ${name}`).to.be.a('string');
      expect(withoutTrailingSpace(text), `${file} and the database differ: edit the file, or add a migration carrying the file's text`).to.equal(
        withoutTrailingSpace(definition),
      );
    });

  it('tells a text that drifted by one character, and lets only trailing whitespace go unseen', () => {
    const { text } = files.find((f) => f.name === 'orders_flag_risky')!;
    const compared = withoutTrailingSpace(text);
    expect(withoutTrailingSpace(text.replace(/(\d+) hours/, (_, hours) => `${Number(hours) + 1} hours`))).not.to.equal(compared);
    expect(withoutTrailingSpace(text.replace('  BEGIN', '   BEGIN'))).not.to.equal(compared);
    expect(withoutTrailingSpace(`${text.replace(/\n/g, '  \n')}\n\n`)).to.equal(compared);
  });
});
