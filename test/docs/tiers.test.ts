import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import { testKnex } from '../helpers/db';

/**
 * The suite's shape (docs: README "Test it"): tests by domain and by speed, every tier in `npm test`,
 * the fast tiers in parallel with a database of each worker's own.
 */
describe('the test tiers', () => {
  const tests = path.join(ROOT, 'test');
  const dirs = fs.readdirSync(tests, { withFileTypes: true }).filter((e) => e.isDirectory() && !['helpers', 'fixtures'].includes(e.name));
  const tiers = fs.readFileSync(path.join(tests, 'tiers.ts'), 'utf8');

  it('every test file sits in a folder of its domain or tier; none is left at test/ where no tier runs it', () => {
    expect(fs.readdirSync(tests).filter((f) => f.endsWith('.test.ts'))).to.deep.equal([]);
    for (const tier of ['browser', 'processes', 'volume', 'orders', 'calls', 'deliveries', 'stats', 'stores', 'team']) {
      expect(dirs.map((d) => d.name)).to.include(tier);
      expect(
        fs.readdirSync(path.join(tests, tier)).some((f) => f.endsWith('.test.ts')),
        tier,
      ).to.equal(true);
    }
  });

  it('npm test runs every tier: the browser tier beside one parallel run of every other folder, slowest first', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).to.equal('npm run lint && npm run build && node dist/test/tiers.js');
    expect(tiers).to.contain("'--parallel',\n  'dist/test/{shared,processes,volume}/**/*.test.js',");
    expect(tiers).to.contain("'dist/test/!(browser|shared|processes|volume|helpers|fixtures)/**/*.test.js',");
    expect(tiers).to.contain("const BROWSER = ['dist/test/browser/**/*.test.js'];");
    expect(fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')).to.match(/^npm test 2>&1 \| tee "\$log"$/m);
  });

  it('a parallel worker has a database of its own (a copy of the template) and a Redis database of its own', async () => {
    const { rows } = await testKnex().raw('SELECT current_database() AS name');
    const worker = process.env.MOCHA_WORKER_ID;
    if (worker === undefined) {
      // One file run alone: serially, on the database itself.
      expect(rows[0].name).to.not.match(/_w\d+$/);
      return;
    }
    expect(rows[0].name).to.match(new RegExp(`_w${worker}$`));
    if (process.env.REDIS_URL) expect(new URL(process.env.REDIS_URL).pathname).to.not.equal('/0');
  });
});
