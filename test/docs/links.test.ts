import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';

/** What is not the repository's own text: installed, built, generated or private. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.data', 'test-artifacts', 'bench/tmp']);
const TEXT_FILE = /\.(md|ts|ejs|json|css|js|mjs|sh|yml|yaml|csv|txt)$|^Procfile$|^run$/;
/** This file names the patterns it looks for. */
const SELF = path.join('test', 'docs', 'links.test.ts');
/** A path into the machine this was written on, or into the specs beside the repository. */
const OUTSIDE = [/\/work\//, /shared\/spec/, /\.\.\/shared\b/, /shared\/DESIGN\.md/];

function walk(dir: string, found: string[] = []): string[] {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !SKIPPED_DIRS.has(rel)) walk(rel, found);
    } else if (entry.isFile()) {
      found.push(rel);
    }
  }
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1])));
}

/** Targets of inline links and images, `[text](target)` and `<img src="target">`, outside code. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const images = [...prose.matchAll(/<img[^>]+src="([^"]+)"/g)].map((m) => m[1]);
  const references = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return [...inline, ...images, ...references];
}

/** Why a link from `file` is broken, or undefined when it holds. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [rawPath, anchor] = target.split('#');
  const relPath = decodeURIComponent(rawPath);
  const resolved = relPath === '' ? file : path.normalize(path.join(path.dirname(file), relPath));
  if (path.isAbsolute(relPath) || resolved.startsWith('..')) return 'points outside the repository';
  if (!fs.existsSync(path.join(ROOT, resolved))) return 'no such file';
  if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) return `no heading #${anchor} in ${resolved}`;
  return undefined;
}

describe('the repository explains itself', () => {
  const files = walk('.');
  const markdown = files.filter((f) => f.endsWith('.md'));

  it('finds the Markdown files to check', () => {
    expect(markdown).to.include.members(['README.md', 'SECURITY.md', path.join('docs', 'architecture.md')]);
  });

  it('every relative link of a Markdown file reaches a file (and heading) in the repository', () => {
    const broken = markdown.flatMap((file) =>
      linksOf(fs.readFileSync(path.join(ROOT, file), 'utf8')).flatMap((target) => {
        const why = brokenLink(file, target);
        return why ? [`${file}: (${target}) ${why}`] : [];
      }),
    );
    expect(broken).to.deep.equal([]);
  });

  it('no file refers to anything outside the repository (the specs beside it, this machine)', () => {
    const outside = files
      .filter((f) => f !== SELF && TEXT_FILE.test(path.basename(f)))
      .flatMap((file) =>
        fs
          .readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (OUTSIDE.some((p) => p.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(outside).to.deep.equal([]);
  });

  it('catches what it is meant to catch', () => {
    expect(brokenLink('docs/api.md', '../examples/orders-import-sample.csv')).to.equal(undefined);
    expect(brokenLink('docs/api.md', 'no-such-page.md')).to.equal('no such file');
    expect(brokenLink('docs/api.md', '../../elsewhere/spec/order-confirmation-api.md')).to.equal('points outside the repository');
    expect(brokenLink('README.md', '/etc/passwd')).to.equal('points outside the repository');
    expect(brokenLink('docs/api.md', '#no-such-heading')).to.equal('no heading #no-such-heading in docs/api.md');
    expect(brokenLink('docs/api.md', '#the-session-api')).to.equal(undefined);
  });
});
