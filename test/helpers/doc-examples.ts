import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../config';

/**
 * The runnable examples of the README and docs/. A fenced block whose info string carries
 * `test=<sequence>` belongs to that sequence; the blocks of one sequence run in the order they
 * appear, in one bash, from nothing. A block that also carries `file=<name>` is not run: it is
 * saved under that name first, as the text tells the reader to. A shell block that must not run
 * (it starts the service, deploys, or waits forever) says `notest`. docs/architecture.md tells the
 * same to the writers of the docs.
 */
interface DocBlock {
  lang: string;
  attrs: Record<string, string>;
  code: string;
  line: number;
}

export interface DocSequence {
  file: string;
  name: string;
  /** Files to save before running: name → content. */
  files: Record<string, string>;
  script: string;
}

const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);
const CODE_LANGS = new Set(['js', 'mjs', 'ts', 'javascript', 'typescript']);

/** The Markdown files whose examples must run. */
export function documentedFiles(): string[] {
  const docs = path.join(ROOT, 'docs');
  const pages = fs.existsSync(docs)
    ? fs
        .readdirSync(docs)
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join('docs', f))
    : [];
  return ['README.md', ...pages.sort()];
}

function fencedBlocks(markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i].startsWith(fence); i++) body.push(lines[i]);
    const attrs: Record<string, string> = {};
    for (const word of open[3].split(/\s+/).filter(Boolean)) {
      const [key, value = 'true'] = word.split('=');
      attrs[key] = value;
    }
    blocks.push({ lang: open[2].toLowerCase(), attrs, code: `${body.join('\n')}\n`, line: start + 1 });
  }
  return blocks;
}

/** Blocks that look runnable but are neither in a sequence nor marked `notest`. */
export function unmarkedBlocks(file: string, markdown: string): string[] {
  return fencedBlocks(markdown)
    .filter((b) => (SHELL_LANGS.has(b.lang) || CODE_LANGS.has(b.lang)) && !b.attrs.test && !b.attrs.notest)
    .map((b) => `${file}:${b.line} (\`\`\`${b.lang})`);
}

export function sequences(file: string, markdown: string): DocSequence[] {
  const byName = new Map<string, DocSequence>();
  for (const block of fencedBlocks(markdown)) {
    const name = block.attrs.test;
    if (!name || name === 'true') continue;
    let sequence = byName.get(name);
    if (!sequence) {
      sequence = { file, name, files: {}, script: '' };
      byName.set(name, sequence);
    }
    if (block.attrs.file) sequence.files[block.attrs.file] = block.code;
    else if (SHELL_LANGS.has(block.lang)) sequence.script += `# ${file}:${block.line}\n${block.code}`;
    else throw new Error(`${file}:${block.line}: a block in sequence ${name} is neither a shell block nor a file=`);
  }
  return [...byName.values()];
}
