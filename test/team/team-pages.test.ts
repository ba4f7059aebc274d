import { expect } from 'chai';
import { csrfFrom, memberOf } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

/** The Team page's forms and the orders list's assignees, as plain form posts (no JavaScript). */
describe('team: the /team page and the orders list’s assignees', function () {
  this.timeout(60_000);

  it('the owner changes the assignment settings; a bad value comes back beside its field with the typed values kept, and nothing changes', async () => {
    const owner = await humanShop();
    const page = await owner.agent.get('/team').expect(200);
    expect(page.text).to.include('name="assignment" value="open" checked');
    const csrf = csrfFrom(page.text);
    const bad = await owner.agent
      .post('/team/settings')
      .type('form')
      .send({ _csrf: csrf, assignment: 'weighted', reserve_minutes: '0', follow_ups: 'on', currency: 'MAD' })
      .expect(400);
    expect(bad.text).to.match(/id="f-reserve_minutes-error"/);
    expect(bad.text).to.include('name="assignment" value="weighted" checked');
    expect(bad.text).to.match(/name="reserve_minutes"[^>]*value="0"/);
    expect(await testKnex()('team_settings').where({ workspace_id: owner.workspaceId }).first()).to.equal(undefined);
    await owner.agent.post('/team/settings').type('form').send({ _csrf: csrf, assignment: 'round_robin', reserve_minutes: '15', currency: 'MAD' }).expect(303);
    expect(await testKnex()('team_settings').where({ workspace_id: owner.workspaceId }).first()).to.include({
      assignment: 'round_robin',
      reserve_minutes: 15,
      follow_ups: false,
    });
  });

  it('the owner sets a member’s share and pay as typed ("1 500,50"), and a store’s confirmers; a member sees no forms and is refused', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    const csrf = csrfFrom((await owner.agent.get('/team').expect(200)).text);
    const bad = await owner.agent
      .post(`/team/members/${member.userId}`)
      .type('form')
      .send({ _csrf: csrf, share: '150', fixed: '1 500,50', per_confirmed: '', per_delivered: '' })
      .expect(400);
    expect(bad.text).to.include(`id="f-share-${member.userId}-error"`);
    expect(bad.text).to.match(new RegExp(`id="f-fixed-${member.userId}"[^>]*value="1 500,50"`));
    await owner.agent
      .post(`/team/members/${member.userId}`)
      .type('form')
      .send({ _csrf: csrf, share: '40', fixed: '1 500,50', per_confirmed: '', per_delivered: '10' })
      .expect(303);
    const row = await testKnex()('workspace_members').where({ user_id: member.userId }).first();
    expect({ share: row.share, fixed: Number(row.pay_fixed), perConfirmed: row.pay_per_confirmed, perDelivered: Number(row.pay_per_delivered) }).to.deep.equal({
      share: 40,
      fixed: 1500.5,
      perConfirmed: null,
      perDelivered: 10,
    });
    await owner.agent.post('/team/stores').type('form').send({ _csrf: csrf, store_name: 'Atlas', user_ids: member.userId }).expect(303);
    expect(await testKnex()('store_confirmers').where({ workspace_id: owner.workspaceId }).pluck('user_id')).to.deep.equal([member.userId]);
    const memberPage = await member.agent.get('/team').expect(200);
    expect(memberPage.text).not.to.include('action="/team/settings"');
    expect(memberPage.text).not.to.include('action="/team/members/');
    const memberCsrf = csrfFrom(memberPage.text);
    await member.agent.post('/team/settings').type('form').send({ _csrf: memberCsrf, assignment: 'weighted', reserve_minutes: '5' }).expect(403);
  });

  it('/orders shows each order’s assignee and filters by "mine"; the owner assigns the ticked orders; a member gets no selection', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    const [a, b] = [await createOrder(owner, { ...ORDER, clientName: 'Alpha' }), await createOrder(owner, { ...ORDER, clientName: 'Bravo' })];
    const list = await owner.agent.get('/orders').expect(200);
    expect(list.text).to.include(`name="order_ids" value="${a.id}"`);
    const res = await owner.agent
      .post('/orders/assign')
      .type('form')
      .send({ _csrf: csrfFrom(list.text), order_ids: [a.id], user_id: member.userId, back: '/orders' })
      .expect(303);
    expect(res.headers.location).to.equal('/orders');
    expect((await testKnex()('orders').where({ id: a.id }).first()).assigned_to).to.equal(member.userId);
    expect((await testKnex()('orders').where({ id: b.id }).first()).assigned_to).to.equal(null);
    const mine = await member.agent.get('/orders?assignee=mine').expect(200);
    expect(mine.text).to.include('<bdi>Alpha</bdi>');
    expect(mine.text).not.to.include('<bdi>Bravo</bdi>');
    expect(mine.text).to.include('→ Test User');
    expect(mine.text).not.to.include('name="order_ids"');
    const pool = await owner.agent.get('/orders?assignee=none').expect(200);
    expect(pool.text).to.include('<bdi>Bravo</bdi>');
    expect(pool.text).not.to.include('<bdi>Alpha</bdi>');
  });
});
