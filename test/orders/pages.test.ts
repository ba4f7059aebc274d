import fs from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { SAMPLE_FILE } from '../../routes/pages/imports';
import { createServices } from '../../services';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp, TEST_ENV, unsetOrderHandler } from '../helpers/app';
import { testKnex } from '../helpers/db';

type Shop = SignedIn & { workspaceId: string; csrf: string };

async function shop(options: { handler?: boolean } = {}): Promise<Shop> {
  const user = await signUp();
  if (options.handler !== false) await user.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  else await unsetOrderHandler(user);
  return { ...user, workspaceId: user.workspaceId!, csrf: await csrfOf(user.agent) };
}

/** `n` orders by SQL, a minute apart (the last newest), named `Client 0`…; returns their names newest first. */
async function bulk(s: Shop, n: number, fields: (i: number) => object = () => ({})): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => ({
    workspace_id: s.workspaceId,
    client_name: `Client ${i}`,
    phone: '+212600000000',
    store_name: 'Bulk',
    products_name: 'Item',
    status: 'pending',
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    ...fields(i),
  }));
  await testKnex()('orders').insert(rows);
  return rows.map((r) => r.client_name).reverse();
}

/** The client names of the order rows of /orders, top to bottom. */
const names = (html: string) => [...html.matchAll(/<a href="\/orders\/[\w-]+"><bdi>([^<]+)<\/bdi>/g)].map((m) => m[1]);
const decode = (href: string) => href.replace(/&amp;/g, '&');
const linkOf = (html: string, rel: 'next' | 'prev') => {
  const m = new RegExp(`href="([^"]+)" rel="${rel}"`).exec(html);
  return m ? decode(m[1]) : null;
};

