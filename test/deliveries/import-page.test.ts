import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, memberOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ORDER } from '../helpers/loop';

/**
 * The carrier report's result page (issue 53, must-hold 4 and 8, friction 10 and 15): each unmatched
 * row shows the customer's name and phone and links to the orders it might be; the columns not read
 * are named; each unknown word gets a select on the page itself, and one button saves them all to the
 * shop's words and applies their rows — without JavaScript.
 */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp();
  return { ...user, workspaceId: user.workspaceId! };
}

async function order(s: Shop, fields: object): Promise<string> {
  return (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, ...fields })
      .expect(201)
  ).body.id;
}

async function shipped(s: Shop, tracking: string, phone: string): Promise<string> {
  const id = await order(s, { phone, status: 'confirmed' });
  await s.agent.put(`/api/orders/${id}/delivery`).send({ status: 'shipped', trackingNumber: tracking, at: '2026-11-01T10:00:00Z' }).expect(200);
  return id;
}

/** What an HTML attribute holds, as the page escaped it. */
const attributeText = (text: string) => text.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const hiddenRows = (html: string) => [...html.matchAll(/<input type="hidden" name="row" value="([^"]*)">/g)].map((m) => attributeText(m[1]));

const REPORT = [
  'N° de suivi;Nom;Téléphone;Statut;Poids;Livreur',
  'OZ-1;Karima Bennani;0611111111;Livré;1 kg;Said',
  'OZ-2;Amina;0622222222;Colis en souffrance;2 kg;Said',
  'OZ-3;Hind;0633333333;Client absent;1 kg;Omar',
  'OZ-4;Youssef;0644444444;colis en souffrance;1 kg;Omar',
  'ZZ-9;Rachid Tazi;06 55 55 55 55;Livré;1 kg;Omar',
].join('\n');

async function importPage(s: Shop) {
  await s.agent.put('/api/account').send({ language: 'fr' }).expect(200);
  const form = (await s.agent.get('/deliveries/import').expect(200)).text;
  return s.agent.post('/deliveries/import').field('_csrf', csrfFrom(form)).attach('file', Buffer.from(REPORT), 'ozon-29-11.csv').expect(200);
}

