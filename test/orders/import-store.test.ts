import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { xlsx } from '../helpers/xlsx';

/**
 * The order import takes its store from the form (issue 53, must-hold 4 and friction 9, 10): a
 * select of the workspace's stores or a store typed by hand, a store column of the file winning
 * where it is filled; `N° commande`, `Référence`, `رقم الطلب` are the store's order reference; and
 * every refused row shows what it held, on the page and in the API's answer.
 */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp();
  return { ...user, workspaceId: user.workspaceId! };
}

const ordersOf = (s: Shop) =>
  knex()('orders').where({ workspace_id: s.workspaceId }).orderBy('external_ref').select('client_name', 'store_name', 'external_ref', 'city');

/** Karima's file: 8 columns of her own and her order numbers, no store column. */
const KARIMA = [
  ['Nom', 'Téléphone', 'Ville', 'Adresse', 'Montant', 'Date', 'Produit', 'Note', 'N° commande'],
  ['Karima Bennani', '06 12 34 56 78', 'Fès', 'Rue 1', '249,00', '24/11/2026', 'Huile d’argan', '', '#2101'],
  ['Youssef Alami', '0698765432', 'Casablanca', 'Rue 2', '1 250,00', '24/11/2026 14:30', 'Savon noir', 'après 18h', '#2102'],
];

describe('order import: the store from the form', () => {
  it('a file without a store column and a store in the multipart form: every row imported in that store, with its reference', async () => {
    const s = await shop();
    const res = await s.agent.post('/api/orders/import').field('store', 'Atlas Cosmétique').attach('file', xlsx(KARIMA), 'karima.xlsx').expect(200);
    expect(res.body).to.include({ imported: 2, skipped: 0 });
    expect(res.body.ignored_columns).to.deep.equal([]);
    expect(await ordersOf(s)).to.deep.equal([
      { client_name: 'Karima Bennani', store_name: 'Atlas Cosmétique', external_ref: '#2101', city: 'Fès' },
      { client_name: 'Youssef Alami', store_name: 'Atlas Cosmétique', external_ref: '#2102', city: 'Casablanca' },
    ]);
  });

  it('the same file with no store anywhere: 400 naming the store column, nothing written', async () => {
    const s = await shop();
    const res = await s.agent.post('/api/orders/import').attach('file', xlsx(KARIMA), 'karima.xlsx').expect(400);
    expect(res.body.code).to.equal('VALIDATION_ERROR');
    expect(Object.keys(res.body.fields)).to.deep.equal(['storeName']);
    expect(await ordersOf(s)).to.deep.equal([]);
  });

  it('a store column wins where its cell is filled; an empty cell takes the form’s store; ?store= beside a raw body', async () => {
    const s = await shop();
    const csv = 'nom;téléphone;boutique;produit;référence\nA;0612345678;Riad Shop;P;R-1\nB;0612345679;;P;R-2\n';
    await s.agent.post('/api/orders/import?store=Atlas').set('Content-Type', 'text/csv').send(csv).expect(200);
    expect((await ordersOf(s)).map((o) => [o.external_ref, o.store_name])).to.deep.equal([
      ['R-1', 'Riad Shop'],
      ['R-2', 'Atlas'],
    ]);
  });

  it('a store of over 200 characters: 400 naming `store`, nothing written', async () => {
    const s = await shop();
    const res = await s.agent.post('/api/orders/import').field('store', 'x'.repeat(201)).attach('file', xlsx(KARIMA), 'k.xlsx').expect(400);
    expect(res.body.fields).to.have.key('store');
    expect(await ordersOf(s)).to.deep.equal([]);
  });

  for (const header of ['N° commande', 'n° commande', 'Numéro de commande', 'numero commande', 'Référence', 'reference', 'ref', 'Réf', 'رقم الطلب']) {
    it(`"${header}" is the store's order reference`, async () => {
      const s = await shop();
      const csv = `nom,téléphone,boutique,produit,${header}\nA,0612345678,S,P,#77\n`;
      await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(csv).expect(200);
      expect((await ordersOf(s))[0].external_ref).to.equal('#77');
    });
  }

  it('the delivery import reads the same reference columns (one list for both)', async () => {
    const s = await shop();
    await s.agent.post('/api/orders/import').field('store', 'Atlas').attach('file', xlsx(KARIMA), 'k.xlsx').expect(200);
    await knex()('orders').where({ workspace_id: s.workspaceId }).update({ status: 'confirmed' });
    const report = await s.agent.post('/api/deliveries/import').attach('file', Buffer.from('N° commande;Statut\n2101;Livré\n'), 'r.csv').expect(200);
    expect(report.body).to.include({ updated: 1 });
    const delivered = await knex()('orders').where({ workspace_id: s.workspaceId, delivery_status: 'delivered' }).pluck('external_ref');
    expect(delivered).to.deep.equal(['#2101']);
  });
});

