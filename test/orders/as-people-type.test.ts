import { expect } from 'chai';
import ExcelJS from 'exceljs';
import type { SignedIn } from '../helpers/app';
import { csrfOf, signUp } from '../helpers/app';
import { seed, testKnex } from '../helpers/db';
import { xlsx } from '../helpers/xlsx';

/**
 * The staff's daily work: the amount, city and note on the forms; spreadsheets as shops have them (French
 * Excel's Windows-1252 CSV, XLSX, French amounts and dates, ville/note/date columns, ignored columns
 * named, messages in the page's language); finding an order by reference, city and address; where
 * the list is; phones grouped.
 */
type Shop = SignedIn & { workspaceId: string };
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

async function shop(language?: 'en' | 'fr' | 'ar'): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  if (language)
    await s.agent
      .post('/account/language')
      .type('form')
      .send({ language, _csrf: await csrfOf(s.agent, '/orders') })
      .expect(303);
  return { ...s, workspaceId: s.workspaceId! };
}

function importFile(s: Shop, file: Buffer | string, type = 'text/csv') {
  return s.agent
    .post('/api/orders/import')
    .set('Content-Type', type)
    .send(Buffer.isBuffer(file) ? file : Buffer.from(file));
}

async function ordersOf(workspaceId: string) {
  return testKnex()('orders')
    .where({ workspace_id: workspaceId })
    .orderBy('created_at')
    .select('client_name', 'phone', 'city', 'note', 'address', 'external_ref', testKnex().raw('total_amount::text AS total_amount'), 'currency', 'placed_at');
}

/** The upload page's form, as a browser posts it. */
async function pageImport(s: Shop, file: Buffer, name: string) {
  const csrf = await csrfOf(s.agent, '/orders/import');
  return s.agent.post('/orders/import').field('_csrf', csrf).attach('file', file, name);
}

describe('amounts as people type them', () => {
  const typed: Array<[string, string]> = [
    ['349', '349.000'],
    ['349,00', '349.000'],
    ['349.00', '349.000'],
    ['349,5', '349.500'],
    ['1 250,00', '1250.000'],
    ['1\u00a0250,00', '1250.000'],
    ['1\u202f250,00', '1250.000'],
    ['1.250,00', '1250.000'],
    ['1,250.00', '1250.000'],
    ['1.250', '1250.000'],
    ['1,250', '1250.000'],
    ['2 490,00', '2490.000'],
  ];

  it('each form of amount in a semicolon CSV is stored exactly and answered with two decimals', async () => {
    const s = await shop();
    const lines = typed.map(([amount], i) => `C${i};0612345678;S;P;"${amount}"`);
    const res = await importFile(s, `nom;telephone;boutique;produit;montant\n${lines.join('\n')}\n`).expect(200);
    expect(res.body, JSON.stringify(res.body.errors)).to.include({ imported: typed.length, skipped: 0 });
    expect((await ordersOf(s.workspaceId)).map((o) => o.total_amount)).to.deep.equal(typed.map(([, stored]) => stored));
    const answered = await s.agent.get(`/api/orders/${res.body.order_ids[4]}`).expect(200);
    expect(answered.body).to.include({ total_amount: '1250.00', currency: 'MAD' });
  });

  it('each form typed in the order form is stored exactly; the edit form changes it while pending', async () => {
    const s = await shop();
    for (const [amount, stored] of typed) {
      const csrf = await csrfOf(s.agent, '/orders/new');
      await s.agent
        .post('/orders')
        .type('form')
        .send({
          _csrf: csrf,
          client_name: `C ${amount}`,
          phone: '0612345678',
          store_name: 'S',
          products_name: 'P',
          total_amount: amount,
          currency: 'MAD',
          city: 'Marrakech',
          note: 'Après 18h',
        })
        .expect(303);
      const [row] = await testKnex()('orders')
        .where({ workspace_id: s.workspaceId, client_name: `C ${amount}` })
        .select(testKnex().raw('total_amount::text AS t'), 'city', 'note', 'currency');
      expect(row, amount).to.deep.equal({ t: stored, city: 'Marrakech', note: 'Après 18h', currency: 'MAD' });
    }
    const [order] = await testKnex()('orders').where({ workspace_id: s.workspaceId }).limit(1).select('id');
    const csrf = await csrfOf(s.agent, `/orders/${order.id}`);
    await s.agent
      .post(`/orders/${order.id}`)
      .type('form')
      .send({
        _csrf: csrf,
        client_name: 'Edited',
        phone: '0612345678',
        store_name: 'S',
        products_name: 'P',
        total_amount: '89,350',
        currency: 'TND',
        city: 'Tunis',
        note: '',
      })
      .expect(303);
    const api = await s.agent.get(`/api/orders/${order.id}`).expect(200);
    expect(api.body).to.include({ total_amount: '89350.000', currency: 'TND', city: 'Tunis', note: null });
    const page = await s.agent.get(`/orders/${order.id}`).expect(200);
    expect(page.text).to.contain('Tunis').and.contain('name="total_amount" type="text"');
  });

  it('an amount that is none is refused beside its field, in the page language', async () => {
    for (const [language, want] of [
      ['en', 'Total amount must be a number such as 349 or 349.50'],
      ['fr', 'Le montant doit être un nombre comme 349, 349,50 ou 1 250,00'],
      // Each example isolated left to right, so "1 250,00" does not read "250,00 1".
      ['ar', 'يجب أن يكون المبلغ رقمًا مثل \u2066349\u2069 أو \u2066349,50\u2069 أو \u20661 250,00\u2069'],
    ] as const) {
      const s = await shop(language);
      const csrf = await csrfOf(s.agent, '/orders/new');
      const res = await s.agent
        .post('/orders')
        .type('form')
        .send({ _csrf: csrf, client_name: 'A', phone: '', store_name: 'S', products_name: 'P', total_amount: '12,5,0' })
        .expect(400);
      expect(res.text, language).to.contain(want);
      // "Phone est obligatoire": the field's name is translated too.
      const phone = { en: 'Phone is required', fr: 'Le téléphone est obligatoire', ar: 'رقم الهاتف' }[language];
      expect(res.text, language)
        .to.contain(phone)
        .and.not.contain(language === 'en' ? '\u0000' : 'Phone is required');
      const [{ n }] = await testKnex()('orders').where({ workspace_id: s.workspaceId }).count<{ n: string }[]>({ n: '*' });
      expect(Number(n)).to.equal(0);
    }
  });
});

