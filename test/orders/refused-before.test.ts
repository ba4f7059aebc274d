import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ORDER, openAllDay } from '../helpers/loop';

/** The `refused_before` flag (docs/delivery.md): computed at creation, 180 days, shown on the call page. */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp();
  await openAllDay(user);
  return { ...user, workspaceId: user.workspaceId! };
}

async function create(s: Shop, fields: object = {}): Promise<{ id: string; flags: string[] }> {
  return (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, ...fields })
      .expect(201)
  ).body;
}

async function deliver(s: Shop, id: string, status: string, daysAgo = 1): Promise<void> {
  const at = new Date(Date.now() - daysAgo * 86_400_000).toISOString();
  await s.agent.put(`/api/orders/${id}/delivery`).send({ status, at }).expect(200);
}

describe('refused_before', () => {
  it('flags a new order of a phone whose parcel was refused or returned; not for delivered, another phone or another workspace', async () => {
    const s = await shop();
    const refused = await create(s, { phone: '0611111111', productsName: 'A' });
    await deliver(s, refused.id, 'refused');
    expect((await create(s, { phone: '+212611111111', productsName: 'B' })).flags).to.deep.equal(['refused_before']);
    const returned = await create(s, { phone: '0622222222', productsName: 'A' });
    await deliver(s, returned.id, 'returned');
    expect((await create(s, { phone: '0622222222', productsName: 'B' })).flags).to.deep.equal(['refused_before']);
    const delivered = await create(s, { phone: '0633333333', productsName: 'A' });
    await deliver(s, delivered.id, 'delivered');
    expect((await create(s, { phone: '0633333333', productsName: 'B' })).flags).to.deep.equal([]);
    expect((await create(s, { phone: '0644444444', productsName: 'B' })).flags).to.deep.equal([]);
    const other = await shop();
    expect((await create(other, { phone: '0611111111', productsName: 'B' })).flags).to.deep.equal([]);
    // Stored, and filtered as the other flags.
    const flagged = (await s.agent.get('/api/orders?flag=refused_before').expect(200)).body.orders;
    expect(flagged).to.have.length(2);
  });

  it('within 180 days only (179 flags, 181 does not)', async () => {
    const s = await shop();
    const old = await create(s, { phone: '0655555555', productsName: 'A' });
    await deliver(s, old.id, 'refused', 181);
    expect((await create(s, { phone: '0655555555', productsName: 'B' })).flags).to.deep.equal([]);
    const recent = await create(s, { phone: '0666666666', productsName: 'A' });
    await deliver(s, recent.id, 'refused', 179);
    expect((await create(s, { phone: '0666666666', productsName: 'B' })).flags).to.deep.equal(['refused_before']);
    // At the edge: two hours inside the 180 days flags, two hours past them does not (hours, not
    // minutes: a database whose time zone changes its clock counts a day of 23 or 25 hours).
    const inside = await create(s, { phone: '0656565656', productsName: 'A' });
    await deliver(s, inside.id, 'returned', 180 - 2 / 24);
    expect((await create(s, { phone: '0656565656', productsName: 'B' })).flags).to.deep.equal(['refused_before']);
    const outside = await create(s, { phone: '0657575757', productsName: 'A' });
    await deliver(s, outside.id, 'returned', 180 + 2 / 24);
    expect((await create(s, { phone: '0657575757', productsName: 'B' })).flags).to.deep.equal([]);
  });

  it('with the other flags: a duplicate of a refused customer has both; an imported file is flagged too', async () => {
    const s = await shop();
    const first = await create(s, { phone: '0677777777', productsName: 'Tajine' });
    await deliver(s, first.id, 'returned');
    expect((await create(s, { phone: '0677777777', productsName: 'tajine' })).flags).to.deep.equal(['possible_duplicate', 'refused_before']);
    const csv = 'client_name,phone,store_name,products_name\nA,0677777777,S,Babouches\n';
    await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(csv).expect(200);
    const imported = await knex()('orders').where({ workspace_id: s.workspaceId, products_name: 'Babouches' }).first('flags');
    expect(imported.flags).to.deep.equal(['refused_before']);
  });

  it('the call page shows the counts and links the refused orders', async () => {
    const s = await shop();
    const a = await create(s, { phone: '0688888888', productsName: 'A', status: 'confirmed' });
    const b = await create(s, { phone: '0688888888', productsName: 'B', status: 'confirmed' });
    const c = await create(s, { phone: '0688888888', productsName: 'C', status: 'confirmed' });
    await deliver(s, a.id, 'refused', 30);
    await deliver(s, b.id, 'delivered', 20);
    await deliver(s, c.id, 'returned', 10);
    const order = await create(s, { phone: '0688888888', productsName: 'D' });
    expect(order.flags).to.deep.equal(['refused_before']);
    const next = await s.agent
      .post('/calls/next')
      .type('form')
      .send({ _csrf: csrfFrom((await s.agent.get('/calls').expect(200)).text) })
      .expect(303);
    const page = (await s.agent.get(next.headers.location).expect(200)).text;
    expect(page).to.include('badge-refused_before');
    expect(page).to.include('2 of the last 3 parcels refused or returned');
    expect(page).to.include(`href="/orders/${a.id}"`);
    expect(page).to.include(`href="/orders/${c.id}"`);
    const fr = (await s.agent.get(next.headers.location).set('Accept-Language', 'fr').expect(200)).text;
    expect(fr).to.include('2 sur les 3 derniers colis refusés ou retournés');
    // One parcel, refused: said so, not "1 of the last parcel".
    const single = await create(s, { phone: '0689898989', productsName: 'A', status: 'confirmed' });
    await deliver(s, single.id, 'refused', 5);
    const lone = await create(s, { phone: '0689898989', productsName: 'B' });
    const lonePage = (await s.agent.get(`/orders/${lone.id}`).expect(200)).text;
    expect(lonePage).to.include('The last parcel was refused or returned (180 days)');
    expect((await s.agent.get(`/orders/${lone.id}`).set('Accept-Language', 'fr').expect(200)).text).to.include(
      'Le dernier colis a été refusé ou retourné (180 jours)',
    );
    // The order page says the same.
    expect((await s.agent.get(`/orders/${order.id}`).expect(200)).text).to.include('2 of the last 3 parcels refused or returned');
  });
});
