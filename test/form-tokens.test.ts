import { expect } from 'chai';
import { csrfFrom, signUp } from './helpers/app';
import { testKnex } from './helpers/db';

/** Each creation form: the page that shows it, what it posts, where a repeat goes, and the rows it creates. */
const FORMS: Array<{ name: string; page: string; action: string; form: Record<string, string>; back: string; rows: (workspaceId: string) => Promise<number> }> =
  [
    {
      name: 'an API key',
      page: '/api-keys',
      action: '/api-keys',
      form: { name: 'Plugin' },
      back: '/api-keys',
      rows: async (w) => Number((await testKnex()('api_keys').where({ workspace_id: w }).count({ n: '*' }))[0].n),
    },
    {
      name: 'a store connection',
      page: '/stores/new?kind=custom',
      action: '/stores',
      form: { kind: 'custom', name: 'Sheet' },
      back: '/stores',
      rows: async (w) => Number((await testKnex()('store_connections').where({ workspace_id: w }).count({ n: '*' }))[0].n),
    },
    {
      name: 'an invitation',
      page: '/workspace',
      action: '/workspace/invitations',
      form: { email: 'colleague@example.ma' },
      back: '/workspace',
      rows: async (w) => Number((await testKnex()('invitations').where({ workspace_id: w }).count({ n: '*' }))[0].n),
    },
    {
      name: 'a webhook endpoint',
      page: '/webhooks',
      action: '/webhooks',
      form: { url: 'http://127.0.0.1:9/hooks', events: 'order.created' },
      back: '/webhooks',
      rows: async (w) => Number((await testKnex()('webhook_endpoints').where({ workspace_id: w }).count({ n: '*' }))[0].n),
    },
    {
      name: 'an agent',
      page: '/agents',
      action: '/agents',
      form: { name: 'Desk', kind: 'human' },
      back: '/agents',
      rows: async (w) => Number((await testKnex()('agents').where({ workspace_id: w, name: 'Desk' }).count({ n: '*' }))[0].n),
    },
    {
      name: 'a blocked number',
      page: '/settings',
      action: '/settings/blocked-phones',
      form: { phone: '0612345678' },
      back: '/settings',
      rows: async (w) => Number((await testKnex()('blocked_phones').where({ workspace_id: w }).count({ n: '*' }))[0].n),
    },
  ];

const onceFrom = (html: string, action: string) => {
  const form = html.slice(html.indexOf(`action="${action}"`));
  return /name="_once" value="([^"]+)"/.exec(form)![1];
};

describe('one-time form tokens: no creation form creates twice', () => {
  for (const f of FORMS) {
    it(`${f.name}: a reload of the post creates nothing and says the form was sent; a fresh form creates again`, async () => {
      const owner = await signUp();
      const page = await owner.agent.get(f.page).expect(200);
      const body = { _csrf: csrfFrom(page.text), _once: onceFrom(page.text, f.action), ...f.form };
      const first = await owner.agent.post(f.action).type('form').send(body);
      expect(first.status, first.text.slice(0, 300)).to.be.oneOf([200, 201, 303]);
      expect(await f.rows(owner.workspaceId!)).to.equal(1);
      // The same post again (a reload, a second tap): nothing more, and a notice.
      const again = await owner.agent.post(f.action).type('form').send(body).expect(303);
      expect(again.headers.location).to.equal(f.back);
      const shown = await owner.agent.get(f.back).expect(200);
      expect(shown.text).to.contain('This form was already sent');
      expect(await f.rows(owner.workspaceId!)).to.equal(1);
      // Two taps at once: one creation at most between them.
      const fresh = await owner.agent.get(f.page).expect(200);
      const twice: Record<string, string> = { ...body, _once: onceFrom(fresh.text, f.action) };
      if (f.action === '/settings/blocked-phones') twice.phone = '0661234567';
      if (f.action === '/workspace/invitations') twice.email = 'second@example.ma';
      if (f.action === '/agents') twice.name = 'Desk';
      await Promise.all([owner.agent.post(f.action).type('form').send(twice), owner.agent.post(f.action).type('form').send(twice)]);
      expect(await f.rows(owner.workspaceId!)).to.equal(2);
      expect(await testKnex()('form_tokens').where({ user_id: owner.userId })).to.have.length(2);
    });
  }

  it('a refused form uses no token: the corrected form with the same token creates', async () => {
    const owner = await signUp();
    const page = await owner.agent.get('/settings').expect(200);
    const body = { _csrf: csrfFrom(page.text), _once: onceFrom(page.text, '/settings/blocked-phones'), phone: 'not a phone' };
    await owner.agent.post('/settings/blocked-phones').type('form').send(body).expect(400);
    await owner.agent
      .post('/settings/blocked-phones')
      .type('form')
      .send({ ...body, phone: '0612345678' })
      .expect(303);
    expect(await testKnex()('blocked_phones').where({ workspace_id: owner.workspaceId })).to.have.length(1);
  });
});