describe('spreadsheets as shops have them', () => {
  const HEADER = ['Nom', 'Téléphone', 'Boutique', 'Produit', 'Adresse', 'Ville', 'Remarque', 'Montant', 'Date de commande', 'Livreur', 'Poids'];
  const ROW = [
    'Zoé Benali',
    '06 12 34 56 78',
    'Atlas',
    'Huile d’argan',
    'Derb Sidi Bouloukat n°7, Médina',
    'Marrakech',
    'Après 18h',
    '2 490,00',
    '24/11/2026 14:30',
    'Amana',
    '2 kg',
  ];
  const STORED = {
    client_name: 'Zoé Benali',
    phone: '+212612345678',
    city: 'Marrakech',
    note: 'Après 18h',
    address: 'Derb Sidi Bouloukat n°7, Médina',
    external_ref: null,
    total_amount: '2490.000',
    currency: 'MAD',
    // 14:30 in Casablanca (UTC+1 in November).
    placed_at: new Date('2026-11-24T13:30:00.000Z'),
  };

  const csv = (separator: string, eol = '\r\n') =>
    [HEADER, ROW].map((cells) => cells.map((c) => (c.includes(separator) || c.includes(',') ? `"${c}"` : c)).join(separator)).join(eol) + eol;

  const encodings: Array<[string, () => Buffer, string]> = [
    [
      'Windows-1252, semicolons (French Excel), no-break space in the amount',
      () => Buffer.from(csv(';').replace('2 490,00', '2\u00a0490,00'), 'latin1'),
      'windows-1252',
    ],
    ['UTF-8 with BOM, semicolons', () => Buffer.from(`\ufeff${csv(';')}`), 'utf-8'],
    ['UTF-8 without BOM, commas', () => Buffer.from(csv(',', '\n')), 'utf-8'],
    ['UTF-8, tabs', () => Buffer.from(csv('\t')), 'utf-8'],
    ['UTF-16 with BOM, tabs (Excel "Unicode text")', () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(csv('\t'), 'utf16le')]), 'utf-16le'],
    ['Windows-1252, commas, narrow no-break space written as a plain space', () => Buffer.from(csv(','), 'latin1'), 'windows-1252'],
  ];
  for (const [what, file, encoding] of encodings) {
    it(`CSV in ${what}: every column read, the encoding and ignored columns named`, async () => {
      const s = await shop();
      const res = await importFile(s, file()).expect(200);
      expect(res.body, JSON.stringify(res.body.errors)).to.include({ imported: 1, skipped: 0, format: 'csv', encoding });
      expect(res.body.ignored_columns).to.deep.equal(['Livreur', 'Poids']);
      expect(await ordersOf(s.workspaceId)).to.deep.equal([STORED]);
      const api = await s.agent.get(`/api/orders/${res.body.order_ids[0]}`).expect(200);
      expect(api.body).to.include({ city: 'Marrakech', note: 'Après 18h', placed_at: '2026-11-24T13:30:00.000Z', total_amount: '2490.00' });
    });
  }

  it('an XLSX made by the test: the first sheet in tab order, numbers, Excel serial dates, shared strings after the sheet in the zip', async () => {
    const s = await shop();
    // 46350.5 is 24/11/2026 12:00 in the sheet's clock (Morocco): 11:00 UTC.
    const file = xlsx([
      ['Nom', 'Téléphone', 'Boutique', 'Produit', 'Ville', 'Note', 'Montant', 'Date', 'Référence', 'Livreur'],
      [null],
      ['Imane & Co', 612345678, 'Atlas', 'Savon', 'Fès', 'Sonner deux fois', 2490.5, 46350.5, '#1001', 'Amana'],
      ['Karim', '0698765432', 'Atlas', 'Savon', null, null, '1 250,00', '24/11/2026', null, null],
    ]);
    const res = await importFile(s, file, XLSX_TYPE).expect(200);
    expect(res.body, JSON.stringify(res.body.errors)).to.include({ imported: 2, skipped: 0, format: 'xlsx', encoding: null });
    expect(res.body.ignored_columns).to.deep.equal(['Livreur']);
    const rows = await ordersOf(s.workspaceId);
    expect(rows.map((r) => [r.client_name, r.phone, r.city, r.note, r.total_amount, r.external_ref, r.placed_at.toISOString()])).to.deep.equal([
      ['Imane & Co', '+212612345678', 'Fès', 'Sonner deux fois', '2490.500', '#1001', '2026-11-24T11:00:00.000Z'],
      ['Karim', '+212698765432', null, null, '1250.000', null, '2026-11-23T23:00:00.000Z'],
    ]);
  });

  it('an XLSX written by a spreadsheet library (exceljs): dates, numbers and text read as Excel shows them', async () => {
    const s = await shop();
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Commandes');
    book.addWorksheet('Archive').addRow(['not read']);
    sheet.addRow(['nom', 'téléphone', 'boutique', 'produit', 'ville', 'commentaire', 'montant', 'date de commande', 'Poids']);
    sheet.addRow(['Meryem', '+212 6 12 34 56 78', 'Atlas', 'Argan', 'Maarif', 'Fragile', 349.5, new Date(Date.UTC(2026, 10, 24, 9, 15)), 2]);
    sheet.addRow(['Omar', '0612345678', 'Atlas', 'Savon', 'Agadir', '', 'abc', 'hier', '']);
    const file = Buffer.from(await book.xlsx.writeBuffer());
    const res = await importFile(s, file, XLSX_TYPE).expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 1, format: 'xlsx' });
    expect(res.body.ignored_columns).to.deep.equal(['Poids']);
    expect(res.body.errors).to.deep.equal([
      {
        line: 3,
        fields: {
          totalAmount: 'Total amount must be a number such as 349 or 349.50',
          placedAt: 'Order date must be a date such as 24/11/2026 or 24/11/2026 14:30',
        },
        // What the refused line held, as the sheet shows it (issue 53).
        values: {
          clientName: 'Omar',
          phone: '0612345678',
          storeName: 'Atlas',
          productsName: 'Savon',
          city: 'Agadir',
          note: '',
          totalAmount: 'abc',
          placedAt: 'hier',
        },
      },
    ]);
    const [row] = await ordersOf(s.workspaceId);
    // exceljs writes a Date as its serial in UTC's clock: the sheet shows 09:15, read as Morocco's 09:15.
    expect(row).to.include({ client_name: 'Meryem', city: 'Maarif', note: 'Fragile', total_amount: '349.500' });
    expect(row.placed_at.toISOString()).to.equal('2026-11-24T08:15:00.000Z');
  });

  it('the result page in each language: the encoding read, the ignored columns and every line error in the page language', async () => {
    const expected = {
      en: [
        'File read as CSV, Windows-1252 (Excel in French).',
        'Columns not read: Livreur, Poids',
        'Total amount must be a number such as 349 or 349.50',
        'Enter a valid Moroccan phone number',
      ],
      fr: [
        'Fichier lu comme CSV, Windows-1252 (Excel en français).',
        'Colonnes non lues : Livreur, Poids',
        'Le montant doit être un nombre comme 349, 349,50 ou 1 250,00',
        'La date de commande doit être une date comme 24/11/2026',
      ],
      ar: ['قُرئ الملف على أنه CSV بترميز Windows-1252', 'عمودان لم يُقرآ', 'يجب أن يكون المبلغ رقمًا مثل 349', 'يجب أن يكون تاريخ الطلب تاريخًا مثل 24/11/2026'],
    };
    for (const [language, want] of Object.entries(expected) as Array<['en' | 'fr' | 'ar', string[]]>) {
      const s = await shop(language);
      const file = Buffer.from(`${csv(';')}Bad;12;S;P;;;;douze;31/02/2026;;\r\n`, 'latin1');
      const res = await pageImport(s, file, 'commandes.csv');
      expect(res.status, res.text.slice(0, 300)).to.equal(200);
      for (const text of want) expect(res.text.replace(/<[^>]+>/g, '').replace(/[\u2066-\u2069]/g, ''), `${language}: ${text}`).to.contain(text);
      if (language !== 'en') expect(res.text, language).to.not.contain('must be');
    }
  });

  it('an XLSX refused as a whole: a file that only looks like one, in the page language', async () => {
    const s = await shop('fr');
    const broken = Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(100, 1)]);
    const api = await importFile(s, broken, XLSX_TYPE).expect(400);
    expect(api.body.fields.file).to.match(/could not be read as an Excel workbook/);
    const page = await pageImport(s, broken, 'commandes.xlsx');
    expect(page.status).to.equal(400);
    expect(page.text).to.contain('n’a pas pu être lu comme classeur Excel');
  });
});

