import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../config';
import { ValidationError } from '../services/errors';
import { decode, english, msg } from '../services/messages';
import { parse, requiredText } from '../services/validation';
import { z } from 'zod';
import { errorsByInput } from '../routes/pages/forms';
import { localeHelpers } from '../routes/pages/view-helpers';
import { createI18n } from '../routes/middleware/i18n';

const CATALOGUES = Object.fromEntries(
  ['en', 'fr', 'ar'].map((lng) => [lng, JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${lng}.json`), 'utf8')).messages as Record<string, string>]),
);

/** Every .ts file under a folder of the repository (no node_modules, no build). */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(rel);
    return entry.name.endsWith('.ts') ? [fs.readFileSync(path.join(ROOT, rel), 'utf8')] : [];
  });
}

/**
 * Not ours: validation's catch-all (its fields carry the codes), error codes libraries set (csv-parse, multer, streams) and
 * the Shopify webhook topics we subscribe to (services/store-connect/platforms.ts).
 */
const LIBRARY_CODES = [
  'VALIDATION_ERROR',
  'CSV_QUOTE_NOT_CLOSED',
  'LIMIT_FILE_SIZE',
  'ERR_STREAM_PREMATURE_CLOSE',
  ...['ORDERS_CREATE', 'ORDERS_UPDATED', 'ORDERS_CANCELLED', 'FULFILLMENTS_CREATE', 'FULFILLMENTS_UPDATE', 'APP_UNINSTALLED'],
];

describe('messages reach pages by their code', () => {
  const code = [...sources('services'), ...sources('routes')];
  const used = new Set<string>();
  for (const text of code) {
    for (const m of text.matchAll(/\bmsg\(\s*'([A-Za-z0-9_]+)'/g)) used.add(m[1]);
    // Every AppError code thrown (UPPER_SNAKE literals), but validation's catch-all and the codes libraries give their own errors.
    for (const m of text.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) if (!LIBRARY_CODES.includes(m[1])) used.add(m[1]);
  }

  it('every code the code base uses has an English, a French and an Arabic text', () => {
    expect(used.size).to.be.above(20);
    const missing = [...used].flatMap((c) => ['en', 'fr', 'ar'].filter((lng) => !CATALOGUES[lng][c]?.trim()).map((lng) => `${lng}: ${c}`));
    expect(missing).to.deep.equal([]);
  });

  it("a schema's message keeps its code for the pages and its English for the API", () => {
    const schema = z.object({ name: requiredText('Client name', 5) });
    let error: unknown;
    try {
      parse(schema, { name: 'much too long' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.fields).to.deep.equal({ name: 'Client name must be at most 5 characters' });
    expect(v.codes).to.deep.equal({ name: { code: 'tooLong', params: { label: 'Client name', max: 5 } } });
    expect(english(decode(msg('tooLong', { label: 'Notes', max: 9 }))!)).to.equal('Notes must be at most 9 characters');
  });

  it('a page shows the French and Arabic text of the code, whatever the English says', async () => {
    const i18n = createI18n();
    const v = new ValidationError({ clientName: msg('required', { label: 'Client name' }) });
    // Rewording the English would not change the pages: they read the code.
    const onPage = errorsByInput(v, { clientName: 'client_name' }).client_name;
    for (const [lng, expected] of [
      ['fr', 'Le nom du client est obligatoire'],
      ['ar', CATALOGUES.ar.required.replace('{{label}}', '')],
    ] as const) {
      const t = i18n.getFixedT(lng);
      const shown = localeHelpers(lng, t).message(onPage);
      if (lng === 'fr') expect(shown).to.equal(expected);
      else
        expect(shown)
          .to.contain(expected.trim())
          .and.not.match(/[A-Za-z]{3}/);
    }
  });
});