describe('the /orders page at scale', () => {
  it('50 orders a page, newest first, with Older and Newer links that walk every order once', async () => {
    const s = await shop();
    const all = await bulk(s, 120);
    const first = (await s.agent.get('/orders').expect(200)).text;
    expect(names(first)).to.deep.equal(all.slice(0, 50));
    expect(linkOf(first, 'prev')).to.equal(null);
    const second = (await s.agent.get(linkOf(first, 'next')!).expect(200)).text;
    expect(names(second)).to.deep.equal(all.slice(50, 100));
    const third = (await s.agent.get(linkOf(second, 'next')!).expect(200)).text;
    expect(names(third)).to.deep.equal(all.slice(100));
    expect(linkOf(third, 'next')).to.equal(null);
    const back = (await s.agent.get(linkOf(third, 'prev')!).expect(200)).text;
    expect(names(back)).to.deep.equal(all.slice(50, 100));
    const front = (await s.agent.get(linkOf(back, 'prev')!).expect(200)).text;
    expect(names(front)).to.deep.equal(all.slice(0, 50));
    expect(linkOf(front, 'prev')).to.equal(null);
    expect(first).to.contain('all <span class="count">120</span>');
  });

  it('the status counts stay true through creates, status changes, imports, deletes and the worker’s folding of the counters', async () => {
    const s = await shop();
    const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
    const truth = async () => {
      const rows: Array<{ status: string; n: number }> = await testKnex()('orders')
        .where({ workspace_id: s.workspaceId })
        .groupBy('status')
        .select('status', testKnex().raw('count(*)::int AS n'));
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    };
    const shown = async () => Object.fromEntries(Object.entries(await services.stats.statusCounts(s.workspaceId)).filter(([, n]) => n !== 0));
    const body = { clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' };
    const a = (await s.agent.post('/api/orders').send(body).expect(201)).body;
    const b = (
      await s.agent
        .post('/api/orders')
        .send({ ...body, status: 'confirmed' })
        .expect(201)
    ).body;
    await s.agent.put(`/api/orders/${a.id}`).send({ status: 'no-answer' }).expect(200);
    await s.agent
      .post('/api/orders/import')
      .type('text/csv')
      .send('name,phone,store,products,status\nX,0612345678,S,P,\nY,0612345678,S,P,postponed\n')
      .expect(200);
    await s.agent.delete(`/api/orders/${b.id}`).expect(204);
    await bulk(s, 30);
    expect(await shown()).to.deep.equal(await truth());
    expect(await shown()).to.deep.equal({ 'no-answer': 1, pending: 31, postponed: 1 });
    await services.stats.compactStatusCounts(0);
    expect(await shown()).to.deep.equal({ 'no-answer': 1, pending: 31, postponed: 1 });
    const rows = await testKnex()('order_status_counts').where({ workspace_id: s.workspaceId });
    expect(rows, 'one row per status after folding').to.have.length(3);
    const page = (await s.agent.get('/orders').expect(200)).text;
    expect(page).to.contain('all <span class="count">33</span>');
  });

  it('the HTML does not grow with the workspace', async () => {
    const small = await shop();
    await bulk(small, 60);
    const large = await shop();
    await bulk(large, 3000);
    const smallPage = (await small.agent.get('/orders').expect(200)).text;
    const largePage = (await large.agent.get('/orders').expect(200)).text;
    expect(names(largePage)).to.have.length(50);
    // Only the counts' digits differ.
    expect(Math.abs(largePage.length - smallPage.length)).to.be.below(200);
  });

  it('search and status filter work together, in SQL; links keep both; the export link carries them', async () => {
    const s = await shop();
    await bulk(s, 3, (i) => ({ client_name: ['Hélène A', 'Hélène B', 'Omar C'][i], status: ['confirmed', 'pending', 'confirmed'][i] }));
    const page = (await s.agent.get('/orders').query({ q: 'helene', status: 'confirmed' }).expect(200)).text;
    expect(names(page)).to.deep.equal(['Hélène A']);
    expect(page).to.contain('value="helene"');
    expect(decode(page)).to.contain('href="/orders?status=pending&q=helene"');
    expect(decode(page)).to.contain('href="/api/orders/export.csv?status=confirmed&q=helene"');
    const phone = (await s.agent.get('/orders').query({ q: '+212 6 00' }).expect(200)).text;
    expect(names(phone)).to.have.length(3);
    const none = (await s.agent.get('/orders').query({ q: 'nobody%_' }).expect(200)).text;
    expect(none).to.contain('No order').and.contain('matches');
  });

  it('"Clear the search" leaves the search out and keeps the filters (issue 53, defect 1)', async () => {
    const s = await shop();
    await bulk(s, 2, (i) => ({ client_name: ['Fes A', 'Rabat B'][i] }));
    const clearLinks = (html: string) => [...decode(html).matchAll(/<a href="([^"]*)">Clear search<\/a>/g)].map((m) => m[1]);
    const searched = (await s.agent.get('/orders').query({ q: 'fes' }).expect(200)).text;
    expect(clearLinks(searched)).to.deep.equal(['/orders']);
    const filtered = (await s.agent.get('/orders').query({ q: 'fes', status: 'pending' }).expect(200)).text;
    expect(clearLinks(filtered)).to.deep.equal(['/orders?status=pending']);
    const nothing = (await s.agent.get('/orders').query({ q: 'nobody%_' }).expect(200)).text;
    expect(clearLinks(nothing)).to.deep.equal(['/orders', '/orders']);
  });

  it('the chips count what the search matches: "All" is the number of matches, each status its own (issue 53, friction 11)', async () => {
    const s = await shop();
    await bulk(s, 6, (i) => ({
      client_name: ['Fes A', 'Fes B', 'Rabat C', 'Fes D', 'Rabat E', 'Tanger F'][i],
      status: ['pending', 'confirmed', 'pending', 'pending', 'confirmed', 'no-answer'][i],
    }));
    const chips = (html: string) =>
      Object.fromEntries(
        [
          ...decode(html).matchAll(/<a class="chip[^"]*" href="\/orders(?:\?([^"]*))?"[^>]*>(?:(?!<\/a>)[\s\S])*?<span class="count">([^<]*)<\/span><\/a>/g),
        ].map((m) => [new URLSearchParams(m[1] ?? '').get('status') ?? 'all', m[2]]),
      );
    const everything = chips((await s.agent.get('/orders').expect(200)).text);
    expect(everything).to.include({ all: '6', pending: '3', confirmed: '2', 'no-answer': '1' });
    const searched = chips((await s.agent.get('/orders').query({ q: 'fes' }).expect(200)).text);
    expect(searched).to.include({ all: '3', pending: '2', confirmed: '1', 'no-answer': '0' });
    // The search's chips are remembered by the web process; a status change or a new match shows at once.
    await testKnex()('orders').where({ workspace_id: s.workspaceId, client_name: 'Fes B' }).update({ status: 'pending' });
    expect(chips((await s.agent.get('/orders').query({ q: 'fes' }).expect(200)).text)).to.include({ all: '3', pending: '3', confirmed: '0' });
    await bulk(s, 1, () => ({ client_name: 'Fes G', status: 'no-answer' }));
    expect(chips((await s.agent.get('/orders').query({ q: 'fes' }).expect(200)).text)).to.include({ all: '4', pending: '3', 'no-answer': '1' });
    await testKnex()('orders').where({ workspace_id: s.workspaceId, client_name: 'Fes G' }).del();
    await testKnex()('orders').where({ workspace_id: s.workspaceId, client_name: 'Fes B' }).update({ status: 'confirmed' });
    const statuses = await testKnex()('orders').where('workspace_id', s.workspaceId).whereLike('client_name', 'Fes %').orderBy('client_name').pluck('status');
    expect(statuses).to.deep.equal(['pending', 'confirmed', 'pending']);
    // With a status chosen too, the chips still count every status of the search; the range says the chosen one's.
    const chosen = (await s.agent.get('/orders').query({ q: 'fes', status: 'pending' }).expect(200)).text;
    expect(chips(chosen)).to.include({ all: '3', pending: '2', confirmed: '1' });
    expect(names(chosen)).to.deep.equal(['Fes D', 'Fes A']);
    expect(chosen).to.match(/1–2 of 2/);
    // A search that finds nothing: zeros, and still not the empty shop's welcome.
    const none = (await s.agent.get('/orders').query({ q: 'nobody' }).expect(200)).text;
    expect(chips(none)).to.include({ all: '0', pending: '0' });
    expect(none).to.contain('No order').and.contain('matches');
  });

  it('what Postgres is asked: one statement for the page, filtered, searched and limited to 51 rows; the counts from one grouped query', async () => {
    const s = await shop();
    await bulk(s, 120, (i) => ({ client_name: i % 40 === 0 ? `Hélène Needle ${i}` : `Client ${i}`, status: i % 80 === 0 ? 'confirmed' : 'pending' }));
    const statements: string[] = [];
    const record = (query: { sql: string }) => statements.push(query.sql);
    testKnex().on('query', record);
    let page: string;
    try {
      page = (await s.agent.get('/orders').query({ q: 'helene needle', status: 'confirmed' }).expect(200)).text;
    } finally {
      testKnex().off('query', record);
    }
    expect(names(page)).to.deep.equal(['Hélène Needle 80', 'Hélène Needle 0']);
    const onOrders = statements.filter((sql) => /\bfrom "?orders"?\b/i.test(sql));
    // The page's rows carry their position; the search's total does not.
    const pageStatements = onOrders.filter((sql) => /search_text LIKE/.test(sql) && /position_at/.test(sql));
    expect(pageStatements, onOrders.join('\n')).to.have.length(1);
    // The filter, the search and the page's size are in the statement, not applied to rows in Node.
    expect(pageStatements[0])
      .to.match(/"?o"?\."?status"? = (\?|\$\d)/)
      .and.match(/limit \?|limit \$\d/i);
    // One count over the orders themselves, for the search's matches by status, reading at most the
    // index's candidates or 10,001 rows (shown "10,000+"); the counters give the shop's own totals.
    const counted = statements.filter((sql) => /count\(/i.test(sql) && !/position_at/.test(sql) && /\borders\b/.test(sql.replace(/order_status_counts/g, '')));
    expect(counted, counted.join('\n')).to.have.length(1);
    // …grouped by status: the chips count the search's matches of each status (issue 53, friction 11).
    expect(counted[0])
      .to.match(/search_text LIKE/)
      .and.match(/group by/i)
      .and.match(/limit \?|limit \$\d/i);
    const counts = statements.filter((sql) => /order_status_counts/.test(sql));
    expect(counts).to.have.length(1);
    expect(counts[0]).to.match(/group by/i);
  });

  it('a stale or edited page link shows the newest orders; a repeated q is a 400 page, never a 500', async () => {
    const s = await shop();
    const all = await bulk(s, 3);
    expect(names((await s.agent.get('/orders?cursor=garbage').expect(200)).text)).to.deep.equal(all);
    expect(names((await s.agent.get('/orders?before=%00').expect(200)).text)).to.deep.equal(all);
    const res = await s.agent.get('/orders?q=a&q=b').expect(400);
    expect(res.text).to.contain('Give q once');
  });
});

describe('the order edit form, as the staff type it (issue 53, defect 7)', () => {
  /** The value of an input of the page, by its name. */
  const inputValue = (html: string, name: string) => new RegExp(`name="${name}" type="[a-z]+"\\s+value="([^"]*)"`).exec(html)?.[1];
  const rowOf = (id: string) =>
    testKnex()('orders').where({ id }).first('client_name', 'phone', testKnex().raw('total_amount::text AS total_amount'), 'currency');

  async function frenchShopWithOrder(): Promise<{ s: Shop; id: string }> {
    const s = await shop();
    await s.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const order = await s.agent
      .post('/api/orders')
      .send({ clientName: 'Karima', phone: '06 12 34 56 78', storeName: 'Atlas', productsName: 'Argan', totalAmount: '249.00' })
      .expect(201);
    return { s, id: order.body.id };
  }

  it('shows a stored order’s phone and amount as she typed them: "06 12 34 56 78" and "249,00", not "+212612345678" and "249.00"', async () => {
    const { s, id } = await frenchShopWithOrder();
    expect(await rowOf(id)).to.include({ phone: '+212612345678', total_amount: '249.000' });
    const html = (await s.agent.get(`/orders/${id}`).expect(200)).text;
    expect(inputValue(html, 'phone')).to.equal('06 12 34 56 78');
    expect(inputValue(html, 'total_amount')).to.equal('249,00');
    expect(html).not.to.contain('value="+212612345678"').and.not.contain('value="249.00"');
    // The hint beside the amount gives examples in the page's own format.
    expect(html).to.contain('Comme vous l’écrivez : 1\u202f250 ou 1\u202f250,00');
    // Sent back untouched, the form changes nothing.
    const csrf = await csrfOf(s.agent, `/orders/${id}`);
    const fields = {
      client_name: 'Karima',
      phone: '06 12 34 56 78',
      store_name: 'Atlas',
      products_name: 'Argan',
      address: '',
      city: '',
      note: '',
      currency: 'MAD',
    };
    await s.agent
      .post(`/orders/${id}`)
      .type('form')
      .send({ _csrf: csrf, ...fields, total_amount: inputValue(html, 'total_amount') })
      .expect(303);
    expect(await rowOf(id)).to.include({ phone: '+212612345678', total_amount: '249.000' });
    // "1 250,00" with a narrow no-break space, as the page writes it, and with a plain space, are 1250.
    for (const typed of ['1\u202f250,00', '1 250,00', '1250.00']) {
      await s.agent
        .post(`/orders/${id}`)
        .type('form')
        .send({ _csrf: await csrfOf(s.agent, `/orders/${id}`), ...fields, total_amount: typed })
        .expect(303);
      expect(await rowOf(id), typed).to.include({ total_amount: '1250.000' });
    }
  });

  it('a refused edit shows back exactly what was typed, beside the message, and the order is unchanged', async () => {
    const { s, id } = await frenchShopWithOrder();
    const before = await rowOf(id);
    const csrf = await csrfOf(s.agent, `/orders/${id}`);
    const typed = { client_name: 'Karima B.', phone: '06 12 34 56', store_name: 'Atlas', products_name: 'Argan', total_amount: '1 250,00', currency: 'MAD' };
    const refused = await s.agent
      .post(`/orders/${id}`)
      .type('form')
      .send({ _csrf: csrf, ...typed })
      .expect(400);
    expect(inputValue(refused.text, 'phone')).to.equal('06 12 34 56');
    expect(inputValue(refused.text, 'total_amount')).to.equal('1 250,00');
    expect(inputValue(refused.text, 'client_name')).to.equal('Karima B.');
    expect(refused.text).to.match(/id="f-phone-error"/);
    expect(await rowOf(id)).to.deep.equal(before);
    // An amount that is none: shown back as typed, beside its message.
    const badAmount = await s.agent
      .post(`/orders/${id}`)
      .type('form')
      .send({ _csrf: await csrfOf(s.agent, `/orders/${id}`), ...typed, phone: '06 12 34 56 78', total_amount: '12,5,0' })
      .expect(400);
    expect(inputValue(badAmount.text, 'total_amount')).to.equal('12,5,0');
    expect(inputValue(badAmount.text, 'phone')).to.equal('06 12 34 56 78');
    expect(badAmount.text).to.match(/id="f-total_amount-error"/);
    expect(await rowOf(id)).to.deep.equal(before);
  });
});

describe('a customer’s history on the order page', () => {
  it('the other orders with the same phone, newest first, at most 20, with a one-line summary', async () => {
    const s = await shop();
    const statuses = ['confirmed', 'confirmed', 'unconfirmed'];
    await bulk(s, 3, (i) => ({ phone: '+212612345678', products_name: `Earlier ${i}`, status: statuses[i] }));
    const order = (await s.agent.post('/api/orders').send({ clientName: 'Now', phone: '0612345678', storeName: 'S', productsName: 'P' }).expect(201)).body;
    await bulk(s, 1, () => ({ phone: '+212699999999', products_name: 'Someone else' }));
    const other = await shop();
    await bulk(other, 1, () => ({ phone: '+212612345678', products_name: 'Other workspace' }));
    const page = (await s.agent.get(`/orders/${order.id}`).expect(200)).text;
    expect(page).to.contain('3 earlier orders:</strong> 2 confirmed, 1 unconfirmed');
    const history = page.slice(page.indexOf('history-heading'), page.indexOf('calls-heading'));
    const shown = [...history.matchAll(/<td data-label="Products"><bdi>([^<]+)<\/bdi>/g)].map((m) => m[1]);
    expect(shown).to.deep.equal(['Earlier 2', 'Earlier 1', 'Earlier 0']);

    const many = await shop();
    await bulk(many, 25, () => ({ phone: '+212655555555' }));
    const latest = (await many.agent.post('/api/orders').send({ clientName: 'Latest', phone: '0655555555', storeName: 'S', productsName: 'P' }).expect(201))
      .body;
    const crowded = (await many.agent.get(`/orders/${latest.id}`).expect(200)).text;
    const rows = crowded.slice(crowded.indexOf('history-heading'), crowded.indexOf('calls-heading')).match(/<tr>/g) ?? [];
    expect(rows.length).to.equal(21); // the header row and 20 orders
    expect(crowded).to.contain('25 earlier orders:').and.contain('href="/orders?q=%2B212655555555"');
  });

  it('says so when the customer has no other order', async () => {
    const s = await shop();
    const order = (await s.agent.post('/api/orders').send({ clientName: 'Solo', phone: '0677777777', storeName: 'S', productsName: 'P' }).expect(201)).body;
    expect((await s.agent.get(`/orders/${order.id}`).expect(200)).text).to.contain('No other order from 06 77 77 77 77');
  });
});

describe('the /orders/import page', () => {
  const upload = (s: Shop, content: Buffer | string, fields: Record<string, string> = {}) => {
    let req = s.agent.post('/orders/import').field('_csrf', s.csrf);
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    return req.attach('file', Buffer.from(content), { filename: 'orders.csv', contentType: 'text/csv' });
  };
  const ordersOf = (s: Shop) => testKnex()('orders').where({ workspace_id: s.workspaceId }).orderBy('created_at');

  it('imports the sample file shown on the page and says what happened', async () => {
    const s = await shop();
    const page = (await s.agent.get('/orders/import').expect(200)).text;
    expect(page).to.contain('enctype="multipart/form-data"').and.contain('href="/orders/import/sample.csv"');
    const sample = await s.agent
      .get('/orders/import/sample.csv')
      .expect(200)
      .expect('Content-Disposition', /attachment/);
    expect(sample.text).to.equal(fs.readFileSync(SAMPLE_FILE, 'utf8'));
    const res = await upload(s, fs.readFileSync(SAMPLE_FILE)).expect(200);
    expect(res.text).to.contain('3 orders imported');
    const rows = await ordersOf(s);
    expect(rows.map((r) => r.client_name)).to.deep.equal(['Amina Benali', 'Youssef El Idrissi', 'فاطمة الزهراء']);
    expect(rows[1].address).to.equal('Appartement 4, Résidence Al Amal\nRabat');
    expect(rows.map((r) => r.phone)).to.deep.equal(['+212612345678', '+212661234567', '+212698765432']);
  });

  it('lists the skipped lines with their reasons; a second press of the button imports nothing more', async () => {
    const s = await shop();
    const file = 'name;phone;store;products\nA;123;S;P\nB;0612345678;S;P\n';
    const first = await upload(s, file, { import_key: 'form-key-1' }).expect(200);
    expect(first.text).to.contain('1 order imported, 1 line skipped');
    expect(first.text).to.match(/<td data-label="Line">2<\/td>/);
    await upload(s, file, { import_key: 'form-key-1' }).expect(200);
    expect(await ordersOf(s)).to.have.length(1);
  });

  it('refuses a bad upload on the page with its reason: no file, a file that is not CSV, too large; nothing is written', async () => {
    const s = await shop();
    const none = await s.agent.post('/orders/import').field('_csrf', s.csrf).expect(400);
    expect(none.text).to.contain('Choose a CSV file');
    const notCsv = await upload(s, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe])).expect(400);
    expect(notCsv.text).to.contain('not a CSV text file');
    const missing = await upload(s, 'name,store\nA,S\n').expect(400);
    expect(missing.text).to.contain('No column for the phone');
    const big = await upload(s, Buffer.alloc(10 * 1024 * 1024 + 1, 'a')).expect(413);
    expect(big.text).to.contain('larger than 10 MB');
    expect(await ordersOf(s)).to.have.length(0);
  });

  it('a multipart post without the CSRF token is refused', async () => {
    const s = await shop();
    await s.agent.post('/orders/import').attach('file', Buffer.from('name,phone,store,products\nA,0612345678,S,P\n'), 'o.csv').expect(403);
    expect(await ordersOf(s)).to.have.length(0);
  });

  it('without an order handler, nothing is imported and the page sends the owner to /agents', async () => {
    const s = await shop({ handler: false });
    const res = await upload(s, 'name,phone,store,products\nA,0612345678,S,P\n').expect(303);
    expect(res.headers.location).to.equal('/agents');
    expect(await ordersOf(s)).to.have.length(0);
  });

  it('a signed-out visitor is sent to sign in', async () => {
    expect((await request(appUrl()).get('/orders/import').expect(303)).headers.location).to.equal('/login');
    expect((await request(appUrl()).post('/orders/import').attach('file', Buffer.from('x'), 'o.csv').expect(303)).headers.location).to.equal('/login');
  });
});

describe('the /stats page', () => {
  it('the figures, a server-drawn SVG chart with a text alternative, and the numbers in tables', async () => {
    const s = await shop();
    await bulk(s, 4, (i) => ({ status: i < 3 ? 'confirmed' : 'pending', created_at: `2026-06-0${i + 1}T10:00:00Z`, store_name: i < 2 ? 'Atlas' : 'Souk' }));
    const page = (await s.agent.get('/stats?from=2026-06-01&to=2026-06-07').expect(200)).text;
    expect(page).to.match(/<svg class="chart"[^>]*role="img" aria-labelledby="chart-title chart-desc"/);
    expect(page).to.contain('<desc id="chart-desc">From 1 Jun 2026 to 7 Jun 2026: 4 orders, 3 confirmed.');
    expect(page.match(/<rect class="bar-orders"/g)).to.have.length(4);
    expect(page.match(/<rect class="bar-confirmed"/g)).to.have.length(3);
    // The chart is drawn by the server: the page's one script is the copy buttons' file.
    expect(page).not.to.match(/<script(?![^>]*\ssrc="\/assets\/copy\.[0-9a-f]+\.js")/);
    expect(page).to.match(
      /<td data-label="Day"><time datetime="2026-06-02">2 Jun 2026<\/time><\/td><td data-label="Orders">1<\/td><td data-label="Confirmed">1<\/td>/,
    );
    expect(page).to.match(/<bdi>Atlas<\/bdi><\/td><td data-label="Orders">2<\/td><td data-label="Confirmed">2<\/td>/);
  });

  it('a bad date is shown beside its field (400), with the default period’s figures', async () => {
    const s = await shop();
    const res = await s.agent.get('/stats?from=2026-02-30').expect(400);
    expect(res.text).to.match(/<p class="error" id="f-from-error">from must be a date/);
    expect(res.text).to.contain('value="2026-02-30"');
  });
});