describe('order import: a refused row shows its values', () => {
  it('in the API: each refused line has its cells by field, the bad one among them', async () => {
    const s = await shop();
    const csv = 'Nom;Téléphone;Produit;N° commande\nKarima;06 12 34;Savon;#1\nYoussef;0698765432;Huile;#2\n';
    const res = await s.agent.post('/api/orders/import?store=Atlas').set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 1 });
    expect(res.body.errors).to.have.length(1);
    expect(res.body.errors[0].line).to.equal(2);
    expect(Object.keys(res.body.errors[0].fields)).to.deep.equal(['phone']);
    expect(res.body.errors[0].values).to.deep.equal({ clientName: 'Karima', phone: '06 12 34', productsName: 'Savon', externalRef: '#1' });
  });

  it('on the page, in French: the line, the name, the phone and the bad value beside the reason; the store select and the typed store', async () => {
    const s = await shop();
    await s.agent.post('/api/stores').send({ kind: 'custom', name: 'Boutique Connectée' }).expect(201);
    await s.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const form = await s.agent.get('/orders/import').expect(200);
    expect(form.text).to.include('<legend>Boutique de ces commandes</legend>');
    expect(form.text).to.include('<option value="Boutique Connectée">Boutique Connectée</option>');
    expect(form.text).to.include('<option value="__typed">Une autre boutique, saisie ci-dessous</option>');
    expect(form.text).to.include('name="store_typed"');

    const csv = 'Nom;Téléphone;Produit\nKarima Bennani;06 12 34;Savon\nYoussef;0698765432;Huile\n';
    const page = await s.agent
      .post('/orders/import')
      .field('_csrf', csrfFrom(form.text))
      .field('store', '__typed')
      .field('store_typed', 'Atlas Fès')
      .attach('file', Buffer.from(csv), 'k.csv')
      .expect(200);
    expect(page.text).to.include('1 commande importée');
    expect(page.text).to.match(/<dt>Nom du client<\/dt><dd><bdi>Karima Bennani<\/bdi><\/dd>/);
    expect(page.text).to.match(/<div class="bad"><dt>Téléphone<\/dt><dd><bdi>06 12 34<\/bdi><\/dd><\/div>/);
    // The store typed is kept in the form for the next file.
    expect(page.text).to.include('value="Atlas Fès"');
    expect((await ordersOf(s)).map((o) => o.store_name)).to.deep.equal(['Atlas Fès']);
  });

  it('on the page: a store chosen from the list; no store anywhere is refused beside the store field, the choice kept', async () => {
    const s = await shop();
    await s.agent.post('/api/orders').send({ clientName: 'X', phone: '0611111111', storeName: 'Souk Rabat', productsName: 'P' }).expect(201);
    const form = await s.agent.get('/orders/import').expect(200);
    expect(form.text).to.include('<option value="Souk Rabat">Souk Rabat</option>');
    const csv = 'Nom;Téléphone;Produit\nAmina;0612345678;Savon\n';
    const refused = await s.agent.post('/orders/import').field('_csrf', csrfFrom(form.text)).attach('file', Buffer.from(csv), 'a.csv').expect(400);
    expect(refused.text).to.include('id="f-store-error"');
    expect(refused.text).to.include('Choose the store of these orders here, or add a “Boutique” column to the file.');
    const chosen = await s.agent
      .post('/orders/import')
      .field('_csrf', csrfFrom(refused.text))
      .field('store', 'Souk Rabat')
      .attach('file', Buffer.from(csv), 'a.csv')
      .expect(200);
    expect(chosen.text).to.include('<option value="Souk Rabat" selected>Souk Rabat</option>');
    const stores = await knex()('orders').where({ workspace_id: s.workspaceId, client_name: 'Amina' }).pluck('store_name');
    expect(stores).to.deep.equal(['Souk Rabat']);
  });
});
