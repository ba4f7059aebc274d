import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';

/**
 * Issue 58, item 5: docs/privacy.md (English) and docs/privacy.fr.md (French) say the purpose, what
 * is stored and for how long, what each processor receives, how to answer a customer's request,
 * and give a processing record for the CNDP.
 */
const SECTIONS = {
  'docs/privacy.md': [
    'The purpose',
    'What is stored',
    'For how long',
    'Who receives what',
    "Answering a customer's request",
    'A processing record for the CNDP',
  ],
  'docs/privacy.fr.md': [
    'La finalité',
    'Ce qui est gardé',
    'Combien de temps',
    'Qui reçoit quoi',
    "Répondre à la demande d'un client",
    'Une fiche de traitement pour la CNDP',
  ],
};

describe('the privacy docs, in English and French', () => {
  for (const [file, sections] of Object.entries(SECTIONS)) {
    it(`${file}: every section, each processor, the retention and the customer's request as the service has them`, () => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
      for (const section of sections)
        expect(
          headings.some((h) => h.startsWith(section)),
          section,
        ).to.equal(true);
      for (const word of ['Meta', 'WhatsApp', 'webhook', 'audit', 'CNDP', '24']) expect(text, word).to.contain(word);
    });
  }
});