describe('finding an order', () => {
  it('the store reference with or without #, the city and the address, accents and case aside, Arabic without harakat', async () => {
    const s = await shop();
    const make = (body: Record<string, unknown>) =>
      s.agent
        .post('/api/orders')
        .send({ clientName: 'Client', phone: '0612345678', storeName: 'S', productsName: 'P', ...body })
        .expect(201);
    const ref = (await make({ clientName: 'Ref', externalRef: '#1001' })).body.id;
    const ig = (await make({ clientName: 'Insta', externalRef: 'IG-1042' })).body.id;
    const fes = (await make({ clientName: 'Fes', city: 'Fès' })).body.id;
    const maarif = (await make({ clientName: 'Addr', address: '12 bd Zerktouni, Maârif' })).body.id;
    const arabic = (await make({ clientName: 'Ar', city: 'الدَّارُ البَيْضَاء', address: 'حي الـمعاريف' })).body.id;
    await make({ clientName: 'Other', city: 'Agadir' });
    const found = async (q: string) => (await s.agent.get('/api/orders').query({ q }).expect(200)).body.orders.map((o: { id: string }) => o.id);
    expect(await found('#1001')).to.deep.equal([ref]);
    expect(await found('1001')).to.deep.equal([ref]);
    expect(await found('ig-1042')).to.deep.equal([ig]);
    expect(await found('FES')).to.deep.equal([fes]);
    expect(await found('fès')).to.deep.equal([fes]);
    expect(await found('maarif')).to.deep.equal([maarif]);
    expect(await found('الدار البيضاء')).to.deep.equal([arabic]);
    expect(await found('المعاريف')).to.deep.equal([arabic]);
    // The page finds them too.
    const page = await s.agent.get('/orders').query({ q: '#1001' }).expect(200);
    expect(page.text).to.contain(`/orders/${ref}`).and.not.contain(`/orders/${ig}`);
  });
});