describe('the carrier report’s result page', () => {
  it('an unmatched row shows the name, the phone and links to the orders with that phone; the columns not read are named', async () => {
    const s = await shop();
    await shipped(s, 'OZ-1', '0611111111');
    // Two pending orders of Rachid's phone: neither is under way nor confirmed, so the row is unmatched.
    const a = await order(s, { clientName: 'Rachid Tazi', phone: '0655555555', productsName: 'Savon' });
    const b = await order(s, { clientName: 'Rachid T.', phone: '0655555555', productsName: 'Huile' });
    const page = await importPage(s);
    expect(page.text).to.include('Colonnes non lues : \u2068Poids, Livreur\u2069');
    const row = page.text.slice(page.text.indexOf('ligne sans commande'));
    expect(row).to.include('<bdi>Rachid Tazi</bdi><br><bdi dir="ltr">06 55 55 55 55</bdi>');
    expect(row).to.include(`<a href="/orders/${a}"><bdi>Rachid Tazi</bdi></a>`);
    expect(row).to.include(`<a href="/orders/${b}"><bdi>Rachid T.</bdi></a>`);
    // The API answers the same rows and candidates.
    const api = await s.agent.post('/api/deliveries/import').attach('file', Buffer.from(REPORT), 'ozon.csv').expect(200);
    const unmatched = api.body.unmatched.find((u: { line: number }) => u.line === 6);
    expect(unmatched).to.include({ reason: 'not_found', name: 'Rachid Tazi', phone: '06 55 55 55 55', tracking: 'ZZ-9' });
    expect(unmatched.candidates.map((c: { id: string }) => c.id)).to.have.members([a, b]);
    expect(api.body.ignored_columns).to.deep.equal(['Poids', 'Livreur']);
    expect(api.body).not.to.have.property('unknownRows');
  });

  it('one select per unknown word (our statuses and "attempt"); one button saves them all and applies their rows', async () => {
    const s = await shop();
    await shipped(s, 'OZ-1', '0611111111');
    const amina = await shipped(s, 'OZ-2', '0622222222');
    const hind = await shipped(s, 'OZ-3', '0633333333');
    const youssef = await shipped(s, 'OZ-4', '0644444444');
    const page = await importPage(s);
    expect(page.text).to.include('action="/deliveries/import/words"');
    // Three rows, three distinct words as written (two of them one word folded): one select each.
    expect(page.text.match(/<select id="f-means-\d+" name="status">/g)).to.have.length(3);
    expect(page.text).to.include('<label class="visually-hidden" for="f-means-0">Ce que « Colis en souffrance » veut dire</label>');
    expect(page.text).to.include('<option value="attempted">tentative, pas encore livré</option>');
    expect(page.text).to.include('<option value="refused">colis refusé</option>');
    const rows = hiddenRows(page.text);
    expect(rows.map((r) => JSON.parse(r).line)).to.deep.equal([3, 4, 5]);

    const saved = await s.agent
      .post('/deliveries/import/words')
      .type('form')
      .send(
        [
          `_csrf=${encodeURIComponent(csrfFrom(page.text))}`,
          'file_name=ozon-29-11.csv',
          ...rows.map((r) => `row=${encodeURIComponent(r)}`),
          `word=${encodeURIComponent('Colis en souffrance')}&status=refused`,
          `word=${encodeURIComponent('Client absent')}&status=attempted`,
          `word=${encodeURIComponent('colis en souffrance')}&status=`,
        ].join('&'),
      )
      .expect(200);
    expect(saved.text).to.include('2 mots enregistrés : les prochains imports les lisent.');
    expect(saved.text).to.include('3 livraisons mises à jour');
    const words = await knex()('carrier_words').where({ workspace_id: s.workspaceId }).orderBy('word').select('word', 'status');
    expect(words).to.deep.equal([
      { word: 'Client absent', status: 'attempted' },
      { word: 'Colis en souffrance', status: 'refused' },
    ]);
    const stateOf = async (id: string) => knex()('orders').where({ id }).first('delivery_status', 'delivery_carrier_status');
    expect(await stateOf(amina)).to.deep.equal({ delivery_status: 'refused', delivery_carrier_status: 'Colis en souffrance' });
    expect(await stateOf(youssef)).to.deep.equal({ delivery_status: 'refused', delivery_carrier_status: 'colis en souffrance' });
    expect(await stateOf(hind)).to.deep.equal({ delivery_status: 'shipped', delivery_carrier_status: 'Client absent' });
    const history = await knex()('delivery_events').where({ order_id: hind }).orderBy('received_at').select('status', 'by');
    expect(history).to.deep.equal([
      { status: 'shipped', by: history[0].by },
      { status: 'attempted', by: 'ozon-29-11.csv' },
    ]);
  });

  it('150 rows of an unknown word with Arabic names: the page carries back the rows a form can hold, says so, and they apply', async () => {
    const s = await shop();
    const name = 'فاطمة الزهراء بنعلي العلوي الإدريسي';
    const ids: string[] = [];
    for (let i = 1; i <= 150; i++) ids.push(await shipped(s, `AR-${i}`, `06${String(30_000_000 + i)}`));
    const csv = `N° de suivi;Nom;Statut\n${ids.map((_, i) => `AR-${i + 1};${name} ${i + 1};Colis en souffrance`).join('\n')}\n`;
    await s.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const form = (await s.agent.get('/deliveries/import').expect(200)).text;
    const page = await s.agent.post('/deliveries/import').field('_csrf', csrfFrom(form)).attach('file', Buffer.from(csv), 'ar.csv').expect(200);
    const rows = hiddenRows(page.text);
    expect(rows.length).to.be.within(1, 100);
    expect(page.text).to.include(`Les ${rows.length} premières lignes sont appliquées tout de suite ; importez de nouveau le fichier pour les autres.`);
    const body = [`_csrf=${encodeURIComponent(csrfFrom(page.text))}`, 'file_name=ar.csv', ...rows.map((r) => `row=${encodeURIComponent(r)}`)];
    body.push(`word=${encodeURIComponent('Colis en souffrance')}&status=returned`);
    expect(body.join('&').length).to.be.below(100 * 1024);
    const saved = await s.agent.post('/deliveries/import/words').type('form').send(body.join('&')).expect(200);
    expect(saved.text).to.include(`${rows.length} livraisons mises à jour`);
    const returned = await knex()('orders').where({ workspace_id: s.workspaceId, delivery_status: 'returned' }).count<{ n: string }[]>({ n: '*' });
    expect(Number(returned[0].n)).to.equal(rows.length);
  });

  it('a member may answer the words; nothing chosen is a 400 that saves nothing; no CSRF token is refused', async () => {
    const owner = await shop();
    const member = { ...(await memberOf(owner)), workspaceId: owner.workspaceId };
    await shipped(owner, 'OZ-2', '0622222222');
    const page = await importPage(member);
    const token = encodeURIComponent(csrfFrom(page.text));
    const rows = hiddenRows(page.text).map((r) => `row=${encodeURIComponent(r)}`);
    await member.agent
      .post('/deliveries/import/words')
      .type('form')
      .send([...rows, `word=${encodeURIComponent('Colis en souffrance')}&status=lost`].join('&'))
      .expect(403);
    const none = await member.agent
      .post('/deliveries/import/words')
      .type('form')
      .send([`_csrf=${token}`, ...rows, `word=${encodeURIComponent('Colis en souffrance')}&status=`].join('&'))
      .expect(400);
    expect(none.text).to.include('Rien n’a été enregistré : choisissez ce que veut dire au moins un mot.');
    expect(await knex()('carrier_words').where({ workspace_id: owner.workspaceId })).to.have.length(0);
    const bad = await member.agent
      .post('/deliveries/import/words')
      .type('form')
      .send([`_csrf=${token}`, `word=${encodeURIComponent('Colis en souffrance')}&status=teleported`].join('&'))
      .expect(400);
    expect(bad.text).to.include('Ces mots n’ont pas pu être enregistrés');
    await member.agent
      .post('/deliveries/import/words')
      .type('form')
      .send([`_csrf=${token}`, ...rows, `word=${encodeURIComponent('Colis en souffrance')}&status=lost`].join('&'))
      .expect(200);
    expect(await knex()('carrier_words').where({ workspace_id: owner.workspaceId }).pluck('status')).to.deep.equal(['lost']);
  });
});
