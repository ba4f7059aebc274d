import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import { LANGUAGES } from '../../services/shared';

type Catalogue = Record<string, unknown>;
const PLURAL = /_(zero|one|two|few|many|other)$/;

function flatten(tree: Catalogue, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(tree)) {
    if (typeof value === 'object' && value !== null) Object.assign(out, flatten(value as Catalogue, `${prefix}${key}.`));
    else out[`${prefix}${key}`] = String(value);
  }
  return out;
}

const catalogues = Object.fromEntries(LANGUAGES.map((lng) => [lng, flatten(JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${lng}.json`), 'utf8')))]));
/** Keys without their plural suffix: what code asks for. */
const baseKeys = (lng: string) => new Set(Object.keys(catalogues[lng]).map((k) => k.replace(PLURAL, '')));
const pluralKeys = (lng: string) =>
  new Set(
    Object.keys(catalogues[lng])
      .filter((k) => PLURAL.test(k))
      .map((k) => k.replace(PLURAL, '')),
  );

/** Every template and page route, and the store platforms' guides (their strings' keys), read as text. */
function sources(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (/\.(ejs|ts)$/.test(entry.name)) files.push(fs.readFileSync(path.join(ROOT, rel), 'utf8'));
    }
  };
  for (const dir of ['views', 'routes', path.join('services', 'stores', 'platforms')]) walk(dir);
  return files.join('\n');
}

/** Keys named through a computed suffix (`status.${s}`, `'layout.nav.' + key`): every key under these is in use. */
const DYNAMIC_PREFIXES = [
  'webhookPage.status.',
  'apiKeysPage.state.',
  'workspacePage.role.',
  'auditPage.action.',
  'status.',
  'flag.',
  'outcome.',
  'messages.',
  'fieldLabel.',
  'calls.notice.',
  'layout.nav.',
  'join.',
  'storesPage.kind.',
  'storePage.result.',
  'storeGuide.admin.',
  'storeConnect.intro.',
  'storeConnect.approve.',
  'storeConnect.notConfigured.',
  'storeConnect.error.',
  'delivery.status.',
  // A carrier account's state, a parcel's state, and each carrier's guide and credentials, by kind.
  'shipping.states.',
  'shipping.parcelStates.',
  'shipping.guide.',
  'shipping.credential.',
  'shipping.where.',
  'shipping.filter.',
  'delivery.sources.',
  'report.reason.',
  'report.column.',
  'deliveryStats.by.',
  'deliveryStats.col.',
  'statsTeam.kind.',
  'team.mode.',
  'orders.payFilter.',
];

describe('languages: the catalogues (locales/en.json, fr.json, ar.json)', () => {
  it('no key is written twice in one object (JSON keeps the last, so the first text would be lost unseen)', () => {
    for (const lng of LANGUAGES) {
      const text = fs.readFileSync(path.join(ROOT, 'locales', `${lng}.json`), 'utf8');
      const twice: string[] = [];
      const stack: Array<Set<string>> = [];
      // Every string whole (its braces are text), a key when a colon follows; objects by their braces.
      for (const token of text.matchAll(/"((?:[^"\\]|\\.)*)"(\s*:)?|[{}]/g)) {
        if (token[0] === '{') stack.push(new Set());
        else if (token[0] === '}') stack.pop();
        else if (token[2]) {
          const keys = stack[stack.length - 1];
          if (keys.has(token[1])) twice.push(token[1]);
          keys.add(token[1]);
        }
      }
      expect(twice, lng).to.deep.equal([]);
    }
  });

  it('every language has the same keys: none missing, none extra', () => {
    const en = baseKeys('en');
    for (const lng of LANGUAGES) {
      const keys = baseKeys(lng);
      expect(
        [...en].filter((k) => !keys.has(k)),
        `missing in ${lng}`,
      ).to.deep.equal([]);
      expect(
        [...keys].filter((k) => !en.has(k)),
        `only in ${lng}`,
      ).to.deep.equal([]);
    }
  });

  it('every plural key has every category Intl.PluralRules gives its language (French many, Arabic six)', () => {
    const plurals = new Set(LANGUAGES.flatMap((lng) => [...pluralKeys(lng)]));
    for (const lng of LANGUAGES) {
      const categories = new Intl.PluralRules(lng).resolvedOptions().pluralCategories;
      const missing = [...plurals].flatMap((key) => categories.filter((c) => !(`${key}_${c}` in catalogues[lng])).map((c) => `${key}_${c}`));
      expect(missing, lng).to.deep.equal([]);
    }
    expect(new Intl.PluralRules('ar').resolvedOptions().pluralCategories).to.have.length(6);
  });

  it('no text is empty, and every {{placeholder}} of English is in the translations', () => {
    for (const lng of LANGUAGES) {
      for (const [key, text] of Object.entries(catalogues[lng])) {
        expect(text.trim(), `${lng} ${key}`).not.to.equal('');
        const base = key.replace(PLURAL, '');
        const english = catalogues.en[key] ?? catalogues.en[`${base}_other`];
        const wanted = (english?.match(/\{\{\w+\}\}/g) ?? []).filter((p) => p !== '{{count}}');
        for (const placeholder of wanted) expect(text, `${lng} ${key}`).to.contain(placeholder);
      }
    }
  });

  it("every t('…') in views and routes names a key that exists, and every key is used (no orphans)", () => {
    const code = sources();
    const named = new Set([...code.matchAll(/\bt\(\s*'([a-zA-Z][\w.-]*)'/g), ...code.matchAll(/tData\(\s*'([a-zA-Z][\w.-]*)'/g)].map((m) => m[1]));
    const quoted = new Set([...code.matchAll(/'([a-zA-Z][\w-]*\.[\w.-]+)'/g)].map((m) => m[1]));
    const en = baseKeys('en');
    expect(
      [...named].filter((k) => !k.endsWith('.') && !en.has(k)),
      'named but missing',
    ).to.deep.equal([]);
    const orphans = [...en].filter((k) => !quoted.has(k) && !DYNAMIC_PREFIXES.some((p) => k.startsWith(p)));
    expect(orphans, 'never used').to.deep.equal([]);
  });
});