describe('where the list is', () => {
  const ranges = {
    en: ['1–25 of 60', '26–50 of 60', '51–60 of 60'],
    fr: ['1–25 sur 60', '26–50 sur 60', '51–60 sur 60'],
    ar: ['1–25 من 60', '26–50 من 60', '51–60 من 60'],
  };

  for (const [language, want] of Object.entries(ranges) as Array<['en' | 'fr' | 'ar', string[]]>) {
    it(`${language}: position and total, first/previous/next with the page size kept, no order repeated or skipped`, async () => {
      const s = await shop(language);
      await s.agent
        .post('/api/orders/import')
        .type('text/csv')
        .send(`name,phone,store,products\n${Array.from({ length: 60 }, (_, i) => `C${i},0612345678,S,P`).join('\n')}\n`)
        .expect(200);
      const seen: string[] = [];
      let path = '/orders?size=25';
      for (const range of want) {
        const res = await s.agent.get(path).expect(200);
        expect(res.text, path).to.contain(`<p class="range" role="status">${range}</p>`);
        seen.push(...[...res.text.matchAll(/href="\/orders\/([0-9a-f-]{36})"/g)].map((m) => m[1]));
        const next = /<a class="button secondary" href="([^"]+)" rel="next">/.exec(res.text)?.[1];
        if (range === want[want.length - 1]) expect(next).to.equal(undefined);
        else {
          expect(next).to.contain('size=25');
          path = next!.replace(/&amp;/g, '&');
        }
      }
      expect(seen).to.have.length(60);
      expect(new Set(seen).size).to.equal(60);
      const last = await s.agent.get(path).expect(200);
      const previous = /href="([^"]+)" rel="prev"/.exec(last.text)![1].replace(/&amp;/g, '&');
      expect((await s.agent.get(previous).expect(200)).text).to.contain(want[1]);
      expect(last.text).to.match(/<a class="button secondary" href="\/orders\?size=25">/);
    });
  }

  it('a search counts up to 10,000 and shows "10,000+" beyond; the status counts give the total without one', async () => {
    const s = await shop('fr');
    await seed(
      `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, status)
       SELECT ?::uuid, 'Amina ' || n, '+2126' || lpad(n::text, 8, '0'), 'S', 'P' || n, 'confirmed' FROM generate_series(1, 10001) n`,
      [s.workspaceId],
    );
    const searched = await s.agent.get('/orders').query({ q: 'amina' }).expect(200);
    // Numbers as a Moroccan shop writes them in French: "10 000", a narrow no-break space between groups.
    expect(searched.text).to.contain('<p class="range" role="status">1–50 sur 10\u202f000+</p>');
    // The chips count the search too: "toutes" says "10 000+", and no status claims a number it did not finish counting.
    expect(searched.text).to.match(/toutes <span class="count">10\u202f000\+<\/span>/);
    expect(searched.text).not.to.match(/badge-confirmed">[^<]*<\/span>\s*<span class="count">/);
    const all = await s.agent.get('/orders').query({ size: 100 }).expect(200);
    expect(all.text).to.contain('<p class="range" role="status">1–100 sur 10\u202f001</p>');
  });
});

describe('phones as people read them', () => {
  for (const language of ['en', 'fr', 'ar'] as const) {
    it(`${language}: grouped 06 12 34 56 78, left to right, as a tel: link; the API and the export keep +212`, async () => {
      const s = await shop(language);
      const { body } = await s.agent.post('/api/orders').send({ clientName: 'A', phone: '+212 6 12 34 56 78', storeName: 'S', productsName: 'P' }).expect(201);
      expect(body.phone).to.equal('+212612345678');
      const link = '<a class="tel" href="tel:+212612345678" dir="ltr"><bdi dir="ltr">06 12 34 56 78</bdi></a>';
      expect((await s.agent.get('/orders').expect(200)).text).to.contain(link);
      expect((await s.agent.get(`/orders/${body.id}`).expect(200)).text).to.contain(link);
      const exported = await s.agent.get('/api/orders/export.csv').expect(200);
      expect(exported.text).to.contain("'+212612345678");
    });
  }
});
