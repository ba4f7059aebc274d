import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { expect } from 'chai';
import { ROOT } from '../../config';

/**
 * The shape of the code is checked on every `npm test` (issue 32): `npm run lint` runs first, and
 * fails on a broken layer rule (dependency-cruiser), a lint error (Biome) or an unused export (knip).
 * Each is shown here on a scratch copy of the sources, clean and then with one violation put in.
 */
const SKIPPED = new Set(['node_modules', 'dist', '.git', '.data', 'test-artifacts', 'public', 'views']);

function scratchCopy(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shape-'));
  fs.cpSync(ROOT, dir, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(ROOT, source);
      return relative === '' || !(SKIPPED.has(relative.split(path.sep)[0]) || relative.startsWith(path.join('bench', 'tmp')));
    },
  });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** One of package.json's scripts, run in the scratch copy as `npm test` runs it. */
function npmRun(dir: string, script: string): { status: number | null; output: string } {
  const result = spawnSync('npm', ['run', '--silent', script], { cwd: dir, encoding: 'utf8' });
  return { status: result.status, output: stripVTControlCharacters(`${result.stdout}${result.stderr}`) };
}

function append(dir: string, file: string, text: string): void {
  fs.appendFileSync(path.join(dir, file), text);
}

describe('the shape of the code, checked by npm test (issue 32)', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => {
    dir = scratchCopy();
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('npm test runs npm run lint first, and lint runs Biome, dependency-cruiser and knip', () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(scripts.test).to.match(/^npm run lint && /);
    expect(scripts.lint).to.equal('npm run lint:biome && npm run lint:deps && npm run lint:unused');
    expect(scripts['lint:biome']).to.match(/^biome ci --error-on-warnings\b/);
    expect(scripts['lint:deps']).to.equal('depcruise .');
    expect(scripts['lint:unused']).to.equal('knip');
  });

  it('dependency-cruiser: the layers hold today; an import upward or a cycle fails, naming its rule', () => {
    const clean = npmRun(dir, 'lint:deps');
    expect(clean.status, clean.output).to.equal(0);
    expect(clean.output).to.match(/no dependency violations found \(\d{3,} modules/);

    append(dir, 'services/stats/service.ts', "\nimport '../../routes/health';\n");
    append(dir, 'integrations/signing.ts', "\nimport '../services/shared';\n");
    append(dir, 'routes/health.ts', "\nimport '../jobs';\nimport '../services/orders/search';\n");
    append(dir, 'services/shared/validation.ts', "\nimport '../orders';\n");
    append(dir, 'services/calls/ladder.ts', "\nimport '../orders/search';\n");
    append(dir, 'db/migrations/20261124_10_risky_orders.ts', "\nimport '../order-fields';\nimport 'zod';\n");
    append(dir, 'services/calls/outcomes.ts', "\nimport '../../services/shared';\n");
    const broken = npmRun(dir, 'lint:deps');
    expect(broken.status, broken.output).to.not.equal(0);
    expect(broken.output).to.match(/error services-not-to-routes-or-jobs: services\/stats\/service\.ts → routes\/health\.ts/);
    expect(broken.output).to.match(/error foundation-not-to-upper-layers: integrations\/signing\.ts → services\/shared\/index\.ts/);
    expect(broken.output).to.match(/error routes-not-to-jobs-or-worker: routes\/health\.ts → jobs\/index\.ts/);
    expect(broken.output).to.match(/error no-circular: services\/orders\/[\w-]+\.ts → /);
    // The domains: shared/ imports none, and a domain is entered by its index.ts only.
    expect(broken.output).to.match(/error shared-not-to-domains: services\/shared\/validation\.ts → services\/orders\/index\.ts/);
    expect(broken.output).to.match(/error domain-through-its-index: routes\/health\.ts → services\/orders\/search\.ts/);
    expect(broken.output).to.match(/error domain-to-domain-through-index: services\/calls\/ladder\.ts → services\/orders\/search\.ts/);
    // A migration imports no live code, nor any package but knex: what it ran must mean the same forever.
    expect(broken.output).to.match(/error migrations-import-nothing-live: db\/migrations\/20261124_10_risky_orders\.ts → db\/order-fields\.ts/);
    expect(broken.output).to.match(/error migrations-import-nothing-live: db\/migrations\/20261124_10_risky_orders\.ts → \S*node_modules\/zod\//);
    // calls/outcomes.ts, the one other door of a domain, imports nothing.
    expect(broken.output).to.match(/error calls-outcomes-imports-nothing: services\/calls\/outcomes\.ts → services\/shared\/index\.ts/);
  });

  it('Biome: the code passes the lint rules today; a lint error fails, naming its rule', () => {
    const clean = npmRun(dir, 'lint:biome');
    expect(clean.status, clean.output).to.equal(0);

    append(dir, 'services/shared/phone.ts', "\nexport function shout(text: string): string {\n  debugger;\n  return text == 'quiet' ? '' : text;\n}\n");
    const broken = npmRun(dir, 'lint:biome');
    expect(broken.status, broken.output).to.not.equal(0);
    expect(broken.output).to.contain('lint/suspicious/noDebugger');
    expect(broken.output).to.contain('lint/suspicious/noDoubleEquals');
  });

  it('knip: an export nothing uses fails', () => {
    append(dir, 'services/shared/locks.ts', '\nexport const NOBODY_READS_THIS = 1;\n');
    const broken = npmRun(dir, 'lint:unused');
    expect(broken.status, broken.output).to.not.equal(0);
    expect(broken.output).to.match(/Unused exports \(\d+\)[\s\S]*NOBODY_READS_THIS/);
  });
});
